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

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetsync"
	"github.com/switchboard-dev/switchboard/internal/controller/wire"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/timesheet"
)

const (
	sheetsBenchNS       = "bench-sheets"
	sheetsBaselineNS    = "bench-sheets-baseline"
	sheetsBenchID       = "1BenchSpreadsheet000000000000000000000000000"
	sheetsBenchTab      = "Time log"
	sheetsBenchTimeZone = "Asia/Tokyo"
)

// sheetsRig is the SheetConnection benchmark's system, wired as the
// end-to-end tests wire it: an instant sandbox (Google OAuth and the Sheets
// emulator, Google's 60 writes a minute per user), the SheetConnection and
// SheetSync controllers in an in-process manager with default options, and
// the webhook server's routes on a loopback listener.
type sheetsRig struct {
	*rig
	google *sandbox.GoogleOAuth
	sheets *sandbox.GoogleSheets
}

func startSheetsRig(ctx context.Context, cfg *rest.Config) (*sheetsRig, error) {
	r := &sheetsRig{google: sandbox.NewGoogleOAuth()}
	r.google.AddClient("sheet-client", "sheet-secret")
	r.sheets = sandbox.NewGoogleSheets(r.google)
	r.sheets.AddSpreadsheet(sheetsBenchID, sheetsBenchTimeZone, sandbox.SheetSpec{ID: 0, Title: sheetsBenchTab, Rows: [][]string{testenv.SheetHeader}})
	var err error
	if r.rig, err = newRig(ctx, cfg, sandbox.New(r.google, r.sheets), &apiCounter{}); err != nil {
		return nil, err
	}
	reports := &sheetconnection.Reports{}
	if err := wire.SetupAll(r.mgr, wire.Deps{Outbound: r.out, OAuth: r.engine, PublicURL: r.hookURL},
		&sheetconnection.Controller{Reports: reports}, &sheetsync.Controller{Connections: reports}); err != nil {
		r.close()
		return nil, err
	}
	return r, r.start(ctx)
}

// benchSession is the i-th session of a run: ten minutes each, one after
// another, so that session order is i order.
func benchSession(prefix string, i int) v1alpha1.TimeTrackerSession {
	start := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 10 * time.Minute)
	return v1alpha1.TimeTrackerSession{
		ID: fmt.Sprintf("%s-%05d", prefix, i), Title: fmt.Sprintf("Session %d", i),
		StartedAt: start.UnixMilli(), EndedAt: start.Add(9 * time.Minute).UnixMilli(), DurationSeconds: 540,
		Project: "bench", Tags: []string{"bench", "load"},
	}
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
	c, err := client.New(cfg, client.Options{Scheme: setupScheme()})
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
	defer rig.close()
	conn, err := sheetsConnect(ctx, c, rig)
	if err != nil {
		return err
	}
	runs := make([]*sheetsRun, len(clientCounts))
	total := 0
	for i, clients := range clientCounts {
		r := &sheetsRun{clients: clients, idle: idle[i]}
		runs[i] = r
		// Rounds of an equal share of the sessions each, in the order
		// baseline, route, route, baseline, baseline, ...: what drifts
		// over a run (the namespace's growing count of syncs, the cache's
		// size) and what comes now and then (etcd's compactions, a
		// collection in the API server) then falls on the route and its
		// baseline alike. Each side's rate is its sessions over the sum of
		// its rounds' times.
		pairs := rounds / 2
		for i := range 2 * pairs {
			route := (i%2 == 1) != (i/2%2 == 1)
			k := i / 2 // each side's k-th round
			from, to := k*n/pairs, (k+1)*n/pairs
			if route {
				if err := r.ingest(ctx, rig, rig.hookURL+conn.Status.IngestPath, from, to, clients, total+to-from); err != nil {
					return err
				}
			} else {
				base, err := drainedBaseline(ctx, c, rig, from, to, clients, total)
				if err != nil {
					return fmt.Errorf("baseline with the manager draining: %w", err)
				}
				r.drainedBase.add(base)
			}
			total += to - from
		}
		sortDurations(r.drainedBase.lat)
		sortDurations(r.route.lat)
	}
	if err := reportSheets(rig, runs, n, rounds, total); err != nil {
		return err
	}
	return benchSessionReads(ctx, rig, c, conn, n, clientCounts[len(clientCounts)-1])
}

// sheetsRate is one timed burst of creates or posts: each one's latency
// (sorted) and the whole time.
type sheetsRate struct {
	lat  []time.Duration
	took time.Duration
}

func (s sheetsRate) perSecond(n int) float64 { return float64(n) / s.took.Seconds() }

// add adds a round's latencies and time to s.
func (s *sheetsRate) add(round sheetsRate) {
	s.lat = append(s.lat, round.lat...)
	s.took += round.took
}

