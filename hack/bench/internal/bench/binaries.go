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
	var metrics string
	p, err := startOnSandbox(ctx, env, bin, "manager", sandboxURL, func(port string) []string {
		metrics = port
		return append([]string{"--metrics-bind-address", port}, extra...)
	})
	return p, "http://" + metrics + "/metrics", err
}

// StartWebhook starts the webhook binary as a pod runs it (a process, a
// client and a cache of its own), pointed at the sandbox, with the
// per-client rate limit off (every benchmark client shares 127.0.0.1), no
// metrics listener, and the OAuth state Secrets in stateNamespace, and
// waits until it is ready; it returns the process and the base URL of its
// public listener.
func StartWebhook(ctx context.Context, env *envtest.Environment, bin, sandboxURL, stateNamespace string) (*local.Process, string, error) {
	var public string
	p, err := startOnSandbox(ctx, env, bin, "webhook", sandboxURL, func(port string) []string {
		public = "http://" + port
		return []string{"--bind-address", port, "--public-url", public, "--metrics-bind-address", "0", "--rate-limit", "0",
			"--state-namespace", stateNamespace, "--shutdown-delay", "0s"}
	})
	return p, public, err
}

// startOnSandbox starts the binary name with the flags args makes of a
// free loopback port, every upstream pointed at the sandbox, and its
// probes on another free port, and waits at most 30 s until it is ready.
func startOnSandbox(ctx context.Context, env *envtest.Environment, bin, name, sandboxURL string, args func(port string) []string) (*local.Process, error) {
	ports, err := local.FreePorts("127.0.0.1", 2)
	if err != nil {
		return nil, err
	}
	flags := args(ports[0])
	for _, f := range sandbox.UpstreamFlags(sandboxURL) {
		flags = append(flags, "--upstream", f)
	}
	return StartBinary(ctx, env, bin, name, ports[1], 30*time.Second, nil, flags...)
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
