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

package children_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/children"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// Unit tests of the Batcher on controller-runtime's fake client, with the
// PaperSyncs of a NotionIntegration as children. Reads go through a
// cache that can be frozen (lag): it then answers with the copies it held,
// as an informer that has not seen the last writes yet.

type (
	child  = v1alpha1.PaperSync
	parent = v1alpha1.NotionIntegration
	batch  = children.Batch[*child, *parent]
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

type fixture struct {
	api   client.Client // the API server
	clk   *clocktesting.FakePassiveClock
	b     *children.Batcher[*child, *parent]
	names []string

	mu      sync.Mutex
	frozen  map[types.NamespacedName]*child // what the lagging cache still shows
	batches [][]string                      // each batch's members, by name
	tallies []children.Tally
	// work is each member's work; it finishes the member when unset.
	work func(b *batch, m *child)
	// refuse names the children whose status writes the API server
	// refuses; unwritten collects what Unwritten was told.
	refuse    map[string]bool
	unwritten []*child
}

func (f *fixture) Tally(_ types.NamespacedName, t children.Tally) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tallies = append(f.tallies, t)
}

// newFixture makes a Ready integration "ni" (retention 1 h) and n pending
// syncs c0…c(n-1), created a second apart.
func newFixture(t *testing.T, n int) *fixture {
	t.Helper()
	f := &fixture{clk: clocktesting.NewFakePassiveClock(t0), frozen: map[types.NamespacedName]*child{}}
	ni := &parent{ObjectMeta: metav1.ObjectMeta{Name: "ni", Namespace: "ns", UID: "uid-ni"}}
	ni.Spec.SyncRetention = metav1.Duration{Duration: time.Hour}
	status.MarkReady(ni, v1alpha1.SucceededReason, "ok")
	objs := []client.Object{ni}
	for i := range n {
		name := fmt.Sprintf("c%d", i)
		objs = append(objs, &child{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(i) * time.Second))},
			Spec: v1alpha1.PaperSyncSpec{IntegrationRef: v1alpha1.LocalObjectReference{Name: "ni"}, ArxivID: name}})
		f.names = append(f.names, name)
	}
	f.api = fake.NewClientBuilder().WithScheme(setup.Scheme()).WithObjects(objs...).
		WithStatusSubresource(&child{}, &parent{}).
		WithIndex(&child{}, index.PendingChildren, index.PendingChild).Build()
	cache := interceptor.NewClient(f.api.(client.WithWatch), interceptor.Funcs{Get: f.get, List: f.list, SubResourcePatch: f.statusPatch})
	f.b = &children.Batcher[*child, *parent]{
		Client: cache, Grants: fakeGrants(cache), Parent: "integration",
		Accepting: func(p *parent) (bool, string) { return status.IsTrue(p, v1alpha1.ReadyCondition), "not Ready" },
		Retention: func(p *parent) time.Duration { return p.Spec.SyncRetention.Duration },
		Max:       3,
		Less:      func(a, b *child) bool { return a.CreationTimestamp.Before(&b.CreationTimestamp) },
		Work:      f.batch,
		Tallies:   f,
		Unwritten: func(c *child) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.unwritten = append(f.unwritten, c.DeepCopy())
		},
	}
	return f
}

// fakeGrants are grant phases whose tokens are the test's.
func fakeGrants(c client.Client) *grant.Phases[*parent] {
	return grant.New[*parent](grant.Deps{Client: c, Tokens: &testenv.FakeTokens{}}, oauth.Target{})
}

// statusPatch refuses the status writes of the children in f.refuse.
func (f *fixture) statusPatch(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	f.mu.Lock()
	refused := f.refuse[obj.GetName()]
	f.mu.Unlock()
	if refused {
		return apierrors.NewServiceUnavailable("refused by the test")
	}
	return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
}

// batch is the kind's work: each member is attempted (work).
func (f *fixture) batch(_ context.Context, b *batch) runner.Outcome {
	f.mu.Lock()
	var names []string
	for _, m := range b.Members {
		names = append(names, m.Name)
	}
	f.batches = append(f.batches, names)
	f.mu.Unlock()
	for _, m := range b.Members {
		m.Status.Attempts++
		if f.work != nil {
			f.work(b, m)
			continue
		}
		b.Succeeded(m, v1alpha1.SucceededReason, "done")
		b.Tally.Done++
	}
	return runner.Wait(time.Minute)
}

