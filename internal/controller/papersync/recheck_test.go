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

package papersync

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxiv"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Issue 18 item 15: a sync whose retries ran out during an outage is
// looked at again on a long jittered backoff, so its page fills minutes
// after the upstream recovers, not a retention (24 h) later.

func TestAnExhaustedSyncIsRecheckedUntilArxivIsBack(t *testing.T) {
	f := newFixture(t, "2301.00001")
	rec := events.NewFakeRecorder(10)
	f.r.Recorder = rec
	down := true
	f.arxiv.fetch = func(ids []string) (map[string]arxiv.Paper, []string, error) {
		if down {
			return nil, nil, &outbound.Error{Upstream: "arxiv", Class: outbound.Transient, Status: 503, Reason: "HTTP 503"}
		}
		return map[string]arxiv.Paper{ids[0]: paper(ids[0])}, nil, nil
	}
	for range 4 { // one try and three retries (seed 000 §7.2)
		f.reconcile(t, 0)
	}
	ps := f.sync(t, 0)
	if c := status.Get(ps, v1alpha1.StalledCondition); ps.Status.Phase != v1alpha1.SyncFailed || c == nil || c.Reason != v1alpha1.RetriesExhaustedReason {
		t.Fatalf("after 4 attempts: phase %s, stalled %+v", ps.Status.Phase, c)
	}
	// The first recheck is a minute away (the runner jitters it ±10 %),
	// not the hour of the retention.
	if out := f.reconcile(t, 0); !out.IsWait() || out.After() != time.Minute {
		t.Fatalf("the exhausted sync waits %s %v, want a wait of 1m for its first recheck", out, out.After())
	}
	f.clk.SetTime(t0.Add(30 * time.Second))
	if out := f.reconcile(t, 0); out.After() != 30*time.Second || f.arxiv.calls.Load() != 4 {
		t.Fatalf("half-way: %s %v after %d arXiv requests; want 30s more and no request", out, out.After(), f.arxiv.calls.Load())
	}
	// Recheck 1: still down. Failed again, quietly, and the next recheck
	// is twice as far.
	f.clk.SetTime(t0.Add(time.Minute))
	out := f.reconcile(t, 0)
	ps = f.sync(t, 0)
	c := status.Get(ps, v1alpha1.StalledCondition)
	if f.arxiv.calls.Load() != 5 || ps.Status.Phase != v1alpha1.SyncFailed || ps.Status.Attempts != 5 || c == nil || c.Reason != v1alpha1.RetriesExhaustedReason {
		t.Fatalf("recheck 1: %d requests, phase %s, attempts %d, stalled %+v", f.arxiv.calls.Load(), ps.Status.Phase, ps.Status.Attempts, c)
	}
	if !out.IsWait() || out.After() != 2*time.Minute {
		t.Fatalf("after recheck 1: %s %v, want a wait of 2m", out, out.After())
	}
	if n := len(rec.Events); n != 1 {
		t.Fatalf("%d Warning Events; want the one sent when the retries ran out", n)
	}
	// Recheck 2: arXiv is back and the page is written.
	down = false
	f.clk.SetTime(t0.Add(3 * time.Minute))
	f.reconcile(t, 0)
	ps = f.sync(t, 0)
	if ps.Status.Phase != v1alpha1.SyncSucceeded || !status.IsTrue(ps, v1alpha1.ReadyCondition) || len(f.notion.pages) != 1 || f.arxiv.calls.Load() != 6 {
		t.Fatalf("recheck 2: phase %s, %d pages written, %d requests", ps.Status.Phase, len(f.notion.pages), f.arxiv.calls.Load())
	}
}

func TestRechecksBackOffToHalfAnHour(t *testing.T) {
	r := &Reconciler{}
	r.Runner()
	var got []time.Duration
	for n := 1; n <= 7; n++ {
		got = append(got, r.recheckDelay(int32(DefaultRetries.Retries+n)))
	}
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 30 * time.Minute, 30 * time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("recheck delays %v, want %v", got, want)
		}
	}
}

