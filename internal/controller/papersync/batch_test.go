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
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxiv"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Unit tests of the batch logic with struct-of-functions fakes of arXiv,
// Notion and the token source, and controller-runtime's fake client (the
// envtest flows in test/notion run the same controller against the
// sandbox through the real clients).

type fakeArxiv struct {
	fetch func(ids []string) (map[string]arxiv.Paper, []string, error)
	calls atomic.Int32
}

func (f *fakeArxiv) Fetch(_ context.Context, ids []string) (map[string]arxiv.Paper, []string, error) {
	f.calls.Add(1)
	return f.fetch(ids)
}

type fakeNotion struct {
	update func(pageID string) error
	pages  []string
	// read answers ReadPage; reads counts its calls.
	read  func(pageID string) (notion.Page, error)
	reads int
}

func (f *fakeNotion) ReadPage(_ context.Context, _, pageID, _ string) (notion.Page, error) {
	f.reads++
	if f.read == nil {
		return notion.Page{}, fmt.Errorf("no page %s", pageID)
	}
	return f.read(pageID)
}

func (f *fakeNotion) UpdatePaper(ctx context.Context, _, pageID string, _ notion.Paper) error {
	f.pages = append(f.pages, pageID)
	if err := f.update(pageID); err != nil {
		return err
	}
	// The page is written; a context cancelled meanwhile loses the answer,
	// as the real client's would.
	return ctx.Err()
}

type fixture struct {
	r      *Reconciler
	arxiv  *fakeArxiv
	notion *fakeNotion
	tokens *testenv.FakeTokens
	c      client.Client
	writes atomic.Int32
	clk    *clocktesting.FakePassiveClock
	syncs  []*v1alpha1.PaperSync
}

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// niUID is the fixtures' integration's UID.
const niUID = types.UID("ni-uid")

// ownedByNI is the owner reference the webhook, the backfill and a
// hand-over give a sync: a sync without it came back from a restore.
func ownedByNI() []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NotionIntegration", Name: "ni", UID: niUID}}
}

func paper(id string) arxiv.Paper {
	return arxiv.Paper{ID: id, Title: "Paper " + id, Published: t0}
}

func newFixture(t *testing.T, ids ...string) *fixture {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	ni := &v1alpha1.NotionIntegration{ObjectMeta: metav1.ObjectMeta{Name: "ni", Namespace: "ns", UID: niUID}}
	ni.Spec.SyncRetention = metav1.Duration{Duration: time.Hour}
	status.MarkReady(ni, v1alpha1.SucceededReason, "ok")
	f := &fixture{arxiv: &fakeArxiv{}, notion: &fakeNotion{update: func(string) error { return nil }}, tokens: &testenv.FakeTokens{},
		clk: clocktesting.NewFakePassiveClock(t0)}
	objs := []client.Object{ni}
	for i, id := range ids {
		ps := &v1alpha1.PaperSync{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ps%d", i), Namespace: "ns",
			UID: types.UID(fmt.Sprintf("uid-%d", i)), CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(i) * time.Second)),
			OwnerReferences: ownedByNI()},
			Spec: v1alpha1.PaperSyncSpec{IntegrationRef: v1alpha1.LocalObjectReference{Name: "ni"}, PageID: fmt.Sprintf("page-%d", i), ArxivID: id}}
		objs = append(objs, ps)
		f.syncs = append(f.syncs, ps)
	}
	f.arxiv.fetch = func(ids []string) (map[string]arxiv.Paper, []string, error) {
		found := map[string]arxiv.Paper{}
		for _, id := range ids {
			found[id] = paper(id)
		}
		return found, nil, nil
	}
	f.c = fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&v1alpha1.PaperSync{}, &v1alpha1.NotionIntegration{}).
		WithIndex(&v1alpha1.PaperSync{}, index.PendingChildren, index.PendingChild).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			f.writes.Add(1)
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		}}).Build()
	f.r = &Reconciler{Client: f.c, OAuth: f.tokens, Notion: f.notion, Arxiv: f.arxiv, Clock: f.clk}
	f.r.Runner()
	return f
}

// reconcile runs the phases for one sync as the runner would, and writes
// its status the way the runner does.
func (f *fixture) reconcile(t *testing.T, i int) runner.Outcome {
	t.Helper()
	obj := &v1alpha1.PaperSync{}
	if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(f.syncs[i]), obj); err != nil {
		t.Fatal(err)
	}
	return f.reconcileObj(t, obj)
}

func (f *fixture) reconcileObj(t *testing.T, obj *v1alpha1.PaperSync) runner.Outcome {
	t.Helper()
	run := &runner.Run{Now: f.clk.Now(), Patcher: status.NewPatcher(f.c, obj)}
	out := runner.Continue()
	for _, p := range f.r.phases() {
		if out = p(context.Background(), obj, run); !out.IsContinue() {
			break
		}
	}
	if err := run.Patcher.Patch(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	return out
}

func (f *fixture) sync(t *testing.T, i int) *v1alpha1.PaperSync {
	t.Helper()
	ps := &v1alpha1.PaperSync{}
	if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(f.syncs[i]), ps); err != nil {
		t.Fatal(err)
	}
	return ps
}