func (f *fixture) get(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	f.mu.Lock()
	stale, ok := f.frozen[key]
	f.mu.Unlock()
	if ps, isChild := obj.(*child); ok && isChild {
		stale.DeepCopyInto(ps)
		return nil
	}
	return c.Get(ctx, key, obj, opts...)
}

func (f *fixture) list(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.List(ctx, list, opts...); err != nil {
		return err
	}
	if l, ok := list.(*v1alpha1.PaperSyncList); ok {
		f.mu.Lock()
		defer f.mu.Unlock()
		for i := range l.Items {
			if stale, ok := f.frozen[client.ObjectKeyFromObject(&l.Items[i])]; ok {
				l.Items[i] = *stale.DeepCopy()
			}
		}
	}
	return nil
}

// lag freezes the cache's copies of the children as they are now.
func (f *fixture) lag(t *testing.T) {
	t.Helper()
	for _, name := range f.names {
		c := f.child(t, name)
		f.mu.Lock()
		f.frozen[client.ObjectKeyFromObject(c)] = c
		f.mu.Unlock()
	}
}

// catchUp lets the cache show what the API server holds.
func (f *fixture) catchUp() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = map[types.NamespacedName]*child{}
}

// reconcile runs the phases for one child as the runner would, and writes
// its status as the runner does.
func (f *fixture) reconcile(t *testing.T, name string) runner.Outcome {
	t.Helper()
	ctx := context.Background()
	obj := &child{}
	if err := f.b.Client.Get(ctx, types.NamespacedName{Namespace: "ns", Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	run := &runner.Run{Now: f.clk.Now(), Patcher: status.NewPatcher(f.api, obj)}
	out := runner.Continue()
	for _, p := range []runner.Phase[*child]{f.b.CatchUp, f.b.Collect, f.b.Batch} {
		if out = p(ctx, obj, run); !out.IsContinue() {
			break
		}
	}
	if err := run.Patcher.Patch(ctx, obj); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return out
}

func (f *fixture) child(t *testing.T, name string) *child {
	t.Helper()
	c := &child{}
	if err := f.api.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: name}, c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestABatchIsTheChildAndTheOldestOthersUpToMax(t *testing.T) {
	f := newFixture(t, 5)
	out := f.reconcile(t, "c3")
	if len(f.batches) != 1 || fmt.Sprint(f.batches[0]) != "[c3 c0 c1]" {
		t.Fatalf("batches %v, want one of c3 then the two oldest", f.batches)
	}
	// Finished: it waits for its retention, then Collect deletes it.
	if !out.IsWait() || out.After() != time.Hour {
		t.Fatalf("outcome %s after %v, want the retention", out, out.After())
	}
	for _, name := range []string{"c0", "c1", "c3"} {
		if c := f.child(t, name); c.Status.Phase != v1alpha1.SyncSucceeded || c.Status.Attempts != 1 {
			t.Fatalf("%s: %+v", name, c.Status)
		}
	}
	if len(f.tallies) != 1 || f.tallies[0].Done != 3 {
		t.Fatalf("tallies %+v, want one of 3 done", f.tallies)
	}
}

func TestAChildWhoseParentTakesNoWorkWaitsForIt(t *testing.T) {
	f := newFixture(t, 1)
	ni := &parent{}
	if err := f.api.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "ni"}, ni); err != nil {
		t.Fatal(err)
	}
	status.MarkStalled(ni, "Broken", "broken")
	if err := f.api.Status().Update(context.Background(), ni); err != nil {
		t.Fatal(err)
	}
	out := f.reconcile(t, "c0")
	c := f.child(t, "c0")
	if r := status.Get(c, v1alpha1.ReadyCondition); len(f.batches) != 0 || !out.IsWait() || out.After() != children.DependencyRecheck ||
		r == nil || r.Reason != v1alpha1.DependencyNotReadyReason || r.Message != "not Ready" || c.Status.Phase != v1alpha1.SyncPending {
		t.Fatalf("batches %v, outcome %s %v, status %+v", f.batches, out, out.After(), c.Status)
	}
}

