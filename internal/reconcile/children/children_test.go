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
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/reconcile/children"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// The Batcher in a manager, on a real API server: PaperSyncs as children
// of NotionIntegrations, a batch that finishes every member, and a parent
// controller that takes its mailbox and writes the counters. The parent's
// watch, the index, the gate, the wake-ups and the retention run as in
// the operator.

var (
	env *testenv.Env
	// mail is the parents' mailbox; parents counts their reconciles.
	mail    = &counters{}
	parents sync.Map // parent key → *atomic.Int32
	// batchSizes records each batch's size.
	batchMu    sync.Mutex
	batchSizes []int
)

// counters is the parent controller's mailbox of tallies.
type counters struct {
	children.Mailbox[children.Tally]
}

func (m *counters) Tally(key types.NamespacedName, t children.Tally) {
	m.Post(key, 0, func(s *children.Tally) { *s = s.Plus(t) })
}

func TestMain(m *testing.M) {
	testenv.Main(m, &env, func(e *testenv.Env) (func(), error) {
		// The operator as the binary builds it, running the test's child
		// and parent controllers instead of the kinds'.
		childCtl := wire.SetupFunc{Named: "children-test", Func: func(mgr ctrl.Manager, _ wire.Deps) error {
			b := batcher(mgr.GetClient())
			run := &runner.Runner[*child]{Client: mgr.GetClient(), New: func() *child { return &child{} },
				Normal: []runner.Phase[*child]{b.CatchUp, b.Collect, b.Batch}}
			return b.Setup(mgr, "children-test", &child{}, 2, run)
		}}
		parentCtl := wire.SetupFunc{Named: "children-test-parent", Func: func(mgr ctrl.Manager, _ wire.Deps) error {
			return ctrl.NewControllerManagedBy(mgr).For(&parent{}).WatchesRawSource(mail.Source()).
				Named("children-test-parent").Complete(reconcile.Func(reconcileParent(mgr.GetClient())))
		}}
		_, stop, err := testenv.StartOperator(e.Config, wire.Operator{Kinds: []wire.Kind{childCtl, parentCtl}, Indexes: index.Both})
		return stop, err
	})
}

// batcher finishes every member of a batch: Succeeded.
func batcher(c client.Client) *children.Batcher[*child, *parent] {
	return &children.Batcher[*child, *parent]{
		Client: c, Grants: fakeGrants(c), Parent: "integration",
		Accepting: func(p *parent) (bool, string) {
			return status.IsTrue(p, v1alpha1.ReadyCondition), "integration " + p.Name + " is not Ready"
		},
		Retention: func(p *parent) time.Duration { return p.Spec.SyncRetention.Duration },
		Max:       4,
		Less:      func(a, b *child) bool { return a.CreationTimestamp.Before(&b.CreationTimestamp) },
		Tallies:   mail,
		Work: func(_ context.Context, b *batch) runner.Outcome {
			batchMu.Lock()
			batchSizes = append(batchSizes, len(b.Members))
			batchMu.Unlock()
			for _, m := range b.Members {
				m.Status.Attempts++
				b.Succeeded(m, v1alpha1.SucceededReason, "done")
				b.Tally.Done++
			}
			return runner.Wait(time.Minute)
		},
	}
}

// reconcileParent takes the parent's mailbox into its counters: the
// parent's controller is the only writer of the parent's status.
func reconcileParent(c client.Client) func(context.Context, reconcile.Request) (reconcile.Result, error) {
	return func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		n, _ := parents.LoadOrStore(req.NamespacedName, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		p := &parent{}
		if err := c.Get(ctx, req.NamespacedName, p); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		before := p.DeepCopy()
		t, _ := mail.Take(req.NamespacedName)
		got := mail.Count(req.NamespacedName, children.Tally{Done: p.Status.PapersSynced, Failed: p.Status.SyncFailures}, t)
		p.Status.PapersSynced, p.Status.SyncFailures = got.Done, got.Failed
		return reconcile.Result{}, c.Status().Patch(ctx, p, client.MergeFrom(before))
	}
}

