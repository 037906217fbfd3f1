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

package runner_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// The runner is generic; SlideStock is a convenient kind to drive it
// with, on a real API server, by calling Reconcile directly (no manager,
// no waiting).

type phaseLog struct {
	mu    sync.Mutex
	calls []string
}

func (p *phaseLog) phase(name string, out func() runner.Outcome) runner.Phase[*v1alpha1.SlideStock] {
	return func(context.Context, *v1alpha1.SlideStock, *runner.Run) runner.Outcome {
		p.mu.Lock()
		p.calls = append(p.calls, name)
		p.mu.Unlock()
		return out()
	}
}

func newStock(t *testing.T, suspend bool) types.NamespacedName {
	t.Helper()
	ns, err := env.Namespace("runner")
	if err != nil {
		t.Fatal(err)
	}
	s := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Name: "deck", Namespace: ns},
		Spec: v1alpha1.SlideStockSpec{URL: "https://speakerdeck.com/jnunemaker/atom", Suspend: suspend}}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return client.ObjectKeyFromObject(s)
}

func get(t *testing.T, key types.NamespacedName) *v1alpha1.SlideStock {
	t.Helper()
	s := &v1alpha1.SlideStock{}
	if err := env.Client.Get(context.Background(), key, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func newRunner(clk *clocktesting.FakePassiveClock, normal ...runner.Phase[*v1alpha1.SlideStock]) *runner.Runner[*v1alpha1.SlideStock] {
	return &runner.Runner[*v1alpha1.SlideStock]{
		Client: env.Client, Clock: clk,
		New:    func() *v1alpha1.SlideStock { return &v1alpha1.SlideStock{} },
		Normal: normal,
	}
}

// logged captures what the runner logs.
func logged() (context.Context, *bytes.Buffer) {
	var buf bytes.Buffer
	var mu sync.Mutex
	l := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		buf.WriteString(args + "\n")
	}, funcr.Options{})
	return log.IntoContext(context.Background(), l.WithValues("slidestock", "ns/deck")), &buf
}

func TestPhasesRunInOrderAndTheNextDeadlineIsKeptToTheSecond(t *testing.T) {
	key := newStock(t, false)
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	var pl phaseLog
	r := newRunner(clk,
		pl.phase("first", runner.Continue),
		func(_ context.Context, s *v1alpha1.SlideStock, run *runner.Run) runner.Outcome {
			pl.phase("second", runner.Continue)(nil, s, run)
			run.RequeueAt(clk.Now().Add(time.Hour))
			run.RequeueAt(clk.Now().Add(10 * time.Minute))
			return runner.Continue()
		})
	r.Ready = func(s *v1alpha1.SlideStock) string { return "stocked " + s.Spec.URL }
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(pl.calls, ",") != "first,second" {
		t.Fatalf("phases ran %v", pl.calls)
	}
	// Never early, and late by at most a second: a link expiring in 14
	// days must not be cleaned up a day late (±10 % would allow it).
	if res.RequeueAfter < 10*time.Minute || res.RequeueAfter > 10*time.Minute+outbound.MaxDeadlineSpread {
		t.Fatalf("requeue after %v, want the earliest deadline (10m), put off by at most %s", res.RequeueAfter, outbound.MaxDeadlineSpread)
	}
	// The runner, not a phase, marks the object Ready once every phase
	// continued, with the kind's message.
	s := get(t, key)
	c := status.Get(s, v1alpha1.ReadyCondition)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.SucceededReason || c.Message != "stocked "+s.Spec.URL ||
		s.Status.ObservedGeneration != s.Generation {
		t.Fatalf("Ready %+v, observed %d of %d", c, s.Status.ObservedGeneration, s.Generation)
	}
}