func TestOneBatchAtATimePerParent(t *testing.T) {
	f := newFixture(t, 1)
	unlock, ok := f.b.TryLock(types.NamespacedName{Namespace: "ns", Name: "ni"})
	if !ok {
		t.Fatal("the lock is taken")
	}
	if out := f.reconcile(t, "c0"); !out.IsWait() || out.After() != children.BatchBusy || len(f.batches) != 0 {
		t.Fatalf("during another batch: %s %v, batches %v", out, out.After(), f.batches)
	}
	unlock()
	f.reconcile(t, "c0")
	if len(f.batches) != 1 {
		t.Fatalf("batches %v", f.batches)
	}
}

// A child that meets its parent's batch in flight (the next edit of a
// page while the last one's statuses are written) is woken the moment
// that batch ends, not a BatchBusy later: one such child that the batch
// did not take, whose own batch takes the others. A lock let go with no
// batch run wakes nobody: its holder comes back for the waiting itself.
func TestAChildThatMetTheBatchIsWokenAtItsEnd(t *testing.T) {
	f := newFixture(t, 4)
	f.b.Max = 2
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	if err := f.b.StartWakes(q); err != nil {
		t.Fatal(err)
	}
	unlock, ok := f.b.TryLock(types.NamespacedName{Namespace: "ns", Name: "ni"})
	if !ok {
		t.Fatal("the lock is taken")
	}
	for _, name := range []string{"c1", "c2", "c3"} {
		if out := f.reconcile(t, name); !out.IsWait() || out.After() != children.BatchBusy {
			t.Fatalf("%s during another batch: %s %v", name, out, out.After())
		}
	}
	unlock()
	if q.Len() != 0 {
		t.Fatalf("%d woken by a lock that ran no batch", q.Len())
	}
	f.reconcile(t, "c0") // the batch of c0 and c1, the oldest
	woken := map[string]bool{}
	for q.Len() > 0 {
		r, _ := q.Get()
		q.Done(r)
		woken[r.Name] = true
	}
	// c1 is woken as a finished member of the batch; of c2 and c3, one.
	if len(woken) != 2 || !woken["c1"] || woken["c2"] == woken["c3"] {
		t.Fatalf("woken when the batch ended: %v, want c1 and one of c2, c3", woken)
	}
	next, other := "c2", "c3"
	if woken["c3"] {
		next, other = other, next
	}
	f.reconcile(t, next) // its batch: itself first, then the other
	if want := fmt.Sprintf("[[c0 c1] [%s %s]]", next, other); fmt.Sprint(f.batches) != want {
		t.Fatalf("batches %v, want %s", f.batches, want)
	}
}

// The cache lags: a member a batch finished is not taken again by the next
// batch, nor is the reconciled child when its own copy is stale.
func TestAWriteTheCacheDoesNotShowYetIsRemembered(t *testing.T) {
	f := newFixture(t, 3)
	f.b.Max = 2
	f.lag(t)
	f.reconcile(t, "c0") // finishes c0 and c1
	f.reconcile(t, "c2") // the cache still shows c1 pending
	f.reconcile(t, "c1") // and c1 itself
	if fmt.Sprint(f.batches) != "[[c0 c1] [c2]]" {
		t.Fatalf("batches %v: a finished child was taken again", f.batches)
	}
	if c := f.child(t, "c1"); c.Status.Attempts != 1 {
		t.Fatalf("c1 attempted %d times", c.Status.Attempts)
	}
	// Once the cache shows the writes, the memory of them goes.
	f.catchUp()
	f.reconcile(t, "c1")
	if f.b.Remembers("uid-c1") {
		t.Fatal("a write the cache shows is still remembered")
	}
}

// Attempts counted by one batch are counted on from by the next, however
// stale the cache.
func TestAttemptsAreCountedOnFromTheLastWrite(t *testing.T) {
	f := newFixture(t, 2)
	f.work = func(b *batch, m *child) {
		m.Status.Phase, m.Status.LastError = v1alpha1.SyncPending, "busy"
		b.Later(m, time.Second)
	}
	f.lag(t)
	for range 3 {
		f.reconcile(t, "c0")
	}
	for _, name := range []string{"c0", "c1"} {
		if c := f.child(t, name); c.Status.Attempts != 3 {
			t.Fatalf("%s: %d attempts after three, counted from the stale copy", name, c.Status.Attempts)
		}
	}
}

