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

// Package local runs Switchboard's binaries, and the programs of the e2e's
// node, as local processes: the demo's and the benchmarks' beside an
// envtest control plane, the e2e's as the node itself.
package local

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/switchboard-dev/switchboard/hack/internal/poll"
)

// FreePorts returns n addresses on host (an IP address) whose ports were
// free a moment ago, each a different port.
func FreePorts(host string, n int) ([]string, error) {
	var addrs []string
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}

// WaitOK polls u until it answers 200.
func WaitOK(ctx context.Context, u string, timeout time.Duration) error {
	return poll.Until(ctx, u, 100*time.Millisecond, timeout, func() (bool, error) {
		resp, err := http.Get(u)
		if err != nil {
			return false, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Errorf("answered %d", resp.StatusCode)
	})
}

// Kubeconfig writes an administrator's kubeconfig for the control plane
// into dir and returns its path.
func Kubeconfig(env *envtest.Environment, dir, user string) (string, error) {
	u, err := env.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, kc, 0o600)
}
