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

// Command demo runs the whole of Switchboard on this machine with no
// cluster and no accounts: a kube-apiserver and etcd on loopback (envtest),
// the CRDs, the sandbox, the manager and the webhook server as local
// processes wired together with --upstream, and config/samples applied. It
// prints `kubectl get switchboard -A`, writes .demo/kubeconfig, and stops
// everything it started on exit (KEEP=1 keeps it running until Ctrl-C).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

func main() {
	bin := flag.String("bin", "bin", "Directory holding the manager, webhook and sandbox binaries.")
	state := flag.String("dir", ".demo", "Directory for the kubeconfig and the process logs.")
	flag.Parse()

	d := &demo{bin: *bin, dir: *state}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := d.run(ctx)
	stop()
	d.cleanup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		fmt.Fprintf(os.Stderr, "process logs are in %s/\n", d.dir)
		os.Exit(1)
	}
}

type demo struct {
	bin, dir string
	env      *envtest.Environment
	procs    []*local.Process
	c        client.Client
	walk     scenario.Demo
	// kubeconfig is the administrator's; sandboxURL and webhookURL where
	// the sandbox and the webhook answer.
	kubeconfig, sandboxURL, webhookURL string
}

func (d *demo) run(ctx context.Context) error {
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return err
	}
	abs, _ := filepath.Abs(d.dir)
	d.dir = abs

	if err := d.controlPlane(); err != nil {
		return err
	}
	scenario.Step("installing the chart's ServiceAccounts and RBAC for a namespaced install")
	managerKC, webhookKC, err := d.installRBAC(ctx, d.kubeconfig)
	if err != nil {
		return err
	}
	if err := d.startAll(ctx, managerKC, webhookKC); err != nil {
		return err
	}

	scenario.Step("stocking a slide in the second watched namespace and one in an unwatched namespace")
	if err := d.otherTeams(ctx); err != nil {
		return err
	}
	if err := d.walk.Run(ctx, map[string]string{
		"SlideStock/" + unwatched + "/team-deck": "in a namespace the install does not watch: untouched",
	}); err != nil {
		return err
	}

	scenario.Step("a second watched team's stock is Ready, an unwatched team's untouched, and no RBAC refusal")
	if err := d.checkConfinement(ctx); err != nil {
		return err
	}
	if err := d.kubectlChecks(ctx); err != nil {
		return err
	}
	scenario.Step("helm template charts/switchboard | kubectl apply --dry-run=server -f -")
	if err := d.chartDryRun(ctx, d.kubeconfig); err != nil {
		return err
	}
	return d.finish(ctx)
}

// controlPlane starts etcd and kube-apiserver with the CRDs, writes the
// administrator's kubeconfig and makes the demo's client.
func (d *demo) controlPlane() error {
	scenario.Step("starting etcd and kube-apiserver on loopback")
	scheme := setup.Scheme()
	d.env = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	cfg, err := d.env.Start()
	if err != nil {
		return fmt.Errorf("start control plane (is KUBEBUILDER_ASSETS set? run 'make demo'): %w", err)
	}
	if d.kubeconfig, err = local.Kubeconfig(d.env, d.dir, "demo-admin"); err != nil {
		return err
	}
	if d.c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	scenario.Step("CRDs installed: %d", len(d.env.CRDs))
	return nil
}

// startAll starts the sandbox, versitygw, the manager and the webhook
// server, each confined to the watched namespaces and waited for; the
// manager and the webhook run with the kubeconfigs managerKC and
// webhookKC.
func (d *demo) startAll(ctx context.Context, managerKC, webhookKC string) error {
	scope := []string{"--watch-namespaces", strings.Join(watched, ","), "--state-namespace", releaseNamespace, "--link-namespace", releaseNamespace}
	// sandbox, webhook (public, metrics, probes), manager (metrics, probes):
	// all on one host, so each listener gets its own port.
	ports, err := local.FreePorts("127.0.0.1", 6)
	if err != nil {
		return err
	}
	d.sandboxURL = "http://" + ports[0]
	d.webhookURL = "http://" + ports[1]
	upstreams, err := d.startUpstreams(ctx, ports[0])
	if err != nil {
		return err
	}

	scenario.Step("starting the manager")
	mgrArgs := append([]string{"--kubeconfig", managerKC, "--metrics-bind-address", ports[2], "--health-probe-bind-address", ports[3],
		"--public-url", d.webhookURL}, append(scope, upstreams...)...)
	if err := d.startReady(ctx, "http://"+ports[3]+"/readyz", "manager", mgrArgs...); err != nil {
		return err
	}

	scenario.Step("starting the webhook server on %s", d.webhookURL)
	whArgs := append([]string{"--kubeconfig", webhookKC, "--bind-address", ports[1], "--public-url", d.webhookURL,
		"--metrics-bind-address", ports[4], "--health-probe-bind-address", ports[5]}, append(scope, upstreams...)...)
	return d.startReady(ctx, "http://"+ports[5]+"/readyz", "webhook", whArgs...)
}

