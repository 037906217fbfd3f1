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

package sheets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

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
func served(r *bench.Rig) servedTotals {
	var t servedTotals
	mfs, err := r.HookMetrics.Gather()
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
	err := bench.Parallel(n, clients, func(i int) error {
		s := timesheet.NewSync(conn, bench.Session(fmt.Sprintf("b%d", clients), from+i))
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
	appendsBefore := rig.Box.Calls(sandbox.SheetsValuesAppend)
	apiBefore := rig.Calls.Snapshot()
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * clients}}
	if err := ingestWarmUp(httpc, ingest, clients); err != nil {
		return fmt.Errorf("ingest warm-up: %w", err)
	}
	n := to - from
	round := sheetsRate{lat: make([]time.Duration, n)}
	servedBefore := served(rig.Rig)
	began := time.Now()
	err := bench.Parallel(n, clients, func(i int) error {
		b, _ := json.Marshal(bench.Session(fmt.Sprintf("s%d", clients), from+i))
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
	r.served = r.served.add(served(rig.Rig).since(servedBefore))
	lastPost := time.Now()
	if err := r.waitDrained(ctx, rig, total, began); err != nil {
		return err
	}
	r.drained += time.Since(began)
	r.afterLast += time.Since(lastPost)
	r.appends += rig.Box.Calls(sandbox.SheetsValuesAppend) - appendsBefore
	apiAfter := rig.Calls.Snapshot()
	r.apiRead += apiAfter[0] - apiBefore[0]
	r.apiWrites += apiAfter[1] - apiBefore[1]
	return nil
}

// ingestWarmUp posts one refused session per client, untimed (a session
// without a title: 400, nothing created).
func ingestWarmUp(httpc *http.Client, ingest string, clients int) error {
	return bench.Parallel(clients, clients, func(i int) error {
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
	cache := rig.Mgr.GetClient()
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