// A later version in the cache (a person's annotation) is not taken for a
// lagging one: the memory is dropped and the cache's copy used.
func TestALaterVersionInTheCacheWins(t *testing.T) {
	f := newFixture(t, 1)
	f.work = func(_ *batch, m *child) { m.Status.Phase = v1alpha1.SyncPending }
	f.reconcile(t, "c0")
	c := f.child(t, "c0")
	c.Annotations = map[string]string{"example.com/touched": "yes"}
	if err := f.api.Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, "c0")
	if c := f.child(t, "c0"); c.Status.Attempts != 2 || c.Annotations["example.com/touched"] != "yes" {
		t.Fatalf("the later version was not the one worked on: %+v", c)
	}
}

// A member whose status write is refused is told to Unwritten with the
// status the batch meant to write (what the kind's outside call did is
// then known only to this process), and the others are written.
func TestAMemberWhoseWriteIsRefusedIsToldToUnwritten(t *testing.T) {
	f := newFixture(t, 2)
	f.refuse = map[string]bool{"c1": true}
	f.reconcile(t, "c0")
	if c0 := f.child(t, "c0"); c0.Status.Phase != v1alpha1.SyncSucceeded {
		t.Fatalf("c0 not written: %+v", c0.Status)
	}
	if c1 := f.child(t, "c1"); c1.Status.Phase != "" || c1.Status.Attempts != 0 {
		t.Fatalf("c1's refused write shows: %+v", c1.Status)
	}
	if len(f.unwritten) != 1 || f.unwritten[0].Name != "c1" || f.unwritten[0].Status.Phase != v1alpha1.SyncSucceeded || f.unwritten[0].Status.Attempts != 1 {
		t.Fatalf("Unwritten told %+v, want c1 as meant (Succeeded, 1 attempt)", f.unwritten)
	}
}

func TestAFinishedChildIsDeletedAfterItsRetention(t *testing.T) {
	f := newFixture(t, 1)
	f.reconcile(t, "c0")
	f.clk.SetTime(t0.Add(30 * time.Minute))
	if out := f.reconcile(t, "c0"); !out.IsWait() || out.After() != 30*time.Minute {
		t.Fatalf("half-way: %s %v", out, out.After())
	}
	f.clk.SetTime(t0.Add(time.Hour))
	if out := f.reconcile(t, "c0"); !out.IsDone() {
		t.Fatalf("after the retention: %s", out)
	}
	if err := f.api.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "c0"}, &child{}); client.IgnoreNotFound(err) != nil || err == nil {
		t.Fatalf("not deleted (%v)", err)
	}
	if f.b.Remembers("uid-c0") {
		t.Fatal("a deleted child is remembered")
	}
}

func TestAKeptChildWaitsForAPersonAndARecheckReopensOne(t *testing.T) {
	f := newFixture(t, 1)
	f.b.Kept = func(c *child) bool { return c.Status.Phase == v1alpha1.SyncFailed }
	f.work = func(b *batch, m *child) {
		now := metav1.NewTime(b.Now)
		m.Status.Phase, m.Status.CompletedAt = v1alpha1.SyncFailed, &now
	}
	if out := f.reconcile(t, "c0"); !out.IsDone() {
		t.Fatalf("a kept child: %s", out)
	}
	f.clk.SetTime(t0.Add(2 * time.Hour))
	if out := f.reconcile(t, "c0"); !out.IsDone() {
		t.Fatalf("a kept child after its retention: %s", out)
	}
	// Rechecked a minute after it failed: it waits, then is pending again
	// and goes to the batch.
	f.b.Kept = nil
	f.b.Recheck = func(c *child) (time.Time, bool) { return c.Status.CompletedAt.Add(time.Minute), true }
	f.b.Reopen = func(c *child) { c.Status.Phase, c.Status.CompletedAt = v1alpha1.SyncPending, nil }
	f.clk.SetTime(t0.Add(30 * time.Second))
	if out := f.reconcile(t, "c0"); !out.IsWait() || out.After() != 30*time.Second {
		t.Fatalf("before the recheck: %s %v", out, out.After())
	}
	f.work = nil
	f.clk.SetTime(t0.Add(time.Minute))
	f.reconcile(t, "c0")
	if c := f.child(t, "c0"); c.Status.Phase != v1alpha1.SyncSucceeded || len(f.batches) != 2 {
		t.Fatalf("the recheck: %+v, batches %v", c.Status, f.batches)
	}
}

