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

// Package memory is the memory benchmark (-suite memory): the manager and
// webhook binaries, as the chart runs them (one Deployment each; watching
// the benchmark's namespace, which holds every object), with objects of
// every kind but NotionSignup at once, and each binary's resident set and live heap
// (after a collection) at three points of one run:
//
//   - idle, no Switchboard object: the baseline;
//   - -mem-first (1,000) of each kind, every one reconciled;
//   - -mem-objects (10,000) of each kind, every one reconciled: 70,000
//     objects plus the Secrets the manager writes for them (a connect
//     Secret per unconnected parent, a share Secret and short-token object
//     per minted link).
//
// The objects are as a fresh install's users leave them before connecting
// their grants: SlideStocks stocked (Ready), links minted on versitygw
// (Ready), NotionIntegrations, CalendarWatches and SheetConnections
// waiting for a person to connect (a connect link each, the token Secret
// missing: Stalled), and a PaperSync and a SheetSync for each of those
// parents, waiting for it. Connected parents would keep one more Secret
// each (the token), which the manager's cache holds as it holds the
// connect Secret.
//
// Each binary runs as it does in a container with a memory limit
// (-mem-limits, the chart's resources.limits.memory): with the soft limit it sets from
// its cgroup (setup.SoftMemoryLimit), given here as GOMEMLIMIT. The
// default limits are the goals, 300Mi and 150Mi; "none" runs
// both without a soft limit, the heap free to grow to twice what is live.
package memory

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// Suite is the memory benchmark (-suite memory).
type Suite struct {
	o      memoryOptions
	limits string
}

// Name is the suite's -suite name.
func (*Suite) Name() string { return "memory" }

// BindFlags registers the -mem- flags.
func (s *Suite) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.o.first, "mem-first", 1000, "Objects of each kind at the memory benchmark's first reading.")
	fs.IntVar(&s.o.objects, "mem-objects", 10000, "Objects of each kind at the memory benchmark's second reading (every kind but NotionSignup, at once).")
	fs.StringVar(&s.o.profileDir, "mem-profile", "", "Directory for each binary's heap profile at each reading of the memory benchmark (go tool pprof); empty takes none.")
	fs.StringVar(&s.limits, "mem-limits", "300Mi,150Mi", "Container memory limits of the manager and the webhook in the memory benchmark (each binary's soft limit, GOMEMLIMIT, is what it sets from its cgroup: 90 %, and 64 MiB below at the least); \"none\" runs both without.")
	fs.DurationVar(&s.o.settle, "mem-settle", time.Hour, "How long the memory benchmark waits for the objects of one reading to be reconciled once they are created.")
}

// Run runs the benchmark on e's control plane, the binaries watching
// only its namespace under -suite all.
func (s *Suite) Run(e bench.Env) error {
	o := s.o
	o.ownNamespace = e.All
	var err error
	if o.managerLimit, o.webhookLimit, err = parseMemLimits(s.limits); err != nil {
		return err
	}
	return benchMemory(e.ControlPlane, e.Config, e.Bin, o)
}

// memoryOptions size the memory benchmark.
type memoryOptions struct {
	first, objects int
	// profileDir, when set, receives each binary's heap profile at each
	// reading (their --pprof-bind-address).
	profileDir string
	// managerLimit and webhookLimit are the containers' memory limits in
	// bytes (0: none).
	managerLimit, webhookLimit int64
	// settle is how long the objects of one reading may take to be
	// reconciled once created.
	settle time.Duration
	// ownNamespace has both binaries watch only the benchmark's namespace
	// (--watch-namespaces): under -suite all the other suites' objects are
	// still on the API server. Alone, the suite runs them as the chart
	// does, watching every namespace.
	ownNamespace bool
}

const (
	memNS      = "bench-mem"
	memStateNS = "bench-mem-system"
	memBucket  = "bench-mem"
)

