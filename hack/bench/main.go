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

// Command bench measures Switchboard against baselines in the same run,
// on a real kube-apiserver and etcd (envtest): each suite runs the real
// controllers, binaries or routes and, beside them, a bare client doing
// the least the same result could cost. -suite names one; all runs every
// one, in the order of suites below:
//
//   - slidestock (package slidestock): the manager binary taking stocks to
//     Ready against a bare client's creates and status patches, its writes
//     per stock and its peak RSS; shards: SlideStocks reconciled by two
//     sharded managers against one;
//   - notion and papersync (package notion): the Notion webhook's routes
//     and the time from an event to the page filled; the PaperSync drain;
//   - calendar: CalendarWatch renewal lateness, cancellation → appointment
//     deleted, and the Google push route's throughput;
//   - sheets: the Sheets ingest route against bare SheetSync creates, the
//     values.append calls, and the drain into the sheet;
//   - receive: the share-link resolve route against a bare cached Get,
//     and 10,000 links expiring in one minute on versitygw;
//   - tokens: OAuth token refreshes of 10,000 NotionIntegrations and
//     10,000 SheetConnections falling due within one minute;
//   - memory: the manager's and the webhook's memory at 1,000 and 10,000
//     objects of every kind at once against the idle binaries.
//
// Each suite is a bench.Suite that binds its own flags, as each
// controller is a wire.Kind: a new suite is its package and one line in
// suites.
//
//	go run ./hack/bench --bin bin --n 1000 --m 10000
//	go run ./hack/bench -suite calendar -cal-watches 200
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/switchboard-dev/switchboard/hack/bench/calendar"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/bench/memory"
	"github.com/switchboard-dev/switchboard/hack/bench/notion"
	"github.com/switchboard-dev/switchboard/hack/bench/receive"
	"github.com/switchboard-dev/switchboard/hack/bench/sheets"
	"github.com/switchboard-dev/switchboard/hack/bench/slidestock"
	"github.com/switchboard-dev/switchboard/hack/bench/tokens"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// suites are the benchmarks, one line a suite, in the order -suite all
// runs them. SlideStock's comes first: it stops its manager binary before
// the next suite starts, which would find it reconciling their objects.
func suites() []bench.Suite {
	return []bench.Suite{
		&slidestock.Suite{},
		&notion.Suite{},
		&notion.PaperSync{},
		&calendar.Suite{},
		&sheets.Suite{},
		&receive.Suite{},
		&tokens.Suite{},
		&memory.Suite{},
		&slidestock.Shards{},
	}
}

func main() {
	all := suites()
	e := bench.Env{}
	flag.StringVar(&e.Bin, "bin", "bin", "Directory holding the manager binary.")
	flag.IntVar(&e.Creators, "creators", 16, "Concurrent clients creating stocks (both runs).")
	which := flag.String("suite", "all", "Which benchmark: "+names(all)+" or all.")
	cpuProfile := flag.String("cpuprofile", "", "Write a CPU profile of this process (the in-process managers and webhooks) to this file.")
	for _, s := range all {
		s.BindFlags(flag.CommandLine)
	}
	flag.Parse()
	run, err := selected(all, *which)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	stopProfile := func() {}
	if *cpuProfile != "" {
		if stopProfile, err = startCPUProfile(*cpuProfile); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
	}
	// The in-process managers log nothing: the figures are the output.
	ctrl.SetLogger(logr.Discard())
	e.All = *which == "all"
	err = runSuites(e, run)
	stopProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// names are the suites' names, for -suite's help.
func names(suites []bench.Suite) string {
	var out []string
	for _, s := range suites {
		out = append(out, s.Name())
	}
	return strings.Join(out, ", ")
}

// selected are the suites -suite which names (all: every one), once each
// has checked its flags.
func selected(suites []bench.Suite, which string) ([]bench.Suite, error) {
	for _, s := range suites {
		if c, ok := s.(bench.Checker); ok {
			if err := c.Check(); err != nil {
				return nil, err
			}
		}
	}
	if which == "all" {
		return suites, nil
	}
	for _, s := range suites {
		if s.Name() == which {
			return []bench.Suite{s}, nil
		}
	}
	return nil, fmt.Errorf("-suite %q: no such suite (%s or all)", which, names(suites))
}

// runSuites starts the control plane and runs each suite on it in turn.
func runSuites(e bench.Env, suites []bench.Suite) error {
	e.ControlPlane = &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("config", "crd", "bases")}, ErrorIfCRDPathMissing: true, Scheme: setup.Scheme()}
	cfg, err := e.ControlPlane.Start()
	if err != nil {
		return fmt.Errorf("start envtest: %w", err)
	}
	defer func() {
		if err := e.ControlPlane.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: stop control plane:", err)
		}
	}()
	e.Config = rest.CopyConfig(cfg)
	e.Config.QPS = -1 // no client-side throttling, as the manager (controller-runtime's default)
	for _, s := range suites {
		if err := s.Run(e); err != nil {
			return err
		}
	}
	return nil
}

// startCPUProfile profiles this process into path until the returned
// func is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}