// sheetsRun is what the Sheets benchmark measured at one client count:
// the baselines, the ingest route's latencies and time, the drain's, and
// the API and values.append calls over the route's rounds.
type sheetsRun struct {
	clients            int
	idle, drainedBase  sheetsRate
	route              sheetsRate
	drained, afterLast time.Duration
	succeeded, failed  int
	appends            int
	apiWrites, apiRead int64
	// served is the webhook server's own count and time of the route's
	// answers (its request duration metric).
	served servedTotals
}

// servedTotals are the count and summed time of the answers the webhook
// server measured (switchboard_webhook_request_duration_seconds).
type servedTotals struct {
	count uint64
	sum   float64
}

func (a servedTotals) add(b servedTotals) servedTotals {
	return servedTotals{a.count + b.count, a.sum + b.sum}
}

func (a servedTotals) since(b servedTotals) servedTotals {
	return servedTotals{a.count - b.count, a.sum - b.sum}
}

func (a servedTotals) mean() time.Duration {
	if a.count == 0 {
		return 0
	}
	return time.Duration(a.sum / float64(a.count) * float64(time.Second))
}

// served reads the webhook server's request duration totals, over every
// route.
func served(r *rig) servedTotals {
	var t servedTotals
	mfs, err := r.hookMetrics.Gather()
	if err != nil {
		return t
	}
	for _, mf := range mfs {
		if mf.GetName() != "switchboard_webhook_request_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			t.count += m.GetHistogram().GetSampleCount()
			t.sum += m.GetHistogram().GetSampleSum()
		}
	}
	return t
}

// drainedBaseline creates the SheetSyncs of sessions from to to of the
// connection with a bare client and `clients` goroutines while the manager
// runs, timed, and waits until the manager has drained them (done of the
// namespace's syncs were before).
func drainedBaseline(ctx context.Context, c client.Client, rig *sheetsRig, from, to, clients, done int) (sheetsRate, error) {
	conn := &v1alpha1.SheetConnection{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: sheetsBenchNS, Name: "timesheet"}, conn); err != nil {
		return sheetsRate{}, err
	}
	n := to - from
	r := sheetsRate{lat: make([]time.Duration, n)}
	began := time.Now()
	err := parallel(n, clients, func(i int) error {
		s := timesheet.NewSync(conn, benchSession(fmt.Sprintf("b%d", clients), from+i))
		t0 := time.Now()
		err := c.Create(ctx, s)
		r.lat[i] = time.Since(t0)
		return err
	})
	r.took = time.Since(began)
	if err != nil {
		return r, err
	}
	var drain sheetsRun
	return r, drain.waitDrained(ctx, rig, done+n, began)
}

// ingest posts sessions from to to, clients at a time, after an untimed
// warm-up, and waits until every sync of the namespace (total) is done;
// it adds the round to r.
func (r *sheetsRun) ingest(ctx context.Context, rig *sheetsRig, ingest string, from, to, clients, total int) error {
	appendsBefore := rig.box.Calls(sandbox.SheetsValuesAppend)
	apiBefore := rig.calls.snapshot()
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * clients}}
	if err := ingestWarmUp(httpc, ingest, clients); err != nil {
		return fmt.Errorf("ingest warm-up: %w", err)
	}
	n := to - from
	round := sheetsRate{lat: make([]time.Duration, n)}
	servedBefore := served(rig.rig)
	began := time.Now()
	err := parallel(n, clients, func(i int) error {
		b, _ := json.Marshal(benchSession(fmt.Sprintf("s%d", clients), from+i))
		req, _ := http.NewRequest(http.MethodPost, ingest, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+testenv.SheetIngestToken)
		t0 := time.Now()
		resp, err := httpc.Do(req)
		round.lat[i] = time.Since(t0)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			return fmt.Errorf("session %d: %d %s", i, resp.StatusCode, body)
		}
		return nil
	})
	round.took = time.Since(began)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	r.route.add(round)
	r.served = r.served.add(served(rig.rig).since(servedBefore))
	lastPost := time.Now()
	if err := r.waitDrained(ctx, rig, total, began); err != nil {
		return err
	}
	r.drained += time.Since(began)
	r.afterLast += time.Since(lastPost)
	r.appends += rig.box.Calls(sandbox.SheetsValuesAppend) - appendsBefore
	apiAfter := rig.calls.snapshot()
	r.apiRead += apiAfter[0] - apiBefore[0]
	r.apiWrites += apiAfter[1] - apiBefore[1]
	return nil
}