func TestOneUnknownPaperFailsOnlyItselfInOneRequestAndOneWriteEach(t *testing.T) {
	f := newFixture(t, "2301.00001", "2301.99999", "2301.00003")
	f.arxiv.fetch = func(ids []string) (map[string]arxiv.Paper, []string, error) {
		return map[string]arxiv.Paper{"2301.00001": paper("2301.00001"), "2301.00003": paper("2301.00003")}, []string{"2301.99999"}, nil
	}
	out := f.reconcile(t, 0)
	if !out.IsWait() || out.After() != time.Hour {
		t.Fatalf("outcome %s after %v, want a wait for the retention", out, out.After())
	}
	if f.arxiv.calls.Load() != 1 || f.writes.Load() != 3 || len(f.notion.pages) != 2 {
		t.Fatalf("arXiv requests %d, status writes %d, pages written %d; want 1, 3, 2", f.arxiv.calls.Load(), f.writes.Load(), len(f.notion.pages))
	}
	for i, want := range []v1alpha1.SyncPhase{v1alpha1.SyncSucceeded, v1alpha1.SyncFailed, v1alpha1.SyncSucceeded} {
		if ps := f.sync(t, i); ps.Status.Phase != want {
			t.Fatalf("sync %d is %s, want %s", i, ps.Status.Phase, want)
		}
	}
	if c := status.Get(f.sync(t, 1), v1alpha1.StalledCondition); c == nil || c.Reason != v1alpha1.PaperNotFoundReason {
		t.Fatalf("the unknown paper's Stalled %+v, want PaperNotFound", c)
	}
}

func TestArxiv503IsRetriedAtOneTwoFourSecondsThenFails(t *testing.T) {
	f := newFixture(t, "2301.00001")
	down := &outbound.Error{Upstream: "arxiv", Class: outbound.Transient, Status: 503, Reason: "HTTP 503"}
	f.arxiv.fetch = func([]string) (map[string]arxiv.Paper, []string, error) { return nil, nil, down }
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		out := f.reconcile(t, 0)
		if !out.IsRetry() || out.After() != want {
			t.Fatalf("attempt %d: %s after %v, want a retry after %v", i+1, out, out.After(), want)
		}
	}
	out := f.reconcile(t, 0)
	ps := f.sync(t, 0)
	c := status.Get(ps, v1alpha1.StalledCondition)
	if ps.Status.Phase != v1alpha1.SyncFailed || c == nil || c.Reason != v1alpha1.RetriesExhaustedReason || f.arxiv.calls.Load() != 4 || !out.IsWait() {
		t.Fatalf("after 4 attempts: phase %s, stalled %+v, %d requests, outcome %s", ps.Status.Phase, c, f.arxiv.calls.Load(), out)
	}
}

func TestNotion429WaitsItsRetryAfterAndSparesTheRestOfTheBatch(t *testing.T) {
	f := newFixture(t, "2301.00001", "2301.00002")
	f.notion.update = func(string) error {
		return &outbound.Error{Upstream: "notion", Class: outbound.Transient, Status: 429, Reason: "HTTP 429", RetryAfter: 7 * time.Second}
	}
	out := f.reconcile(t, 0)
	if !out.IsRetry() || out.After() != 7*time.Second || len(f.notion.pages) != 1 {
		t.Fatalf("%s after %v with %d page writes; want a retry after the 7s Retry-After and one write", out, out.After(), len(f.notion.pages))
	}
	if ps := f.sync(t, 1); ps.Status.Attempts != 0 || ps.Status.Phase == v1alpha1.SyncFailed {
		t.Fatalf("the spared member: attempts %d phase %s", ps.Status.Attempts, ps.Status.Phase)
	}
	// An absurd Retry-After is clamped.
	f.notion.update = func(string) error {
		return &outbound.Error{Upstream: "notion", Class: outbound.Transient, Status: 429, Reason: "HTTP 429", RetryAfter: 24 * time.Hour}
	}
	if out := f.reconcile(t, 0); out.After() != outbound.MaxRetryAfter {
		t.Fatalf("a day's Retry-After became %v, want the clamp %v", out.After(), outbound.MaxRetryAfter)
	}
}

func TestASyncFinishedByABatchIsNotSyncedAgainWhileTheCacheLags(t *testing.T) {
	f := newFixture(t, "2301.00001", "2301.00002")
	stale := f.sync(t, 1) // as a lagging cache would still show it
	f.reconcile(t, 0)     // finishes both
	pages := len(f.notion.pages)
	out := f.reconcileObj(t, stale)
	if len(f.notion.pages) != pages || f.arxiv.calls.Load() != 1 || !out.IsWait() {
		t.Fatalf("the stale copy caused %d page writes and %d arXiv requests (outcome %s)", len(f.notion.pages)-pages, f.arxiv.calls.Load(), out)
	}
}