// newParent creates a NotionIntegration that is not Ready yet.
func newParent(t *testing.T, retention time.Duration) *parent {
	t.Helper()
	ns, err := env.Namespace("children")
	if err != nil {
		t.Fatal(err)
	}
	p := &parent{ObjectMeta: metav1.ObjectMeta{Name: "ni", Namespace: ns}}
	p.Spec.OAuth.ClientSecretRef.Name, p.Spec.OAuth.TokenSecretRef.Name, p.Spec.WebhookSecretRef.Name = "client", "token", "hook"
	p.Spec.SyncRetention = metav1.Duration{Duration: retention}
	if err := env.Client.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func markReady(t *testing.T, p *parent) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		status.MarkReady(p, v1alpha1.SucceededReason, "ready")
		return env.Client.Status().Update(context.Background(), p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func newChildren(t *testing.T, p *parent, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		id := fmt.Sprintf("2301.%05d", i)
		c := papers.NewSync(p, fmt.Sprintf("%032x", i+1), "https://arxiv.org/abs/"+id, id)
		if err := env.Client.Create(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		names = append(names, c.Name)
	}
	return names
}

func get(t *testing.T, ns, name string) (*child, error) {
	t.Helper()
	c := &child{}
	return c, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, c)
}

// Children of a parent that takes no work wait for it, with the reason;
// its turning Ready wakes them (no polling: their own recheck is 10
// minutes away), they are taken in batches of at most Max, each is
// written once, Ready, and the parent's controller counts them.
func TestChildrenWaitForTheirParentAndAreBatchedWhenItIsReady(t *testing.T) {
	p := newParent(t, time.Hour)
	names := newChildren(t, p, 6)
	testenv.Eventually(t, "the children waiting for their parent", func() bool {
		for _, n := range names {
			c, err := get(t, p.Namespace, n)
			if r := status.Get(c, v1alpha1.ReadyCondition); err != nil || r == nil || r.Reason != v1alpha1.DependencyNotReadyReason {
				return false
			}
		}
		return true
	})
	markReady(t, p)
	testenv.Eventually(t, "every child done", func() bool {
		for _, n := range names {
			if c, err := get(t, p.Namespace, n); err != nil || c.Status.Phase != v1alpha1.SyncSucceeded {
				return false
			}
		}
		return true
	})
	for _, n := range names {
		c, _ := get(t, p.Namespace, n)
		if c.Status.Attempts != 1 {
			t.Fatalf("%s done %d times", n, c.Status.Attempts)
		}
		// Finished by the runner's rule (Batch.Succeeded), Ready as a
		// parent whose phases all continued.
		if r := status.Get(c, v1alpha1.ReadyCondition); r == nil || r.Status != metav1.ConditionTrue || r.Message != "done" ||
			c.Status.CompletedAt == nil || c.Status.ObservedGeneration != c.Generation {
			t.Fatalf("%s finished as %+v, want Ready, completedAt set, generation observed", n, c.Status)
		}
	}
	batchMu.Lock()
	for _, n := range batchSizes {
		if n > 4 {
			t.Errorf("a batch of %d, more than Max", n)
		}
	}
	batchMu.Unlock()
	testenv.Eventually(t, "the parent's counter", func() bool {
		got := &parent{}
		return env.Client.Get(context.Background(), client.ObjectKeyFromObject(p), got) == nil && got.Status.PapersSynced == 6
	})
}

// A finished child is woken by its batch and deleted after its parent's
// retention.
func TestFinishedChildrenAreDeletedAfterTheRetention(t *testing.T) {
	p := newParent(t, 2*time.Second)
	markReady(t, p)
	names := newChildren(t, p, 3)
	testenv.Eventually(t, "the children deleted", func() bool {
		for _, n := range names {
			if _, err := get(t, p.Namespace, n); !apierrors.IsNotFound(err) {
				return false
			}
		}
		return true
	})
}

// A post to the mailbox reconciles the parent: it needs no watch event of
// its own.
func TestAPostWakesTheParent(t *testing.T) {
	p := newParent(t, time.Hour)
	key := client.ObjectKeyFromObject(p)
	testenv.Eventually(t, "the parent's first reconcile", func() bool {
		n, ok := parents.Load(key)
		return ok && n.(*atomic.Int32).Load() > 0
	})
	mail.Tally(key, children.Tally{Failed: 2})
	testenv.Eventually(t, "the failures counted", func() bool {
		got := &parent{}
		return env.Client.Get(context.Background(), key, got) == nil && got.Status.SyncFailures == 2
	})
}