func TestAnExhaustedSyncIsDeletedWhenItsRetentionComesFirst(t *testing.T) {
	f := newFixture(t, "2301.00001")
	ni := &v1alpha1.NotionIntegration{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "ni"}, ni); err != nil {
		t.Fatal(err)
	}
	ni.Spec.SyncRetention.Duration = 20 * time.Second
	if err := f.c.Update(context.Background(), ni); err != nil {
		t.Fatal(err)
	}
	f.arxiv.fetch = func([]string) (map[string]arxiv.Paper, []string, error) {
		return nil, nil, &outbound.Error{Upstream: "arxiv", Class: outbound.Transient, Status: 503, Reason: "HTTP 503"}
	}
	for range 4 {
		f.reconcile(t, 0)
	}
	if out := f.reconcile(t, 0); out.After() != 20*time.Second {
		t.Fatalf("waits %v, want the 20s retention (before the 1m recheck)", out.After())
	}
	f.clk.SetTime(t0.Add(20 * time.Second))
	if out := f.reconcile(t, 0); !out.IsDone() || f.arxiv.calls.Load() != 4 {
		t.Fatalf("after the retention: %s, %d requests", out, f.arxiv.calls.Load())
	}
}

func TestAConflictingPageUpdateIsRetriedOnTheSchedule(t *testing.T) {
	f := newFixture(t, "2301.00001")
	conflicts := 2
	f.notion.update = func(string) error {
		if conflicts > 0 {
			conflicts--
			return &outbound.Error{Upstream: "notion", Class: outbound.Transient, Status: 409, Reason: "HTTP 409 conflict_error"}
		}
		return nil
	}
	for i, want := range []time.Duration{time.Second, 2 * time.Second} {
		if out := f.reconcile(t, 0); !out.IsRetry() || out.After() != want {
			t.Fatalf("conflict %d: %s after %v, want a retry after %v", i+1, out, out.After(), want)
		}
	}
	f.reconcile(t, 0)
	if ps := f.sync(t, 0); ps.Status.Phase != v1alpha1.SyncSucceeded || ps.Status.Attempts != 3 {
		t.Fatalf("phase %s after %d attempts", ps.Status.Phase, ps.Status.Attempts)
	}
}

// Rechecks that fall due while the integration's batch is in flight (or
// waiting its turn at arXiv's one request per 3 s) become pending and join
// the next batch: a wave of rechecks is a few requests, not one per sync.
func TestRechecksThatFallDueDuringABatchShareTheNextRequest(t *testing.T) {
	f := newFixture(t, "2301.00001", "2301.00002")
	down := true
	f.arxiv.fetch = func(ids []string) (map[string]arxiv.Paper, []string, error) {
		if down {
			return nil, nil, &outbound.Error{Upstream: "arxiv", Class: outbound.Transient, Status: 503, Reason: "HTTP 503"}
		}
		found := map[string]arxiv.Paper{}
		for _, id := range ids {
			found[id] = paper(id)
		}
		return found, nil, nil
	}
	for range 4 { // both exhaust together, in one batch per attempt
		f.reconcile(t, 0)
	}
	for i := range 2 {
		if ps := f.sync(t, i); ps.Status.Phase != v1alpha1.SyncFailed {
			t.Fatalf("sync %d is %s, want Failed", i, ps.Status.Phase)
		}
	}
	down = false
	requests := f.arxiv.calls.Load()
	f.clk.SetTime(t0.Add(time.Minute))
	unlock, ok := f.r.batcher.TryLock(client.ObjectKey{Namespace: "ns", Name: "ni"})
	if !ok { // a batch of the integration is in flight
		t.Fatal("the batch lock is taken")
	}
	if out := f.reconcile(t, 1); !out.IsWait() || out.After() != BatchBusy {
		t.Fatalf("a recheck during a batch: %s %v, want to wait for the batch", out, out.After())
	}
	if ps := f.sync(t, 1); ps.Status.Phase != v1alpha1.SyncPending || ps.Status.CompletedAt != nil {
		t.Fatalf("the waiting recheck is %s, want Pending for the next batch", ps.Status.Phase)
	}
	unlock()
	f.reconcile(t, 0)
	if n := f.arxiv.calls.Load() - requests; n != 1 {
		t.Fatalf("%d arXiv requests for two rechecks, want 1", n)
	}
	for i := range 2 {
		if ps := f.sync(t, i); ps.Status.Phase != v1alpha1.SyncSucceeded {
			t.Fatalf("sync %d is %s, want Succeeded", i, ps.Status.Phase)
		}
	}
}
