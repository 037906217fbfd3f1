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

// Command e2e brings up a real single-node Kubernetes on this machine with
// no Docker and no registry, installs Switchboard into it with Helm, drives
// it through the webhook's Service, runs a platform team's operations on
// it, and tears everything down (make e2e; docs/e2e.md):
//
//   - etcd and kube-apiserver (envtest's builds), kube-controller-manager,
//     kube-scheduler, kubelet and kube-proxy (hack/envtest.sh node), and
//     containerd with runc and the bridge CNI plugin (Debian's packages),
//     as processes with their state and logs in the work directory;
//   - the pause image and Switchboard's images imported into containerd
//     (ctr -n k8s.io images import);
//   - the sandbox and versitygw on the host, on the bridge address pods
//     reach (docs/e2e.md says why not as pods);
//   - helm install of charts/switchboard, both Deployments Available
//     through their probes, one SlideStock Ready and the webhook's JSON
//     404 through the Service's ClusterIP (kube-proxy's rules);
//   - make demo's walk through every kind (hack/internal/scenario), every
//     request through the webhook Service's node port;
//   - helm upgrade to a new tag, the manager leader's loss, a webhook
//     Pod's eviction, uninstall and install again, each under a load
//     whose accepted events must land exactly once (ops.go, load.go);
//   - the tear-down, then a comparison of the host's processes, mounts,
//     cgroups, network namespaces, firewall rules, links, routes, sysctls
//     and default state paths with a listing taken before the run: any
//     difference fails the run.
//
// `e2e down` tears down what a run that died left behind (the pids file
// and the listing it saved in the work directory) and runs the same
// comparison. Must run as root.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

type e2e struct {
	p paths
	// bin holds sandbox, versitygw and helm; controlPlane etcd and
	// kube-apiserver; node the other Kubernetes programs.
	bin, controlPlane, node string
	images, pause           string
	keep                    bool

	before hostState
	procs  map[string]*proc
	order  []string
	c      client.Client
	// sandboxURL is the sandbox's base URL; s3 the versitygw.
	sandboxURL string
	s3         *testenv.S3
	// load is the traffic the platform operations run under.
	load *load
	// timings of each step, printed at the end.
	timings []timing
}

type timing struct {
	step string
	took time.Duration
}

func main() {
	e := &e2e{procs: map[string]*proc{}}
	work := flag.String("work", "/var/tmp/switchboard-e2e", "Work directory: the node's state (removed at the end) and logs/ (kept).")
	flag.StringVar(&e.bin, "bin", "bin", "Directory holding sandbox, versitygw and helm (make build versitygw helm).")
	flag.StringVar(&e.controlPlane, "control-plane", "", "Directory holding etcd and kube-apiserver (hack/envtest.sh prints it).")
	flag.StringVar(&e.node, "node", "", "Directory holding kube-controller-manager, kube-scheduler, kube-proxy, kubelet and kubectl (hack/envtest.sh node prints it).")
	flag.StringVar(&e.images, "images", "dist/images", "Directory of the image tarballs make images builds.")
	flag.StringVar(&e.pause, "pause", "dist/e2e/pause.tar", "The pause image tarball (hack/e2e/pause-image.sh).")
	flag.BoolVar(&e.keep, "keep", os.Getenv("KEEP") == "1", "Keep the cluster running until Ctrl-C (KEEP=1).")
	flag.Parse()
	abs, err := filepath.Abs(*work)
	if err != nil {
		fail(err)
	}
	e.p = paths{work: abs}
	if os.Geteuid() != 0 {
		fail(errors.New("must run as root: the node mounts, makes cgroups, network namespaces, a bridge and iptables rules"))
	}

	if flag.Arg(0) == "down" {
		if err := e.downOnly(); err != nil {
			fail(err)
		}
		return
	}

	// Nothing is torn down when the machine is not clean to begin with:
	// what is there may be another run's.
	if err := e.preflight(); err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	start := time.Now()
	runErr := e.run(ctx)
	stop()
	// The tear-down runs to its end: a second Ctrl-C would leave the host
	// half cleaned ('make e2e-down' is there for kill -9).
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	if runErr != nil {
		fmt.Fprintf(os.Stderr, "\ne2e FAILED: %v\nlogs: %s\n", runErr, e.p.logs())
	}
	scenario.Step("tearing down")
	t := time.Now()
	downErr := e.teardown()
	e.timings = append(e.timings, timing{"tear-down and host check", time.Since(t)})
	fmt.Println("\ntimings:")
	for _, t := range e.timings {
		fmt.Printf("  %-56s %6.1fs\n", t.step, t.took.Seconds())
	}
	fmt.Printf("  %-56s %6.1fs\n", "total", time.Since(start).Seconds())
	if downErr != nil {
		fmt.Fprintf(os.Stderr, "tear-down FAILED: %v\n(the listing from before stays in %s for 'make e2e-down')\n", downErr, e.p.work)
	} else {
		_ = os.Remove(e.p.at("host-before.json"))
	}
	if runErr != nil || downErr != nil {
		os.Exit(1)
	}
	fmt.Println("e2e passed")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "e2e:", err)
	os.Exit(1)
}