// A retry sooner than the cache sees the last attempt's count (the 10 ms
// schedule of test/notion, or a slow API server) counts on from the count
// it wrote, not from the stale copy.
func TestAttemptsAreNotLostWhileTheCacheLags(t *testing.T) {
	f := newFixture(t, "2301.00001")
	f.notion.update = func(string) error {
		return &outbound.Error{Upstream: "notion", Class: outbound.Transient, Status: 409, Reason: "HTTP 409 conflict_error"}
	}
	stale := f.sync(t, 0) // as a lagging cache would still show it after the first attempt
	if out := f.reconcile(t, 0); !out.IsRetry() {
		t.Fatalf("first attempt: %s, want a retry", out)
	}
	if out := f.reconcileObj(t, stale); !out.IsRetry() {
		t.Fatalf("second attempt: %s, want a retry", out)
	}
	if ps := f.sync(t, 0); ps.Status.Attempts != 2 {
		t.Fatalf("attempts %d after two, counted from the stale copy", ps.Status.Attempts)
	}
	// Once the cache shows the count, the memory of it goes.
	f.notion.update = func(string) error { return nil }
	f.reconcile(t, 0)
	if ps := f.sync(t, 0); ps.Status.Attempts != 3 || ps.Status.Phase != v1alpha1.SyncSucceeded {
		t.Fatalf("third attempt: phase %s, attempts %d; want Succeeded on the third", ps.Status.Phase, ps.Status.Attempts)
	}
	// Once the cache shows the write, the memory of it goes.
	f.reconcile(t, 0)
	if f.r.batcher.Remembers(stale.UID) {
		t.Fatal("a write the cache shows is still remembered")
	}
}

func TestASyncOfASuspendedIntegrationCallsNothing(t *testing.T) {
	f := newFixture(t, "2301.00001")
	ni := &v1alpha1.NotionIntegration{}
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "ni"}, ni); err != nil {
		t.Fatal(err)
	}
	ni.Spec.Suspend = true
	if err := f.c.Update(context.Background(), ni); err != nil {
		t.Fatal(err)
	}
	out := f.reconcile(t, 0)
	c := status.Get(f.sync(t, 0), v1alpha1.ReadyCondition)
	if f.tokens.Calls() != 0 || f.arxiv.calls.Load() != 0 || len(f.notion.pages) != 0 || !out.IsWait() ||
		c == nil || c.Reason != v1alpha1.DependencyNotReadyReason {
		t.Fatalf("token calls %d, arXiv %d, Notion %d, outcome %s, Ready %+v", f.tokens.Calls(), f.arxiv.calls.Load(), len(f.notion.pages), out, c)
	}
}

func TestAFinishedSyncIsDeletedAfterItsRetention(t *testing.T) {
	f := newFixture(t, "2301.00001")
	f.reconcile(t, 0)
	f.clk.SetTime(t0.Add(30 * time.Minute))
	if out := f.reconcile(t, 0); !out.IsWait() || out.After() != 30*time.Minute {
		t.Fatalf("half-way: %s after %v", out, out.After())
	}
	f.clk.SetTime(t0.Add(time.Hour))
	if out := f.reconcile(t, 0); !out.IsDone() {
		t.Fatalf("after the retention: %s", out)
	}
	if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(f.syncs[0]), &v1alpha1.PaperSync{}); client.IgnoreNotFound(err) != nil || err == nil {
		t.Fatalf("the sync is still there (%v)", err)
	}
}

// A manager stopping (a helm upgrade, a drain) in the middle of a batch:
// the page being written is finished and recorded, the pages not yet
// started are left to the next leader, and no page is written twice.
func TestABatchInFlightWhenTheManagerStopsRecordsThePagesItWrote(t *testing.T) {
	f := newFixture(t, "2301.00001", "2301.00002", "2301.00003", "2301.00004")
	mgr, stop := context.WithCancel(context.Background())
	f.notion.update = func(page string) error {
		if page == "page-1" {
			stop() // SIGTERM while page-1's request is on its way
		}
		return nil
	}
	r := f.r.Runner()
	if _, err := r.Reconcile(mgr, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(f.syncs[0])}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if got := strings.Join(f.notion.pages, ","); got != "page-0,page-1" {
		t.Fatalf("pages written %s, want page-0,page-1 (the one in flight finished, none started after the stop)", got)
	}
	for i := range 2 {
		if ps := f.sync(t, i); ps.Status.Phase != v1alpha1.SyncSucceeded || ps.Status.Attempts != 1 {
			t.Fatalf("sync %d: %s after %d attempts, want Succeeded after 1: its page is written", i, ps.Status.Phase, ps.Status.Attempts)
		}
	}
	for i := 2; i < 4; i++ {
		if ps := f.sync(t, i); ps.Status.CompletedAt != nil || ps.Status.Attempts != 0 {
			t.Fatalf("sync %d: %s after %d attempts, want it left pending with no attempt counted", i, ps.Status.Phase, ps.Status.Attempts)
		}
	}
	// The next leader syncs what is left, and only that.
	f.notion.update = func(string) error { return nil }
	f.notion.pages = nil
	if _, err := f.r.Runner().Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(f.syncs[2])}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.notion.pages, ","); got != "page-2,page-3" {
		t.Fatalf("the next leader wrote %s, want page-2,page-3", got)
	}
}