func TestAPhaseThatDoesNotContinueLeavesReadyAlone(t *testing.T) {
	key := newStock(t, false)
	clk := clocktesting.NewFakePassiveClock(time.Now())
	r := newRunner(clk, func(context.Context, *v1alpha1.SlideStock, *runner.Run) runner.Outcome { return runner.Continue() },
		func(context.Context, *v1alpha1.SlideStock, *runner.Run) runner.Outcome {
			return runner.Wait(time.Minute)
		})
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	if s := get(t, key); status.Get(s, v1alpha1.ReadyCondition) != nil || s.Status.ObservedGeneration == s.Generation {
		t.Fatalf("a waiting object was marked: %+v", s.Status)
	}
	r.Normal = r.Normal[:1]
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	if c := status.Get(get(t, key), v1alpha1.ReadyCondition); c == nil || c.Status != metav1.ConditionTrue || c.Message != "reconciled" {
		t.Fatalf("without a Ready hook: %+v, want Ready with the default message", c)
	}
}

func TestOutcomesBecomeStatusRequeuesAndOneLogLine(t *testing.T) {
	boom := &outbound.Error{Upstream: "speakerdeck", Class: outbound.Transient, Status: 503, Reason: "HTTP 503"}
	throttled := &outbound.Error{Upstream: "speakerdeck", Class: outbound.Transient, Status: 429, Reason: "HTTP 429", RetryAfter: 30 * time.Second}
	for _, tc := range []struct {
		name      string
		out       runner.Outcome
		reason    string
		stalled   bool
		min, max  time.Duration
		wantError bool
	}{
		{name: "a stall marks Stalled and does not requeue", out: runner.Stall(v1alpha1.InvalidSpecReason, errors.New("bad spec")),
			reason: v1alpha1.InvalidSpecReason, stalled: true},
		{name: "a stall on a Secret nobody watches rechecks slowly", out: runner.Stall(v1alpha1.SecretNotFoundReason, errors.New("no Secret")).RecheckAfter(2 * time.Minute),
			reason: v1alpha1.SecretNotFoundReason, stalled: true, min: 108 * time.Second, max: 132 * time.Second},
		{name: "a transient failure requeues on the schedule", out: runner.Transient(v1alpha1.UpstreamUnavailableReason, boom),
			reason: v1alpha1.UpstreamUnavailableReason, min: 900 * time.Millisecond, max: 1100 * time.Millisecond},
		{name: "a transient failure honours Retry-After", out: runner.Transient(v1alpha1.UpstreamUnavailableReason, throttled),
			reason: v1alpha1.UpstreamUnavailableReason, min: 30 * time.Second, max: 30 * time.Second},
		{name: "a retry requeues when the phase says, put off by at most 10 % and a second, never earlier", out: runner.Retry(v1alpha1.UpstreamUnavailableReason, boom, 4*time.Second),
			reason: v1alpha1.UpstreamUnavailableReason, min: 4 * time.Second, max: 4*time.Second + 400*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := newStock(t, false)
			clk := clocktesting.NewFakePassiveClock(time.Now())
			r := newRunner(clk, func(context.Context, *v1alpha1.SlideStock, *runner.Run) runner.Outcome { return tc.out })
			ctx, buf := logged()
			for range 3 {
				res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
				if err != nil {
					t.Fatal(err)
				}
				if res.RequeueAfter < tc.min || res.RequeueAfter > tc.max {
					t.Fatalf("requeue after %v, want %v..%v", res.RequeueAfter, tc.min, tc.max)
				}
				if tc.out.IsTransient() {
					break // the next one backs off further
				}
			}
			s := get(t, key)
			ready := status.Get(s, v1alpha1.ReadyCondition)
			if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != tc.reason || ready.Message != tc.out.Err().Error() {
				t.Fatalf("Ready %+v", ready)
			}
			if got := status.IsTrue(s, v1alpha1.StalledCondition); got != tc.stalled {
				t.Fatalf("Stalled %v, want %v", got, tc.stalled)
			}
			if got := status.IsTrue(s, v1alpha1.ReconcilingCondition); got == tc.stalled {
				t.Fatalf("Reconciling %v, want %v", got, !tc.stalled)
			}
			if n := strings.Count(buf.String(), `"msg"="reconcile failed"`); n != 1 || !strings.Contains(buf.String(), tc.reason) || !strings.Contains(buf.String(), "ns/deck") {
				t.Fatalf("logged %d failures, want 1 with the key and reason:\n%s", n, buf.String())
			}
		})
	}
}