func TestPaceAndOwnScheduleHoldTheNextBatch(t *testing.T) {
	f := newFixture(t, 2)
	f.b.Pace = time.Second
	f.work = func(b *batch, m *child) {
		next := metav1.NewTime(t0.Add(10 * time.Second))
		m.Status.Phase, m.Status.LastError, m.Status.NextAttemptAt = v1alpha1.SyncPending, "throttled", &next
		b.Later(m, 5*time.Second)
	}
	f.reconcile(t, "c0")
	f.clk.SetTime(t0.Add(2 * time.Second))
	if out := f.reconcile(t, "c1"); !out.IsWait() || out.After() != 8*time.Second {
		t.Fatalf("a child waiting for its own schedule (status.nextAttemptAt): %s %v", out, out.After())
	}
	// Its own schedule cleared (as a person's retry does): the parent's
	// pace still holds it.
	c1 := f.child(t, "c1")
	c1.Status.NextAttemptAt = nil
	if err := f.api.Status().Update(context.Background(), c1); err != nil {
		t.Fatal(err)
	}
	if out := f.reconcile(t, "c1"); !out.IsWait() || out.After() != 3*time.Second || len(f.batches) != 1 {
		t.Fatalf("within the pace (the members' 5 s): %s %v, batches %v", out, out.After(), f.batches)
	}
}

// A restore brings children back without their owner reference. One
// taken into another's batch is finished there and never leads a batch
// of its own, so the batch adopts it; a member the batch cannot adopt (a
// stale copy: a conflict) is left out and adopted when it leads.
func TestABatchAdoptsItsMembersOrLeavesThemOut(t *testing.T) {
	f := newFixture(t, 4)
	ctx := context.Background()
	// c0 is stale in the cache: the API server has a newer version.
	stale := f.child(t, "c0")
	f.mu.Lock()
	f.frozen[client.ObjectKeyFromObject(stale)] = stale
	f.mu.Unlock()
	newer := stale.DeepCopy()
	newer.Labels = map[string]string{"team": "lab"}
	if err := f.api.Update(ctx, newer); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, "c3")
	// The two oldest others, c0 and c1, were taken; c0 was left out.
	if len(f.batches) != 1 || fmt.Sprint(f.batches[0]) != "[c3 c1]" {
		t.Fatalf("batches %v, want c3 with c1 (c0 cannot be adopted from its stale copy)", f.batches)
	}
	owned := func(c *child) bool {
		refs := c.OwnerReferences
		return len(refs) == 1 && refs[0].UID == "uid-ni" && refs[0].Name == "ni" && refs[0].Kind == "NotionIntegration"
	}
	for _, name := range []string{"c1", "c3"} {
		if c := f.child(t, name); c.Status.Phase != v1alpha1.SyncSucceeded || !owned(c) {
			t.Fatalf("%s: phase %s, owners %+v, want Succeeded and adopted", name, c.Status.Phase, c.OwnerReferences)
		}
	}
	if c := f.child(t, "c0"); c.Status.Phase != "" || len(c.OwnerReferences) != 0 {
		t.Fatalf("c0 left out: phase %s, owners %+v", c.Status.Phase, c.OwnerReferences)
	}
	// Leading from the stale copy, it is not batched: the conflict asks
	// for a fresh read.
	if out := f.reconcile(t, "c0"); !out.IsTransient() || !apierrors.IsConflict(out.Err()) || len(f.batches) != 1 {
		t.Fatalf("c0 from its stale copy: %s (%v), batches %v; want a conflict and no batch", out, out.Err(), f.batches)
	}
	f.catchUp()
	f.reconcile(t, "c0")
	if len(f.batches) != 2 || fmt.Sprint(f.batches[1]) != "[c0 c2]" {
		t.Fatalf("batches %v, want c0 with c2 from a fresh read", f.batches)
	}
	for _, name := range []string{"c0", "c2"} {
		if c := f.child(t, name); c.Status.Phase != v1alpha1.SyncSucceeded || !owned(c) {
			t.Fatalf("%s: phase %s, owners %+v, want Succeeded and adopted", name, c.Status.Phase, c.OwnerReferences)
		}
	}
	if c := f.child(t, "c0"); c.Labels["team"] != "lab" {
		t.Fatalf("adopting c0 lost its label: %v", c.Labels)
	}
}