// timed runs f as one step of the run, with its duration recorded.
func (e *e2e) timed(name string, f func() error) error {
	scenario.Step("%s", name)
	t := time.Now()
	err := f()
	e.timings = append(e.timings, timing{name, time.Since(t)})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func (e *e2e) run(ctx context.Context) error {
	steps := []struct {
		name string
		f    func(context.Context) error
	}{
		{"certificates, kubeconfigs and configuration files", func(context.Context) error { return e.configure() }},
		{"the bridge " + bridgeName + " and the Service route", func(context.Context) error { return e.bridge() }},
		{"etcd and kube-apiserver", e.controlPlaneUp},
		{"kube-controller-manager and kube-scheduler", e.controllersUp},
		{"containerd and the images", e.containerdUp},
		{"kubelet and kube-proxy, node Ready", e.nodeUp},
		{"the sandbox and versitygw on " + hostIP, e.upstreamsUp},
		{"helm install charts/switchboard, Deployments Available", e.install},
		{"smoke check through the webhook Service", e.smoke},
		{"every kind end to end through the webhook's node port", e.walk},
		{"helm upgrade to a new image tag, under load", e.upgrade},
		{"the manager leader's Pod deleted, under load", e.leaderLoss},
		{"a webhook Pod evicted, under load", e.webhookLoss},
		{"helm uninstall, helm install again", e.reinstall},
	}
	for _, s := range steps {
		if err := e.timed(s.name, func() error { return s.f(ctx) }); err != nil {
			return err
		}
	}
	if e.keep {
		fmt.Printf("\nKEEP=1: running until Ctrl-C.\n  export KUBECONFIG=%s\n  %s get pods -A\n", e.p.kubeconfig("admin"), filepath.Join(e.node, "kubectl"))
		<-ctx.Done()
	}
	return nil
}

// preflight refuses to start over what an earlier run left.
func (e *e2e) preflight() error {
	var left []string
	if procs := ourProcesses(e.p.work); len(procs) > 0 {
		left = append(left, procs...)
	}
	if exec.Command("ip", "link", "show", bridgeName).Run() == nil {
		left = append(left, "the link "+bridgeName)
	}
	if len(kubepodsCgroups()) > 0 {
		left = append(left, "kubepods cgroups")
	}
	for _, tool := range []string{"iptables-save", "ip6tables-save"} {
		if chainRemoval(run(tool)) != "" {
			left = append(left, tool+" lists KUBE-/CNI- chains")
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("the machine holds what an earlier node left (run 'make e2e-down'):\n  %s", strings.Join(left, "\n  "))
	}
	for _, d := range []string{e.controlPlane, e.node} {
		if d == "" {
			return errors.New("--control-plane and --node are required (run 'make e2e')")
		}
	}
	if err := removeWork(e.p); err != nil {
		return err
	}
	if err := os.MkdirAll(e.p.logs(), 0o755); err != nil {
		return err
	}
	// Earlier runs' logs go; this run's are appended to fresh files.
	old, _ := filepath.Glob(filepath.Join(e.p.logs(), "*.log"))
	for _, f := range append(old, filepath.Join(e.p.logs(), "pods")) {
		_ = os.RemoveAll(f)
	}
	e.before = snapshot(e.p.work)
	b, _ := json.MarshalIndent(e.before, "", " ")
	return os.WriteFile(e.p.at("host-before.json"), b, 0o600)
}

func (e *e2e) configure() error {
	if err := makePKI(e.p); err != nil {
		return err
	}
	if err := writeConfigs(e.p); err != nil {
		return err
	}
	fmt.Println("    " + describeNetwork())
	return nil
}

// bridge makes cni0 with the host's address on the pod network before
// anything listens on that address; the bridge CNI plugin adds the pods'
// veths to it.
func (e *e2e) bridge() error {
	for _, args := range [][]string{
		{"link", "add", bridgeName, "type", "bridge"},
		{"addr", "add", hostIP + "/24", "dev", bridgeName},
		{"link", "set", bridgeName, "up"},
		{"route", "add", serviceCIDR, "dev", bridgeName, "src", hostIP},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// start runs a program of the node and remembers it for the tear-down.
func (e *e2e) start(name, bin string, args []string) (*proc, error) {
	pr, err := startProc(e.p, name, bin, args)
	if err != nil {
		return nil, err
	}
	e.procs[name] = pr
	e.order = append(e.order, name)
	return pr, nil
}

// waitHTTP polls url until it answers 200 (TLS unverified: these are the
// components' own health endpoints on loopback), failing early when the
// program exits.
func waitHTTP(ctx context.Context, pr *proc, url string, timeout time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback health checks of programs this run started
	return waitFor(ctx, timeout, pr.name, func() (bool, error) {
		if pr.exited() {
			return false, pr.exitError()
		}
		resp, err := hc.Get(url)
		if err != nil {
			return false, err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("%s answered %d", url, resp.StatusCode)
		}
		return true, nil
	})
}

func freePort(host string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

func (e *e2e) controlPlaneUp(ctx context.Context) error {
	clientPort, err := freePort("127.0.0.1")
	if err != nil {
		return err
	}
	peer, err := freePort("127.0.0.1")
	if err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + clientPort
	etcd, err := e.start("etcd", filepath.Join(e.controlPlane, "etcd"), []string{
		"--name=e2e", "--data-dir=" + e.p.at("etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=http://127.0.0.1:" + peer, "--initial-advertise-peer-urls=http://127.0.0.1:" + peer,
		"--initial-cluster=e2e=http://127.0.0.1:" + peer,
		// A throwaway cluster: its data need not survive a power cut.
		"--unsafe-no-fsync=true",
	})
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, etcd, etcdURL+"/health", time.Minute); err != nil {
		return err
	}
	api, err := e.start("kube-apiserver", filepath.Join(e.controlPlane, "kube-apiserver"), apiserverArgs(e.p, etcdURL))
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, api, "https://"+net.JoinHostPort(hostIP, apiserverPort)+"/readyz", 3*time.Minute); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", e.p.kubeconfig("admin"))
	if err != nil {
		return err
	}
	e.c, err = client.New(cfg, client.Options{Scheme: setup.Scheme()})
	return err
}

func (e *e2e) controllersUp(ctx context.Context) error {
	kcm, err := e.start("kube-controller-manager", filepath.Join(e.node, "kube-controller-manager"), controllerManagerArgs(e.p))
	if err != nil {
		return err
	}
	sched, err := e.start("kube-scheduler", filepath.Join(e.node, "kube-scheduler"), schedulerArgs(e.p))
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, kcm, "https://127.0.0.1:10257/healthz", 2*time.Minute); err != nil {
		return err
	}
	return waitHTTP(ctx, sched, "https://127.0.0.1:10259/healthz", 2*time.Minute)
}

// ctr runs containerd's client against this node's containerd.
func (e *e2e) ctr(args ...string) (string, error) {
	out, err := exec.Command("ctr", append([]string{"--address", e.p.containerdSock()}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func (e *e2e) containerdUp(ctx context.Context) error {
	ctrd, err := e.start("containerd", "containerd", []string{"--config", e.p.at("containerd", "config.toml")})
	if err != nil {
		return err
	}
	if err := waitFor(ctx, time.Minute, "containerd", func() (bool, error) {
		if ctrd.exited() {
			return false, ctrd.exitError()
		}
		_, err := e.ctr("version")
		return err == nil, err
	}); err != nil {
		return err
	}
	tars, _ := filepath.Glob(filepath.Join(e.images, "*.tar"))
	if len(tars) == 0 {
		return fmt.Errorf("no image tarballs in %s (run 'make images')", e.images)
	}
	for _, tar := range append([]string{e.pause}, tars...) {
		out, err := e.ctr("-n", "k8s.io", "images", "import", tar)
		if err != nil {
			return err
		}
		fmt.Printf("    %s: %s\n", filepath.Base(tar), strings.TrimSpace(out))
	}
	out, err := e.ctr("-n", "k8s.io", "images", "ls", "-q")
	if err != nil {
		return err
	}
	var names []string
	for _, n := range strings.Fields(out) {
		if !strings.HasPrefix(n, "sha256:") {
			names = append(names, n)
		}
	}
	fmt.Printf("    images: %s\n", strings.Join(names, " "))
	return nil
}

func (e *e2e) nodeUp(ctx context.Context) error {
	kubelet, err := e.start("kubelet", filepath.Join(e.node, "kubelet"), kubeletArgs(e.p))
	if err != nil {
		return err
	}
	proxy, err := e.start("kube-proxy", filepath.Join(e.node, "kube-proxy"), []string{"--config=" + e.p.at("kube-proxy.yaml"), "--v=1"})
	if err != nil {
		return err
	}
	// kube-proxy is proven by the smoke check, which reaches a ClusterIP.
	return waitFor(ctx, 3*time.Minute, "node "+nodeName+" Ready", func() (bool, error) {
		for _, pr := range []*proc{kubelet, proxy} {
			if pr.exited() {
				return false, pr.exitError()
			}
		}
		var n corev1.Node
		if err := e.c.Get(ctx, client.ObjectKey{Name: nodeName}, &n); err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				if c.Status == corev1.ConditionTrue {
					return true, nil
				}
				return false, fmt.Errorf("condition Ready=%s: %s", c.Status, c.Message)
			}
		}
		return false, errors.New("no Ready condition yet")
	})
}

// kubectl runs the node's kubectl as the administrator.
func (e *e2e) kubectl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(e.node, "kubectl"), append([]string{"--kubeconfig", e.p.kubeconfig("admin")}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// httpGet reads url's status and body.
func httpGet(ctx context.Context, url string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}
