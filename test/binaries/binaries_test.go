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

// Package binaries_test builds cmd/manager and cmd/webhook and runs them as
// a person would: their --help, their start-up checks, and their logs at
// the highest verbosity against a real API server.
package binaries_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/testenv"
)

var (
	env *testenv.Env
	// bin holds the built manager and webhook.
	bin string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "switchboard-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	testenv.Main(m, &env, func(*testenv.Env) (func(), error) {
		root, err := testenv.RepoRoot()
		if err != nil {
			return nil, err
		}
		for _, name := range []string{"manager", "webhook"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(bin, name), "./cmd/"+name) //nolint:noctx // a build before any test
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("go build ./cmd/%s: %w\n%s", name, err, out)
			}
		}
		return func() { _ = os.RemoveAll(bin) }, nil
	})
}

// run runs a binary to completion and returns its exit code and output.
func run(t *testing.T, name string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(bin, name), args...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	default:
		t.Fatalf("%s %v: %v", name, args, err)
		return 0, ""
	}
}

func TestHelpPrintsEveryFlagAndNoPanic(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"manager", []string{"-metrics-bind-address", "-health-probe-bind-address", "-leader-election-lease-duration",
			"-leader-election-renew-deadline", "-leader-election-retry-period", "-upstream", "-zap-log-level", "-kube-api-qps", "-kube-api-burst"}},
		{"webhook", []string{"-bind-address", "-metrics-bind-address", "-health-probe-bind-address", "-upstream", "-zap-log-level",
			"-kube-api-qps", "-kube-api-burst", "-signup-starts-per-address", "-signup-starts", "-signup-pending"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := run(t, tc.name, "--help")
			if code != 0 {
				t.Fatalf("--help exited %d:\n%s", code, out)
			}
			// flag.PrintDefaults reports a String method that panics as
			// "panic calling String method on zero …"; a crash prints "panic:".
			// ("panic" alone is one of zap's level names.)
			for _, bad := range []string{"panic calling", "panic:", "goroutine "} {
				if strings.Contains(out, bad) {
					t.Fatalf("--help printed a panic (%q):\n%s", bad, out)
				}
			}
			if !strings.HasPrefix(out, "Usage: "+tc.name) {
				t.Fatalf("--help does not start with its usage line:\n%s", out)
			}
			for _, f := range tc.flags {
				if !strings.Contains(out, "  "+f+" ") && !strings.Contains(out, "  "+f+"\n") {
					t.Errorf("--help does not describe %s", f)
				}
			}
		})
	}
}

func TestManagerRefusesLeaderElectionTimingsThatCannotWork(t *testing.T) {
	code, out := run(t, "manager", "--leader-election-lease-duration=15s", "--leader-election-renew-deadline=20s")
	if code != 2 || !strings.Contains(out, "--leader-election-renew-deadline (20s) must be shorter than --leader-election-lease-duration (15s)") {
		t.Fatalf("exit %d, output:\n%s\nwant exit 2 naming both flags", code, out)
	}
}

// Both binaries refuse a client limit that cannot mean anything at start,
// naming the flag, before they reach the API server.
func TestBothBinariesRefuseAKubeAPIBurstWithoutAQPS(t *testing.T) {
	for _, bin := range []string{"manager", "webhook"} {
		code, out := run(t, bin, "--kube-api-burst=5")
		if code != 2 || !strings.Contains(out, "--kube-api-burst 5 needs --kube-api-qps") {
			t.Errorf("%s: exit %d, output:\n%s\nwant exit 2 naming the flag", bin, code, out)
		}
	}
}

// kubeconfig writes env's administrator credentials for the binaries.
func kubeconfig(t *testing.T) string {
	t.Helper()
	return testenv.Kubeconfig(t, env.Config)
}

// freeAddrs returns n loopback addresses that were free a moment ago.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, ln.Addr().String())
		defer ln.Close()
	}
	return addrs
}

// process is a binary running in its own process group, its stdout and
// stderr going to one file.
type process struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

func start(t *testing.T, name string, args ...string) *process {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, name), args...) //nolint:noctx // stopped by stop, with SIGTERM first
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); _ = f.Close(); close(p.done) }()
	t.Cleanup(p.stop)
	return p
}

// stop sends SIGTERM to the process group and waits, with SIGKILL after 15 s.
func (p *process) stop() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

func (p *process) output(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(p.log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitFor polls cond until it holds, failing the test after timeout or when
// one of procs exits.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool, procs ...*process) {
	t.Helper()
	if _, ok := testenv.Poll(timeout, 100*time.Millisecond, func() (bool, string) {
		if cond() {
			return true, ""
		}
		for _, p := range procs {
			if p.exited() {
				t.Fatalf("%s exited while waiting for %s:\n%s", p.name, what, tail(p.output(t)))
			}
		}
		return false, ""
	}); !ok {
		for _, p := range procs {
			t.Logf("%s log:\n%s", p.name, tail(p.output(t)))
		}
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

func tail(s string) string {
	const n = 8 << 10
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func ok(url string) bool {
	resp, err := http.Get(url) //nolint:noctx // a local probe
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// linesWith counts the log lines holding every one of parts.
func linesWith(log string, parts ...string) int {
	n := 0
	for line := range strings.SplitSeq(log, "\n") {
		all := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				all = false
				break
			}
		}
		if all {
			n++
		}
	}
	return n
}