// startUpstreams starts the sandbox on addr and versitygw, prepares the
// walk, and returns the --upstream flags that point the binaries at them.
func (d *demo) startUpstreams(ctx context.Context, addr string) ([]string, error) {
	scenario.Step("starting the sandbox on %s", d.sandboxURL)
	seedPath := filepath.Join(d.dir, "sandbox-seed.json")
	if err := os.WriteFile(seedPath, scenario.SandboxSeed(), 0o600); err != nil {
		return nil, err
	}
	if err := d.startReady(ctx, d.sandboxURL+"/_sandbox/routes", "sandbox", append([]string{"--addr", addr, "--seed", seedPath}, scenario.SandboxArgs()...)...); err != nil {
		return nil, err
	}
	var upstreams []string
	for _, f := range sandbox.UpstreamFlags(d.sandboxURL) {
		upstreams = append(upstreams, "--upstream", f)
	}

	scenario.Step("starting a real S3 server (versitygw, posix backend) on loopback")
	s3, err := testenv.StartS3()
	if err != nil {
		return nil, err
	}
	d.walk = scenario.Demo{C: d.c, SandboxURL: d.sandboxURL, WebhookURL: d.webhookURL, S3: s3}
	if err := d.walk.Prepare(ctx); err != nil {
		return nil, fmt.Errorf("versitygw: %w", err)
	}
	fmt.Printf("    %s\n", s3.Endpoint)
	// The last --upstream of a name wins: S3 is versitygw, not the sandbox.
	return append(upstreams, "--upstream", "s3="+s3.Endpoint), nil
}

// kubectlChecks lists the samples and explains a field with kubectl, as a
// person would.
func (d *demo) kubectlChecks(ctx context.Context) error {
	scenario.Step("kubectl get switchboard -A")
	out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", d.kubeconfig, "get", "switchboard", "-A").CombinedOutput()
	fmt.Print(string(out))
	if err != nil {
		return fmt.Errorf("kubectl get switchboard -A: %w", err)
	}
	if n := strings.Count(strings.TrimSpace(string(out)), "\n"); n < 7 {
		return fmt.Errorf("kubectl listed %d resources, want the 7 samples", n)
	}

	scenario.Step("kubectl explain slidestock.spec.url")
	out, err = exec.CommandContext(ctx, "kubectl", "--kubeconfig", d.kubeconfig, "explain", "slidestock.spec.url").CombinedOutput()
	fmt.Print(string(out))
	if err != nil {
		return fmt.Errorf("kubectl explain: %w", err)
	}
	if !bytes.Contains(out, []byte("URL of the presentation")) {
		return errors.New("kubectl explain shows no field description")
	}
	return nil
}

// finish says how to use the demo cluster, and keeps it running until
// Ctrl-C with KEEP=1.
func (d *demo) finish(ctx context.Context) error {
	fmt.Printf("\nUse the demo cluster with:\n  export KUBECONFIG=%s\n  kubectl get switchboard -A\n  kubectl explain slidestock.spec\n", d.kubeconfig)
	fmt.Printf("Sandbox: %s (calls: %s/_sandbox/calls)   Webhook: %s   Logs: %s/*.log\n", d.sandboxURL, d.sandboxURL, d.webhookURL, d.dir)
	if os.Getenv("KEEP") == "1" {
		fmt.Println("KEEP=1: running until Ctrl-C")
		<-ctx.Done()
		return nil
	}
	fmt.Println("Stopping (run with KEEP=1 to keep it running).")
	return nil
}

// startReady starts one of the binaries (start) and waits until readyURL
// answers 200, for a minute.
func (d *demo) startReady(ctx context.Context, readyURL, name string, args ...string) error {
	if err := d.start(name, args...); err != nil {
		return err
	}
	if err := local.WaitOK(ctx, readyURL, time.Minute); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// start runs one of the binaries, logging to <dir>/<name>.log.
func (d *demo) start(name string, args ...string) error {
	p, err := local.Start(d.bin, d.dir, name, nil, args...)
	if err != nil {
		return err
	}
	d.procs = append(d.procs, p)
	return nil
}

// cleanup stops every process the demo started, newest first, then the
// control plane.
func (d *demo) cleanup() {
	for i := len(d.procs) - 1; i >= 0; i-- {
		d.procs[i].Stop(10 * time.Second)
	}
	if d.walk.S3 != nil {
		if err := d.walk.S3.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop versitygw:", err)
		}
	}
	if d.env != nil {
		if err := d.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop control plane:", err)
		}
	}
}

// chartDryRun renders the Helm chart with its default values and has this
// control plane validate every object (server-side dry run): the chart a
// platform team installs is accepted by a real API server.
func (d *demo) chartDryRun(ctx context.Context, kubeconfig string) error {
	rendered, err := exec.CommandContext(ctx, filepath.Join(d.bin, "helm"), "template", "switchboard", filepath.Join("charts", "switchboard"),
		"--namespace", "switchboard-system").Output()
	if err != nil {
		return fmt.Errorf("helm template (run 'make helm'): %w", err)
	}
	apply := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "apply", "--dry-run=server", "-f", "-")
	apply.Stdin = bytes.NewReader(rendered)
	out, err := apply.CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl apply --dry-run=server: %w\n%s", err, out)
	}
	fmt.Printf("    %d objects accepted (server dry run)\n", strings.Count(string(out), "(server dry run)"))
	return nil
}