// A stall's rechecks thin out the longer it lasts for one reason (the
// API server reads they cost add up over thousands of waiting objects),
// never beyond MaxStallRecheck; a new reason starts again from its own
// RecheckAfter.
func TestAStallRechecksLessOftenTheLongerItLasts(t *testing.T) {
	key := newStock(t, false)
	start := time.Now()
	clk := clocktesting.NewFakePassiveClock(start)
	reason := v1alpha1.SecretNotFoundReason
	r := newRunner(clk, func(context.Context, *v1alpha1.SlideStock, *runner.Run) runner.Outcome {
		return runner.Stall(reason, errors.New("no Secret")).RecheckAfter(2 * time.Minute)
	})
	for _, step := range []struct {
		stalledFor time.Duration
		reason     string
		want       time.Duration
	}{
		{0, v1alpha1.SecretNotFoundReason, 2 * time.Minute},
		{time.Minute, v1alpha1.SecretNotFoundReason, 2 * time.Minute},
		{10 * time.Minute, v1alpha1.SecretNotFoundReason, 10 * time.Minute},
		{48 * time.Hour, v1alpha1.SecretNotFoundReason, runner.MaxStallRecheck},
		{49 * time.Hour, v1alpha1.SecretReadFailedReason, 2 * time.Minute},
	} {
		clk.SetTime(start.Add(step.stalledFor))
		reason = step.reason
		res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
		if err != nil {
			t.Fatal(err)
		}
		// The transition time is stamped in whole seconds, and the
		// recheck jittered by up to 10 % either way.
		if lo, hi := step.want-step.want/10-2*time.Second, step.want+step.want/10+2*time.Second; res.RequeueAfter < lo || res.RequeueAfter > hi {
			t.Fatalf("stalled for %s (%s): recheck after %s, want %s..%s", step.stalledFor, step.reason, res.RequeueAfter, lo, hi)
		}
	}
}

func TestAFailureKeepsTheDeadlinesOfThePhasesBeforeIt(t *testing.T) {
	key := newStock(t, false)
	clk := clocktesting.NewFakePassiveClock(time.Now())
	promise := func(after time.Duration) runner.Phase[*v1alpha1.SlideStock] {
		return func(_ context.Context, _ *v1alpha1.SlideStock, run *runner.Run) runner.Outcome {
			run.RequeueAt(clk.Now().Add(after))
			return runner.Continue()
		}
	}
	fail := func(context.Context, *v1alpha1.SlideStock, *runner.Run) runner.Outcome {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, errors.New("down"))
	}
	r := newRunner(clk, promise(3*time.Second), promise(-time.Minute), fail)
	r.Transient = outbound.Schedule{Base: time.Minute, Jitter: outbound.NoJitter}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	if err != nil {
		t.Fatal(err)
	}
	// The promise in 3 s is kept (late by at most 10 %), not put off by
	// the failure's minute; the deadline already due is not.
	if res.RequeueAfter < 3*time.Second || res.RequeueAfter > 3*time.Second+300*time.Millisecond {
		t.Fatalf("requeue after %v, want the 3 s deadline", res.RequeueAfter)
	}
	r.Normal = []runner.Phase[*v1alpha1.SlideStock]{promise(-time.Minute), fail}
	if res, _ := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); res.RequeueAfter != 2*time.Minute {
		t.Fatalf("with only a due deadline: requeue after %v, want the schedule's second step, 2m", res.RequeueAfter)
	}
}