// ingestWarmUp posts one refused session per client, untimed (a session
// without a title: 400, nothing created).
func ingestWarmUp(httpc *http.Client, ingest string, clients int) error {
	return parallel(clients, clients, func(i int) error {
		req, _ := http.NewRequest(http.MethodPost, ingest, strings.NewReader(`{"id":"warm"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+testenv.SheetIngestToken)
		resp, err := httpc.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			return fmt.Errorf("warm-up post answered %d, want 400", resp.StatusCode)
		}
		return nil
	})
}

// waitDrained waits, from the manager's cache, until each of the n syncs
// is Succeeded or Failed, for 10 minutes from began.
func (r *sheetsRun) waitDrained(ctx context.Context, rig *sheetsRig, n int, began time.Time) error {
	cache := rig.mgr.GetClient()
	err := poll.Until(ctx, "", 20*time.Millisecond, time.Until(began.Add(10*time.Minute)), func() (bool, error) {
		// The cache's objects, read only: a deep copy of thousands of
		// syncs every 20 ms was a quarter of this process's CPU, and its
		// garbage was collected during the next timed burst.
		var list v1alpha1.SheetSyncList
		if err := cache.List(ctx, &list, client.InNamespace(sheetsBenchNS), client.UnsafeDisableDeepCopy); err != nil {
			return false, poll.Stop(err)
		}
		r.succeeded, r.failed = 0, 0
		for i := range list.Items {
			switch list.Items[i].Status.Phase {
			case v1alpha1.SyncSucceeded:
				r.succeeded++
			case v1alpha1.SyncFailed:
				r.failed++
			}
		}
		return r.succeeded+r.failed == n, nil
	})
	if err != nil && !poll.Stopped(err) {
		return fmt.Errorf("%d of %d Succeeded (%d Failed) after 10 minutes", r.succeeded, n, r.failed)
	}
	return err
}

// sheetRows counts the rows under the sheet's header, their distinct
// session ids, and the rows that repeat a session.
func sheetRows(rig *sheetsRig) (rows, distinct, dups int) {
	all := rig.sheets.Rows(sheetsBenchID, sheetsBenchTab)
	idCol := -1
	for i, h := range testenv.SheetHeader {
		if h == "Session ID" {
			idCol = i
		}
	}
	ids := map[string]int{}
	for _, r := range all[1:] {
		if idCol >= 0 && idCol < len(r) {
			ids[r[idCol]]++
		}
	}
	for _, k := range ids {
		if k > 1 {
			dups += k - 1
		}
	}
	return len(all) - 1, len(ids), dups
}

// reportSheets prints the Sheets benchmark's figures and checks the sheet
// holds one row per session (total, the baselines' included).
func reportSheets(rig *sheetsRig, runs []*sheetsRun, n, rounds, total int) error {
	rows, distinct, dups := sheetRows(rig)
	fmt.Printf("%-70s %10s %12s %10s %10s %10s\n", "", "time", "per second", "p50", "p95", "p99")
	line := func(what string, r sheetsRate) {
		fmt.Printf("%-70s %10s %12.0f %10s %10s %10s\n", what, r.took.Round(time.Millisecond), r.perSecond(n), pctMs(r.lat, 50), pctMs(r.lat, 95), pctMs(r.lat, 99))
	}
	for _, r := range runs {
		fmt.Printf("%d clients:\n", r.clients)
		line(fmt.Sprintf("  baseline: bare client, %d SheetSync creates, nothing reconciling", n), r.idle)
		line(fmt.Sprintf("  baseline: bare client, %d SheetSync creates, the manager draining (%d rounds)", n, rounds/2), r.drainedBase)
		line(fmt.Sprintf("  ingest route: %d sessions accepted (202), the manager draining (%d rounds)", n, rounds/2), r.route)
		fmt.Printf("  ratio ingest/baseline: accepted per second %.2f against creates while draining (goal ≥ 0.9), %.2f against idle creates; p99 latency %.2f, %.2f\n",
			r.route.perSecond(n)/r.drainedBase.perSecond(n), r.route.perSecond(n)/r.idle.perSecond(n),
			ratio(pctD(r.route.lat, 99), pctD(r.drainedBase.lat, 99)), ratio(pctD(r.route.lat, 99), pctD(r.idle.lat, 99)))
		fmt.Printf("  the route's mean latency %s at the client, %s of it inside the webhook server's handler (its request duration metric; the baseline's creates: mean %s)\n",
			meanD(r.route.lat).Round(100*time.Microsecond), r.served.mean().Round(100*time.Microsecond), meanD(r.drainedBase.lat).Round(100*time.Microsecond))
		fmt.Printf("  values.append calls the sandbox counted: %d (%.1f sessions per append; pacing 1 append/s per connection, at most %d rows each)\n",
			r.appends, float64(n)/float64(max(r.appends, 1)), sheetsync.MaxRows)
		fmt.Printf("  the route's sessions Succeeded %s after each round's first post (%s after its last), summed over its %d rounds; %d Failed\n",
			r.drained.Round(time.Millisecond), r.afterLast.Round(time.Millisecond), rounds/2, r.failed)
		fmt.Printf("  API requests per session, ingest and drain (the webhook's create included): %.2f writes (goal ≤ 2.0), %.2f reads\n",
			float64(r.apiWrites)/float64(n), float64(r.apiRead)/float64(n))
	}
	fmt.Printf("rows in the sheet under the header: %d (want %d, the baselines' included); distinct session ids %d, duplicate rows %d\n",
		rows, total, distinct, dups)
	for _, r := range runs {
		if r.failed != 0 {
			return fmt.Errorf("%d sessions failed at %d clients", r.failed, r.clients)
		}
	}
	if rows != total || dups != 0 {
		return fmt.Errorf("the sheet has %d rows (%d duplicates) for %d sessions", rows, dups, total)
	}
	return nil
}

// sheetsBaseline creates n SheetSyncs, as the ingest route would, with
// `workers` goroutines and a bare client; it answers each create's latency
// (sorted) and the whole time, then deletes them.
func sheetsBaseline(ctx context.Context, c client.Client, n, workers int) ([]time.Duration, time.Duration, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sheetsBaselineNS}}); client.IgnoreAlreadyExists(err) != nil {
		return nil, 0, err
	}
	// Warm-up, untimed: the client's first requests discover the API.
	if err := parallel(workers, workers, func(i int) error {
		s := benchSession("warm", i)
		return c.Create(ctx, &v1alpha1.SheetSync{ObjectMeta: metav1.ObjectMeta{Name: timesheet.SyncName("warm", s.ID), Namespace: sheetsBaselineNS},
			Spec: v1alpha1.SheetSyncSpec{ConnectionRef: v1alpha1.LocalObjectReference{Name: "timesheet"}, Session: s}})
	}); err != nil {
		return nil, 0, err
	}
	lat := make([]time.Duration, n)
	began := time.Now()
	err := parallel(n, workers, func(i int) error {
		s := benchSession("b", i)
		obj := &v1alpha1.SheetSync{
			ObjectMeta: metav1.ObjectMeta{Name: timesheet.SyncName("timesheet", s.ID), Namespace: sheetsBaselineNS,
				Labels: map[string]string{timesheet.ConnectionLabel: "timesheet"}},
			Spec: v1alpha1.SheetSyncSpec{ConnectionRef: v1alpha1.LocalObjectReference{Name: "timesheet"}, Session: s},
		}
		t0 := time.Now()
		err := c.Create(ctx, obj)
		lat[i] = time.Since(t0)
		return err
	})
	took := time.Since(began)
	if err != nil {
		return nil, 0, err
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	// Gone before the manager starts, so that it has nothing of them to do.
	if err := c.DeleteAllOf(ctx, &v1alpha1.SheetSync{}, client.InNamespace(sheetsBaselineNS)); err != nil {
		return nil, 0, err
	}
	for {
		var list v1alpha1.SheetSyncList
		if err := c.List(ctx, &list, client.InNamespace(sheetsBaselineNS)); err != nil {
			return nil, 0, err
		}
		if len(list.Items) == 0 {
			return lat, took, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sheetsConnect creates the fixture's SheetConnection on the bench
// spreadsheet with a grant, and waits until it takes sessions.
func sheetsConnect(ctx context.Context, c client.Client, rig *sheetsRig) (*v1alpha1.SheetConnection, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sheetsBenchNS}}); err != nil {
		return nil, err
	}
	grant := rig.google.IssueRefreshToken("sheet-client", strings.Join(targets.Sheets.Provider.Scopes, " "))
	if err := testenv.SheetConnection(ctx, c, sheetsBenchNS, sheetsBenchID, sheetsBenchTab, grant, nil); err != nil {
		return nil, err
	}
	conn := &v1alpha1.SheetConnection{}
	err := poll.Until(ctx, "", 50*time.Millisecond, time.Minute, func() (bool, error) {
		conn = &v1alpha1.SheetConnection{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: sheetsBenchNS, Name: "timesheet"}, conn); err != nil {
			return false, poll.Stop(err)
		}
		if ok, _ := timesheet.Accepting(conn); !ok || conn.Status.IngestPath == "" {
			return false, nil
		}
		// The webhook reads the connection from the manager's cache.
		cached := &v1alpha1.SheetConnection{}
		if err := rig.mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(conn), cached); err != nil {
			return false, nil
		}
		ok, _ := timesheet.Accepting(cached)
		return ok, nil
	})
	if err != nil && !poll.Stopped(err) {
		return nil, fmt.Errorf("SheetConnection not Active after a minute: phase %q, %+v", conn.Status.Phase, conn.Status.Conditions)
	}
	if err != nil {
		return nil, err
	}
	return conn, nil
}
