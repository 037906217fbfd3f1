/*
Copyright 2026 The Switchboard Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package bench

import (
	"context"
	"fmt"
	"os"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// StartManager starts the manager binary with default settings (and
// extra flags), pointed at the sandbox, and waits until it is ready; it
// returns the process and the URL of its metrics.
func StartManager(ctx context.Context, env *envtest.Environment, bin, sandboxURL string, extra ...string) (*local.Process, string, error) {
	ports, err := local.FreePorts("127.0.0.1", 2)
	if err != nil {
		return nil, "", err
	}
	args := append([]string{"--metrics-bind-address", ports[0]}, extra...)
	for _, f := range sandbox.UpstreamFlags(sandboxURL) {
		args = append(args, "--upstream", f)
	}
	p, err := StartBinary(ctx, env, bin, "manager", ports[1], 30*time.Second, nil, args...)
	if err != nil {
		return nil, "", err
	}
	return p, "http://" + ports[0] + "/metrics", nil
}

// StartBinary starts the binary name of bin with a kubeconfig of its own
// (in a new directory, which also holds its log) and its probes on
// readyAddr, in this process's environment plus environ (may be nil), and
// waits at most wait until it is ready.
func StartBinary(ctx context.Context, env *envtest.Environment, bin, name, readyAddr string, wait time.Duration, environ []string, args ...string) (*local.Process, error) {
	dir, err := os.MkdirTemp("", "switchboard-bench-"+name)
	if err != nil {
		return nil, err
	}
	kc, err := local.Kubeconfig(env, dir, "bench-"+name)
	if err != nil {
		return nil, err
	}
	p, err := local.Start(bin, dir, name, environ, append([]string{"--kubeconfig", kc, "--health-probe-bind-address", readyAddr}, args...)...)
	if err != nil {
		return nil, err
	}
	if err := local.WaitOK(ctx, "http://"+readyAddr+"/readyz", wait); err != nil {
		p.Stop(10 * time.Second)
		return nil, fmt.Errorf("%s (log %s): %w", name, p.Log, err)
	}
	return p, nil
}