func TestTransientFailuresBackOffAndSuccessResetsThem(t *testing.T) {
	key := newStock(t, false)
	clk := clocktesting.NewFakePassiveClock(time.Now())
	fail := true
	r := newRunner(clk, func(_ context.Context, s *v1alpha1.SlideStock, _ *runner.Run) runner.Outcome {
		if fail {
			return runner.Transient(v1alpha1.UpstreamUnavailableReason, errors.New("down"))
		}
		return runner.Continue()
	})
	r.Transient = outbound.Schedule{Base: time.Second, Max: 5 * time.Minute, Jitter: outbound.NoJitter}
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second} {
		res, _ := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
		if res.RequeueAfter != want {
			t.Fatalf("failure %d requeued after %v, want %v", i+1, res.RequeueAfter, want)
		}
	}
	fail = false
	if res, _ := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); res.RequeueAfter != 0 {
		t.Fatalf("success requeued after %v", res.RequeueAfter)
	}
	fail = true
	if res, _ := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); res.RequeueAfter != time.Second {
		t.Fatalf("a failure after a success requeued after %v, want the schedule's start", res.RequeueAfter)
	}
}

// A phase whose write met a newer version of what it wrote (a sweep wrote
// the same object meanwhile) has learnt nothing about the object: a Ready
// object stays Ready, nothing is logged as a failure, and the attempt is
// not counted, so the next real failure starts the schedule afresh.
func TestAConflictIsReadAgainNotShownAsAFailure(t *testing.T) {
	key := newStock(t, false)
	ctx, buf := logged()
	clk := clocktesting.NewFakePassiveClock(time.Now())
	var out runner.Outcome
	r := newRunner(clk, func(context.Context, *v1alpha1.SlideStock, *runner.Run) runner.Outcome { return out })
	r.Transient = outbound.Schedule{Base: time.Second, Max: 5 * time.Minute, Jitter: outbound.NoJitter}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil || !status.IsTrue(get(t, key), v1alpha1.ReadyCondition) {
		t.Fatalf("the first reconcile: %v, Ready %+v", err, status.Get(get(t, key), v1alpha1.ReadyCondition))
	}

	// A real conflict: the phase writes a copy that another writer has
	// changed since it was read.
	stale := get(t, key)
	fresh := stale.DeepCopy()
	fresh.Annotations = map[string]string{"another": "writer"}
	if err := env.Client.Update(context.Background(), fresh); err != nil {
		t.Fatal(err)
	}
	stale.Annotations = map[string]string{"this": "phase"}
	err := env.Client.Update(context.Background(), stale)
	if !apierrors.IsConflict(err) {
		t.Fatalf("the stale write: %v, want a conflict", err)
	}
	out = runner.Transient(v1alpha1.UpstreamUnavailableReason, errors.Join(errors.New("update the object"), err))
	for i := range 2 {
		res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
		if err != nil {
			t.Fatal(err)
		}
		if res.RequeueAfter != time.Second {
			t.Fatalf("conflict %d requeued after %v, want the schedule's first wait, 1s", i+1, res.RequeueAfter)
		}
	}
	if c := status.Get(get(t, key), v1alpha1.ReadyCondition); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("after a conflict, Ready %+v, want it as it was (True)", c)
	}
	if strings.Contains(buf.String(), "reconcile failed") {
		t.Fatalf("a conflict was logged as a failure:\n%s", buf.String())
	}

	// A failure that is not a conflict is one, and the first one.
	out = runner.Transient(v1alpha1.UpstreamUnavailableReason, errors.New("down"))
	res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != time.Second {
		t.Fatalf("the first failure after two conflicts requeued after %v, want 1s: the conflicts were counted", res.RequeueAfter)
	}
	if c := status.Get(get(t, key), v1alpha1.ReadyCondition); c == nil || c.Status != metav1.ConditionFalse || c.Message != "down" {
		t.Fatalf("after a failure, Ready %+v, want False with its message", c)
	}
}

