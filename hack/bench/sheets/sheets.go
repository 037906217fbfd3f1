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

// Package sheets is the SheetConnection benchmark (-suite sheets): the
// ingest route against bare SheetSync creates, the values.append calls
// and the drain into the sheet, then the session reads and the ledger of
// collected sessions (sessions.go).
package sheets

import (
	"context"
	"flag"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetsync"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

const (
	sheetsBenchNS       = "bench-sheets"
	sheetsBaselineNS    = "bench-sheets-baseline"
	sheetsBenchTimeZone = "Asia/Tokyo"
)

// Suite is the SheetConnection benchmark (-suite sheets).
type Suite struct {
	rounds, sessions int
	clients          string
}

// Name is the suite's -suite name.
func (*Suite) Name() string { return "sheets" }

// BindFlags registers the -sheet- flags.
func (s *Suite) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.rounds, "sheet-rounds", 8, "Rounds the Sheets ingest route and its baseline take turns in at each client count (even: baseline, route, route, baseline, ...), each of -sheet-sessions/(rounds/2) sessions.")
	fs.IntVar(&s.sessions, "sheet-sessions", 3000, "Sessions posted to the Sheets ingest route per client count (and as many creates in each baseline); 1,000 make rounds of 250, too short to judge the ratio.")
	fs.StringVar(&s.clients, "sheet-clients", "16,64", "Client counts of the Sheets ingest route and its baselines.")
}

// Run runs the benchmark.
func (s *Suite) Run(e bench.Env) error {
	counts, err := bench.PositiveInts(s.clients)
	if err != nil {
		return fmt.Errorf("-sheet-clients: %w", err)
	}
	return benchSheets(e.Config, s.sessions, s.rounds, counts)
}

// sheetsRig is the SheetConnection benchmark's system, wired as the
// end-to-end tests wire it: an instant sandbox (Google OAuth and the Sheets
// emulator, Google's 60 writes a minute per user), the SheetConnection and
// SheetSync controllers in an in-process manager with default options, and
// the webhook server's routes on a loopback listener.
type sheetsRig struct {
	*bench.Rig
	google *sandbox.GoogleOAuth
	sheets *sandbox.GoogleSheets
}

func startSheetsRig(ctx context.Context, cfg *rest.Config) (*sheetsRig, error) {
	r := &sheetsRig{google: sandbox.NewGoogleOAuth()}
	r.google.AddClient("sheet-client", "sheet-secret")
	r.sheets = sandbox.NewGoogleSheets(r.google)
	r.sheets.AddSpreadsheet(bench.SheetsID, sheetsBenchTimeZone, sandbox.SheetSpec{ID: 0, Title: bench.SheetsTab, Rows: [][]string{testenv.SheetHeader}})
	var err error
	reports := &sheetconnection.Reports{}
	if r.Rig, err = bench.NewRig(ctx, cfg, sandbox.New(r.google, r.sheets), &bench.APICounter{}, func(r *bench.Rig) wire.Operator {
		return wire.Operator{Kinds: []wire.Kind{&sheetconnection.Controller{Reports: reports}, &sheetsync.Controller{Connections: reports}},
			Deps: wire.Deps{PublicURL: r.HookURL}}
	}); err != nil {
		return nil, err
	}
	return r, r.Start(ctx)
}

// benchSheets measures the ingest route and the drain into the sheet, at
// each client count of clientCounts: n sessions posted one per request,
// against two baselines in the same run, each n SheetSync creates by a
// bare client with as many goroutines:
//
//   - before the manager runs, nothing reconciling them (the least a
//     create costs);
//   - while the manager runs and drains them into the sheet as it drains
//     the route's: the same work downstream, so the ratio is what the
//     route costs beyond its one create. It and the route take turns in
//     rounds (baseline, route, route, baseline, ...).
func benchSheets(cfg *rest.Config, n, rounds int, clientCounts []int) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctrl.SetLogger(logr.Discard())
	c, err := client.New(cfg, client.Options{Scheme: setup.Scheme()})
	if err != nil {
		return err
	}
	if rounds < 2 || rounds%2 != 0 {
		return fmt.Errorf("-sheet-rounds %d: an even number, 2 or more", rounds)
	}
	fmt.Printf("\nSheetConnection: %d sessions per client count, one session per POST to the ingest route, the route and its baseline in %d rounds of %d each (baseline, route, route, baseline, ...);\n"+
		"instant sandbox (Sheets quota 60 writes/min/user), "+
		"SheetConnection and SheetSync controllers in process (default options), webhook on loopback with the per-client rate limit off, real API server\n", n, rounds, n/(rounds/2))

	// The first baseline before the manager runs: nothing reconciles them.
	idle := make([]sheetsRate, len(clientCounts))
	for i, clients := range clientCounts {
		if idle[i].lat, idle[i].took, err = sheetsBaseline(ctx, c, n, clients); err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
	}
	rig, err := startSheetsRig(ctx, cfg)
	if err != nil {
		return err
	}
	defer rig.Close()
	conn, err := sheetsConnect(ctx, c, rig)
	if err != nil {
		return err
	}
	runs := make([]*sheetsRun, len(clientCounts))
	total := 0
	for i, clients := range clientCounts {
		runs[i] = &sheetsRun{clients: clients, idle: idle[i]}
		if total, err = runs[i].takeTurns(ctx, c, rig, rig.HookURL+conn.Status.IngestPath, n, rounds/2, total); err != nil {
			return err
		}
	}
	if err := reportSheets(rig, runs, n, rounds, total); err != nil {
		return err
	}
	return benchSessionReads(ctx, rig, c, conn, n, clientCounts[len(clientCounts)-1])
}

// takeTurns runs the route and its baseline at r.clients in 2*pairs
// rounds of an equal share of n sessions each, in the order baseline,
// route, route, baseline, baseline, ...: what drifts over a run (the
// namespace's growing count of syncs, the cache's size) and what comes
// now and then (etcd's compactions, a collection in the API server) then
// falls on the route and its baseline alike. Each side's rate is its
// sessions over the sum of its rounds' times. total is how many syncs the
// namespace held before; it answers how many it holds after.
func (r *sheetsRun) takeTurns(ctx context.Context, c client.Client, rig *sheetsRig, ingest string, n, pairs, total int) (int, error) {
	for i := range 2 * pairs {
		route := (i%2 == 1) != (i/2%2 == 1)
		k := i / 2 // each side's k-th round
		from, to := k*n/pairs, (k+1)*n/pairs
		if route {
			if err := r.ingest(ctx, rig, ingest, from, to, r.clients, total+to-from); err != nil {
				return total, err
			}
		} else {
			base, err := drainedBaseline(ctx, c, rig, from, to, r.clients, total)
			if err != nil {
				return total, fmt.Errorf("baseline with the manager draining: %w", err)
			}
			r.drainedBase.add(base)
		}
		total += to - from
	}
	bench.SortDurations(r.drainedBase.lat)
	bench.SortDurations(r.route.lat)
	return total, nil
}
