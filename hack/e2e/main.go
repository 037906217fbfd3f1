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
//   - the pause image, the current release's images (make release) and
//     the previous release's (hack/e2e/previous-release.sh: an earlier
//     commit of main built from git) imported into containerd
//     (ctr -n k8s.io images import);
//   - the sandbox and versitygw on the host, on the bridge address pods
//     reach (docs/e2e.md says why not as pods);
//   - the release namespace enforcing Pod Security restricted, shown
//     refusing a root pod (previous.go);
//   - helm install of the previous release there, both Deployments
//     Available through their probes, one SlideStock Ready and the
//     webhook's JSON 404 through the Service's ClusterIP (kube-proxy's
//     rules);
//   - make demo's walk through every kind the previous release has
//     (hack/internal/scenario), every request through the webhook
//     Service's node port;
//   - the current release served by a loopback registry, its chart's and
//     images' signatures and provenance verified with cosign (publish.go);
//   - helm upgrade to the signed chart by digest, the manager leader's
//     loss, a webhook Pod's eviction, uninstall and install again, each
//     under a load whose accepted events must land exactly once (ops.go
//     and a file each: previous.go, leaderloss.go, webhookloss.go,
//     reinstall.go; load.go); after the upgrade every object of the
//     previous release is kept unchanged and the new kind is signed up
//     through (walk.go);
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
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
	"github.com/switchboard-dev/switchboard/internal/signed"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

type e2e struct {
	p paths
	// bin holds sandbox, versitygw and helm; controlPlane etcd and
	// kube-apiserver; node the other Kubernetes programs.
	bin, controlPlane, node string
	pause                   string
	// previous is the previous release's directory
	// (hack/e2e/previous-release.sh); release the current release's
	// (make release), whose signed chart and images the run verifies
	// and installs from a loopback registry.
	previous, release string
	// chart is where the current chart is installed from: the loopback
	// registry by digest once publish has verified it; registry serves it.
	chart    chartRef
	registry *signed.Registry
	keep     bool

	before hostState
	procs  map[string]*local.Process
	order  []string
	c      client.Client
	// sandboxURL is the sandbox's base URL; s3 the versitygw.
	sandboxURL string
	s3         *testenv.S3
	// demo is the walk (walkDemo).
	demo *scenario.Demo
	// load is the traffic the platform operations run under.
	load *load
	// timings of each step, printed at the end.
	timings []timing
}

type timing struct {
	step string
	took time.Duration
}

// pollEvery is how often the run checks what it waits for (poll.Until).
const pollEvery = 200 * time.Millisecond

func main() {
	e := &e2e{procs: map[string]*local.Process{}, chart: chartRef{ref: filepath.Join("charts", "switchboard")}}
	work := flag.String("work", "/var/tmp/switchboard-e2e", "Work directory: the node's state (removed at the end) and logs/ (kept).")
	flag.StringVar(&e.bin, "bin", "bin", "Directory holding sandbox, versitygw and helm (make build versitygw helm).")
	flag.StringVar(&e.controlPlane, "control-plane", "", "Directory holding etcd and kube-apiserver (hack/envtest.sh prints it).")
	flag.StringVar(&e.node, "node", "", "Directory holding kube-controller-manager, kube-scheduler, kube-proxy, kubelet and kubectl (hack/envtest.sh node prints it).")
	flag.StringVar(&e.previous, "previous", "", "The previous release's directory, its chart and images (hack/e2e/previous-release.sh prints it).")
	flag.StringVar(&e.release, "release", "dist/release", "The current release's directory (make release).")
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
	downErr := e.tearDownTimed(start)
	if runErr != nil {
		// Again last: CI shows a run's tail, and the cause scrolled away
		// behind the tear-down's lines.
		fmt.Fprintf(os.Stderr, "e2e FAILED: %v\n", runErr)
	}
	if runErr != nil || downErr != nil {
		os.Exit(1)
	}
	fmt.Println("e2e passed")
}

// tearDownTimed tears down, records how long it took and prints every
// step's time since start; the listing from before the run stays for
// 'make e2e-down' if the tear-down failed.
func (e *e2e) tearDownTimed(start time.Time) error {
	scenario.Step("tearing down")
	t := time.Now()
	err := e.teardown()
	e.timings = append(e.timings, timing{"tear-down and host check", time.Since(t)})
	e.printTimings(start)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tear-down FAILED: %v\n(the listing from before stays in %s for 'make e2e-down')\n", err, e.p.work)
	} else {
		_ = os.Remove(e.p.at("host-before.json"))
	}
	return err
}

// printTimings prints each step's duration and the run's since start.
func (e *e2e) printTimings(start time.Time) {
	fmt.Println("\ntimings:")
	for _, t := range e.timings {
		fmt.Printf("  %-56s %6.1fs\n", t.step, t.took.Seconds())
	}
	fmt.Printf("  %-56s %6.1fs\n", "total", time.Since(start).Seconds())
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
		{"the release namespace enforcing Pod Security restricted", e.restricted},
		{"helm install of the previous release (" + e.previousCommit() + "), Deployments Available", e.installPrevious},
		{"smoke check through the webhook Service", e.smoke},
		{"every kind of the previous release end to end through the webhook's node port", e.walk},
		{"the signed chart and images verified and served by a loopback registry", e.publish},
		{"helm upgrade to the signed chart by digest, under load: nothing lost, pruned or done twice", e.upgrade},
		{"a researcher signs up: the kind the previous release did not have", e.signUp},
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