func TestSuspendRunsNoPhaseAndSaysSo(t *testing.T) {
	key := newStock(t, true)
	var pl phaseLog
	r := newRunner(clocktesting.NewFakePassiveClock(time.Now()), pl.phase("normal", runner.Continue))
	r.Suspend = []runner.Phase[*v1alpha1.SlideStock]{pl.phase("release", runner.Continue)}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	if err != nil || res.RequeueAfter != 0 {
		t.Fatalf("res %+v err %v", res, err)
	}
	if strings.Join(pl.calls, ",") != "release" {
		t.Fatalf("phases %v, want only the suspend phases", pl.calls)
	}
	s := get(t, key)
	c := status.Get(s, v1alpha1.ReadyCondition)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.SuspendedReason || s.Status.ObservedGeneration != s.Generation {
		t.Fatalf("Ready %+v, observed %d of %d", c, s.Status.ObservedGeneration, s.Generation)
	}
}

func TestRequestedAtIsAcknowledgedOnce(t *testing.T) {
	key := newStock(t, false)
	s := get(t, key)
	s.Annotations = map[string]string{v1alpha1.RequestedAtAnnotation: "now"}
	if err := env.Client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	var seen []bool
	r := newRunner(clocktesting.NewFakePassiveClock(time.Now()), func(_ context.Context, _ *v1alpha1.SlideStock, run *runner.Run) runner.Outcome {
		seen = append(seen, run.Requested)
		return runner.Done()
	})
	for range 2 {
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 2 || !seen[0] || seen[1] || get(t, key).Status.LastHandledRequestedAt != "now" {
		t.Fatalf("requested %v, handled %q", seen, get(t, key).Status.LastHandledRequestedAt)
	}
}

func TestTheFinalizerIsReleasedOrGivenUpAfterABound(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		release     runner.Outcome
		after       time.Duration
		wantDeleted bool
	}{
		{"a release that completes removes the finalizer", runner.Continue(), 0, true},
		{"a release that fails keeps it before the bound", runner.Transient(v1alpha1.UpstreamUnavailableReason, errors.New("down")), time.Minute, false},
		{"a release whose credentials are gone gives up after the bound", runner.Stall(v1alpha1.SecretNotFoundReason, errors.New("no Secret")), 11 * time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := newStock(t, false)
			clk := clocktesting.NewFakePassiveClock(time.Now())
			released := 0
			r := newRunner(clk, func(context.Context, *v1alpha1.SlideStock, *runner.Run) runner.Outcome { return runner.Done() })
			r.Delete = []runner.Phase[*v1alpha1.SlideStock]{func(context.Context, *v1alpha1.SlideStock, *runner.Run) runner.Outcome {
				released++
				return tc.release
			}}
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
				t.Fatal(err)
			}
			if !controllerutil.ContainsFinalizer(get(t, key), v1alpha1.Finalizer) {
				t.Fatal("no finalizer was added")
			}
			if err := env.Client.Delete(ctx, get(t, key)); err != nil {
				t.Fatal(err)
			}
			clk.SetTime(get(t, key).DeletionTimestamp.Add(tc.after))
			res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
			if err != nil {
				t.Fatal(err)
			}
			s := &v1alpha1.SlideStock{}
			err = env.Client.Get(ctx, key, s)
			if deleted := client.IgnoreNotFound(err) == nil && err != nil; deleted != tc.wantDeleted || released != 1 {
				t.Fatalf("deleted %v (%v), released %d times; want deleted %v", deleted, err, released, tc.wantDeleted)
			}
			if !tc.wantDeleted && (res.RequeueAfter <= 0 || res.RequeueAfter > runner.DefaultDeleteGiveUp) {
				t.Fatalf("requeue after %v, want a retry before the give-up", res.RequeueAfter)
			}
		})
	}
}

