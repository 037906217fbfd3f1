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

package binaries_test

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// TestAnAPIServerOutage is what the README's Configuration section says
// happens when the API server goes away: the webhook stays up but reports
// not ready, and the leader gives up its lease after the renew deadline and
// exits, for the kubelet to restart it.
func TestAnAPIServerOutage(t *testing.T) {
	// The binaries reach the API server through a proxy the test cuts: an
	// outage as the binaries see it, without stopping the shared one.
	px := newProxy(t, env.Config.Host)
	cfg := rest.CopyConfig(env.Config)
	cfg.Host = "https://" + px.addr()
	ns, err := env.Namespace("outage")
	if err != nil {
		t.Fatal(err)
	}
	kc := testenv.Kubeconfig(t, cfg)
	addrs := freeAddrs(t, 4)
	mgr := start(t, "manager", "--kubeconfig", kc, "--metrics-bind-address", "0", "--health-probe-bind-address", addrs[3],
		"--leader-elect", "--leader-election-namespace", ns,
		"--leader-election-lease-duration=6s", "--leader-election-renew-deadline=4s", "--leader-election-retry-period=1s")
	hook := start(t, "webhook", "--kubeconfig", kc, "--bind-address", addrs[0], "--metrics-bind-address", addrs[1],
		"--health-probe-bind-address", addrs[2], "--state-namespace", ns)
	waitFor(t, "both binaries ready", time.Minute, func() bool {
		return ok("http://"+addrs[3]+"/readyz") && ok("http://"+addrs[2]+"/readyz")
	}, mgr, hook)
	waitFor(t, "the manager to lead", 30*time.Second, func() bool {
		return strings.Contains(mgr.output(t), "Successfully acquired lease")
	}, mgr, hook)

	px.cut()
	outage := time.Now()

	var body string
	waitFor(t, "the webhook's /readyz to report the API server", 20*time.Second, func() bool {
		resp, err := http.Get("http://" + addrs[2] + "/readyz") //nolint:noctx // a local probe
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(body, "API server unreachable")
	}, hook)
	t.Logf("webhook not ready %s into the outage: %s", time.Since(outage).Round(100*time.Millisecond), strings.TrimSpace(body))
	if !ok("http://" + addrs[2] + "/healthz") {
		t.Fatal("the webhook's /healthz failed: the kubelet would restart a process that only waits for the API server")
	}

	waitFor(t, "the manager to give up leadership and exit", 30*time.Second, mgr.exited, hook)
	t.Logf("manager exited %s into the outage (renew deadline 4s)", time.Since(outage).Round(100*time.Millisecond))
	if code := mgr.cmd.ProcessState.ExitCode(); code == 0 {
		t.Fatalf("manager exited 0 after losing its lease; the kubelet restarts only failed containers under restartPolicy OnFailure")
	}
	if out := mgr.output(t); !strings.Contains(out, "leader election lost") {
		t.Fatalf("manager log does not say why it exited:\n%s", tail(out))
	}
	if hook.exited() {
		t.Fatalf("the webhook exited during the outage:\n%s", tail(hook.output(t)))
	}
}

// proxy forwards TCP connections to the API server until cut.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
}

func newProxy(t *testing.T, apiServer string) *proxy {
	t.Helper()
	u, err := url.Parse(apiServer)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: u.Host}
	go p.serve()
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
	}
}

// cut refuses new connections and drops the open ones.
func (p *proxy) cut() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}