// benchMemory runs the memory benchmark on env's control plane.
func benchMemory(env *envtest.Environment, cfg *rest.Config, bin string, o memoryOptions) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.New(cfg, client.Options{Scheme: setup.Scheme()})
	if err != nil {
		return err
	}
	s3, err := testenv.StartS3()
	if err != nil {
		return err
	}
	defer func() { _ = s3.Stop() }()
	if err := s3.CreateBucket(ctx, memBucket); err != nil {
		return err
	}
	if err := memFixtures(ctx, c, s3); err != nil {
		return err
	}
	// Every emulator the kinds may call, answering from memory.
	google := sandbox.NewGoogleOAuth()
	cal := sandbox.NewGoogleCalendar(google)
	defer cal.Close()
	box := sandbox.New(sandbox.NewSpeakerDeck(), sandbox.NewNotion(), sandbox.NewArxiv(), google, cal, sandbox.NewGoogleSheets(google))
	srv := httptest.NewServer(box)
	defer srv.Close()
	procs, stop, err := startMemoryBinaries(ctx, env, bin, srv.URL, s3.Endpoint, o)
	defer stop()
	if err != nil {
		return err
	}
	printMemoryHeader(o)
	readings, err := memReadings(ctx, cfg, c, s3, procs, o)
	if err != nil {
		return err
	}
	if err := reportMemory(readings, o); err != nil {
		return err
	}
	return scrapeResources(procs, readings[len(readings)-1])
}

// printMemoryHeader prints what the memory benchmark runs.
func printMemoryHeader(o memoryOptions) {
	watching := "every namespace, as the chart's default"
	if o.ownNamespace {
		watching = "--watch-namespaces " + memNS
	}
	fmt.Printf("\nMemory: the manager and webhook binaries (default flags, watching %s), objects of every kind but NotionSignup at once on the real API server,\n"+
		"SlideStocks stocked from an instant sandbox, links minted on versitygw, OAuth parents waiting for a connect with a PaperSync or SheetSync each;\n"+
		"container memory limits %s (manager) and %s (webhook): soft limits (GOMEMLIMIT, setup.SoftMemoryLimit) %s and %s\n",
		watching, limitText(o.managerLimit), limitText(o.webhookLimit), limitText(setup.SoftMemoryLimit(o.managerLimit)), limitText(setup.SoftMemoryLimit(o.webhookLimit)))
}

// memReadings reads both binaries idle, then at o.first and o.objects of
// each kind, each reconciled, printing each reading as it is taken.
func memReadings(ctx context.Context, cfg *rest.Config, c client.Client, s3 *testenv.S3, procs memProcs, o memoryOptions) ([]memReading, error) {
	kinds, err := memKinds()
	if err != nil {
		return nil, err
	}
	fmt.Printf("%-34s %14s %14s %14s %14s %14s %14s\n", "", "manager RSS", "manager peak", "manager heap", "webhook RSS", "webhook peak", "webhook heap")
	idle, err := procs.read(0)
	if err != nil {
		return nil, err
	}
	readings := []memReading{idle}
	printReading(readings[0], len(kinds))
	objs, err := memCache(ctx, cfg, kinds)
	if err != nil {
		return nil, err
	}
	for _, n := range []int{o.first, o.objects} {
		have := readings[len(readings)-1].objects / len(kinds)
		if n <= have {
			continue
		}
		took, err := bench.Timed(func() error { return memCreate(ctx, c, s3, kinds, have, n) })
		if err != nil {
			return nil, err
		}
		settled, err := bench.Timed(func() error { return memSettled(ctx, objs, procs, kinds, n, o.settle) })
		if err != nil {
			return nil, err
		}
		fmt.Printf("%d of each kind (%d objects): created in %s, every one reconciled %s later\n",
			n, n*len(kinds), took.Round(time.Second), settled.Round(time.Second))
		x, err := procs.read(n * len(kinds))
		if err != nil {
			return nil, err
		}
		readings = append(readings, x)
		printReading(readings[len(readings)-1], len(kinds))
		if o.profileDir != "" {
			if err := procs.profile(o.profileDir, n*len(kinds)); err != nil {
				return nil, err
			}
		}
	}
	return readings, nil
}

// parseMemLimits reads -mem-limits: "none", or the manager's and the
// webhook's container memory limits as Kubernetes quantities, "300Mi,150Mi".
func parseMemLimits(s string) (manager, webhook int64, err error) {
	if s == "none" {
		return 0, 0, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 2 {
		return 0, 0, fmt.Errorf("-mem-limits %q: want \"none\" or the manager's and the webhook's limits, \"300Mi,150Mi\"", s)
	}
	var out [2]int64
	for i, part := range parts {
		q, err := resource.ParseQuantity(strings.TrimSpace(part))
		if err != nil || q.Value() <= 0 {
			return 0, 0, fmt.Errorf("-mem-limits %q: %q is not a memory quantity such as 300Mi", s, part)
		}
		out[i] = q.Value()
	}
	return out[0], out[1], nil
}