func TestDeleteAfterWaitsOutTheRetentionAndDeletesOnlyThatObject(t *testing.T) {
	ctx := context.Background()
	key := newStock(t, false)
	old := get(t, key)
	done := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	out := runner.DeleteAfter(ctx, env.Client, old, done, time.Hour, done.Add(59*time.Minute))
	if !out.IsWait() || out.After() != time.Minute {
		t.Fatalf("before the retention: %s after %s, want wait 1m", out, out.After())
	}
	// A new object of the same name is not the one that finished.
	if err := env.Client.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	newStockIn(t, key)
	if out := runner.DeleteAfter(ctx, env.Client, old, done, time.Hour, done.Add(time.Hour)); out.IsDone() {
		t.Fatal("DeleteAfter deleted the new object of the same name")
	}
	get(t, key)
	if out := runner.DeleteAfter(ctx, env.Client, get(t, key), done, time.Hour, done.Add(time.Hour)); !out.IsDone() {
		t.Fatalf("after the retention: %s (%v)", out, out.Err())
	}
	if err := env.Client.Get(ctx, key, &v1alpha1.SlideStock{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the object is still there: %v", err)
	}
}

func newStockIn(t *testing.T, key types.NamespacedName) {
	t.Helper()
	s := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
		Spec: v1alpha1.SlideStockSpec{URL: "https://speakerdeck.com/jnunemaker/atom"}}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// A manager that stops cancels its reconciles' context; a reconcile in
// flight sees Stopping, finishes the call it is in and writes its status
// on a context that is cancelled only after the grace.
func TestAReconcileInFlightWhenTheManagerStopsWritesWhatItDid(t *testing.T) {
	key := newStock(t, false)
	clk := clocktesting.NewFakePassiveClock(time.Now())
	deadline := time.Now().Add(time.Hour)
	mgr, stop := context.WithDeadline(context.Background(), deadline)
	var stoppingBefore, stoppingAfter, keptDeadline bool
	var errAfter error
	graceEnded := make(chan error, 1)
	r := newRunner(clk, func(ctx context.Context, s *v1alpha1.SlideStock, _ *runner.Run) runner.Outcome {
		stoppingBefore = runner.Stopping(ctx)
		d, ok := ctx.Deadline()
		keptDeadline = ok && d.Equal(deadline)
		stop() // the manager stops while this phase is in its upstream call
		stoppingAfter, errAfter = runner.Stopping(ctx), ctx.Err()
		s.Status.Title = "fetched before the stop"
		go func() { <-ctx.Done(); graceEnded <- ctx.Err() }()
		return runner.Continue()
	})
	r.ShutdownGrace = 50 * time.Millisecond
	if _, err := r.Reconcile(mgr, ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatalf("the status write after the stop: %v", err)
	}
	if !keptDeadline {
		t.Error("the phase's context lost the reconcile's deadline")
	}
	if stoppingBefore || !stoppingAfter || errAfter != nil {
		t.Fatalf("Stopping %v before and %v after the stop, ctx.Err() %v after it: want false, true, nil", stoppingBefore, stoppingAfter, errAfter)
	}
	if got := get(t, key).Status.Title; got != "fetched before the stop" {
		t.Fatalf("status title %q: what the phase did was not written", got)
	}
	// The phase's context ends no later than its reconcile (or the grace).
	select {
	case err := <-graceEnded:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the phase's context ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the phase's context outlived its reconcile")
	}
	// Without a stop, Stopping is false and nothing is cancelled early.
	if runner.Stopping(context.Background()) {
		t.Fatal("Stopping on a live context")
	}
}

// The grace bounds a reconcile that does not finish: its context is
// cancelled once the grace is spent after the stop.
func TestTheShutdownGraceEndsAReconcileThatDoesNotFinish(t *testing.T) {
	key := newStock(t, false)
	clk := clocktesting.NewFakePassiveClock(time.Now())
	mgr, stop := context.WithCancel(context.Background())
	var ended error
	r := newRunner(clk, func(ctx context.Context, _ *v1alpha1.SlideStock, _ *runner.Run) runner.Outcome {
		stop()
		select {
		case <-ctx.Done(): // a hung upstream call, cut by the grace
			ended = ctx.Err()
		case <-time.After(time.Minute):
		}
		return runner.Continue()
	})
	r.ShutdownGrace = 20 * time.Millisecond
	_, _ = r.Reconcile(mgr, ctrl.Request{NamespacedName: key})
	if !errors.Is(ended, context.Canceled) {
		t.Fatalf("a phase hung past the grace ended with %v, want its context cancelled", ended)
	}
}
