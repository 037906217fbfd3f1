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

// Package children is the one machinery of child objects, the units of
// work a parent hands out (a PaperSync of a NotionIntegration, a SheetSync
// of a SheetConnection): the parent's watch that wakes its pending
// children, the index that finds them, the gate that holds them while
// the parent takes no work, one batch at a time per parent, the batch of
// a parent's pending children, the wake-ups of its members, and the
// deletion of finished children after the parent's retention. A child
// kind is a v1alpha1.ChildObject (its parent's name, the ChildStatus its
// status embeds) and its parent a v1alpha1.OAuthObject whose grant the
// parent kind's grant.Phases fetch: the Batcher reads both through those
// contracts, and a kind's Batcher fields say only what differs.
//
// A batch reads its members from the informer cache, which may lag this
// manager's own writes: what the manager last wrote of each child is
// remembered until the cache shows it (the expectations a ReplicaSet
// controller keeps), so a member finished, or waiting for its next
// attempt, is never taken again early, nor its attempts counted from a
// stale copy. Only the leader runs controllers, so the memory is the only
// writer's. A member whose status write failed is told to the kind
// (Unwritten): what an outside call did to it is then known only to this
// process (a Sheets append's row).
//
// Parents' statuses are their own controllers' to write. A Batcher
// reports what each batch did to the parent's Mailbox; the parent's
// controller takes it in one of its phases.
package children

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

const (
	// DependencyRecheck looks again at a child whose parent takes no work.
	// The parent's watch wakes it as soon as it does; this is only a
	// safety net.
	DependencyRecheck = 10 * time.Minute
	// BatchBusy is the wait of a child whose parent's batch is in flight:
	// that batch may take it, or the next one will, started by the end of
	// the one in flight (release).
	BatchBusy = time.Second
	// DefaultWorkers is how many parents' batches run at once.
	DefaultWorkers = 4
	// DefaultRetention keeps the finished children of a parent that is
	// gone.
	DefaultRetention = 24 * time.Hour
	// statusWriters is how many status writes of one batch run at once:
	// the API server, not the upstream, sets how fast a batch drains.
	statusWriters = 16
)

// Batcher runs the batches of one kind of child C of parents P. What
// every child has is read through v1alpha1.ChildObject (its parent's
// name, its phase, completion and next attempt), and what every parent
// has through v1alpha1.OAuthObject (its grant, fetched by the kind's
// grant phases); the fields say what differs between kinds, and Work is
// the kind's batch.
type Batcher[C runner.Child, P grant.Object] struct {
	Client client.Client
	// Grants are the parent kind's grant phases: a batch takes the
	// parent's grant from them (Phases.Token).
	Grants *grant.Phases[P]
	// Parent names the parent kind in messages: "integration".
	Parent string
	// Accepting says whether a parent takes work, and if not, why. A
	// parent that starts taking work wakes its pending children.
	Accepting func(P) (bool, string)
	// Retention is how long a parent's finished children are kept.
	Retention func(P) time.Duration
	// Recorded, when set, is told of each child whose status a batch
	// wrote, with the status the write replaced: what must be recorded
	// once a status is stored (a session appended) is recorded there.
	Recorded func(ctx context.Context, before, after C)
	// Collecting, when set, records what must outlive a finished child
	// (the row a SheetSync wrote) once its retention has passed, before
	// it is deleted; an error keeps the child for the next reconcile.
	Collecting func(ctx context.Context, child C, parent types.NamespacedName) error
	// Max is the most members of one batch.
	Max int
	// Less orders the members other than the reconciled child; a batch
	// takes the first Max-1 of the due ones.
	Less func(a, b C) bool
	// Work is the kind's batch: it sets each member's status in memory
	// (the Batcher writes them; Batch.Succeeded finishes a member) and
	// returns the reconciled child's outcome while it is not finished.
	Work func(ctx context.Context, b *Batch[C, P]) runner.Outcome
	// Tallies, when set, receives each batch's tally: the parent's
	// controller adds it to the parent's counters.
	Tallies Tallies

	// Pace, when set, is the least time between two batches of a parent;
	// a batch whose members wait for a retry puts the next off as long.
	Pace time.Duration
	// Unwritten, when set, is told of each member whose status the
	// batch could not write, with the status it meant to write.
	Unwritten func(C)
	// Kept, when set, holds a finished child until a person acts (a
	// Failed SheetSync): it is not deleted after the retention.
	Kept func(C) bool
	// Recheck, when set, is when a finished child is tried again (a
	// PaperSync whose retries ran out); when that comes before its
	// retention ends, Reopen makes it pending again then.
	Recheck func(C) (time.Time, bool)
	Reopen  func(C)
	// Adopted, when set, marks a child a restore brought back without its
	// parent as controller, before the parent adopts it (adopt).
	Adopted func(C)

	once    sync.Once
	server  *runner.Key[*written[C]] // the reconciled child as the API server holds it
	wakes   Wakes                    // the children's work queue
	parents sync.Map                 // parent key → *parentState
	memory  runner.Written[C]        // the children this manager wrote, until the cache shows them
}

// parentState is what the leader keeps of a parent between batches.
type parentState struct {
	mu sync.Mutex
	// next is the earliest time of the parent's next batch (Pace).
	next time.Time

	// waiting are the children that met mu held, for release to wake.
	wmu     sync.Mutex
	waiting map[types.NamespacedName]struct{}
}

// lock takes the parent's batch lock for child, or leaves child among
// the waiting, one of whom the holder's release wakes when its batch
// ends. child is listed before the lock is tried, so a release between
// the two still finds it.
func (st *parentState) lock(child types.NamespacedName) bool {
	st.wmu.Lock()
	if st.waiting == nil {
		st.waiting = map[types.NamespacedName]struct{}{}
	}
	st.waiting[child] = struct{}{}
	st.wmu.Unlock()
	if !st.mu.TryLock() {
		return false
	}
	st.wmu.Lock()
	delete(st.waiting, child)
	st.wmu.Unlock()
	return true
}

// nextWaiting drops the children a batch took from the waiting, then
// takes one of the others out, if any.
func (st *parentState) nextWaiting(taken []types.NamespacedName) (types.NamespacedName, bool) {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	for _, k := range taken {
		delete(st.waiting, k)
	}
	for k := range st.waiting {
		delete(st.waiting, k)
		return k, true
	}
	return types.NamespacedName{}, false
}

func (b *Batcher[C, P]) init() {
	b.once.Do(func() { b.server = runner.NewKey[*written[C]]() })
}

// Setup registers the children's controller, named name, with run as its
// Reconcile: the children's own events (spec and requested-at), their
// parents' watch, and the Batcher's wake-ups.
func (b *Batcher[C, P]) Setup(mgr ctrl.Manager, name string, child C, workers int, run reconcile.Reconciler) error {
	b.init()
	if _, err := b.newList(); err != nil {
		return fmt.Errorf("list of %T: %w", child, err)
	}
	if workers <= 0 {
		workers = DefaultWorkers
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(child, builder.WithPredicates(status.SpecOrRequest())).
		// A parent that starts taking work wakes its waiting children: no
		// polling.
		Watches(newObject[P](), handler.EnqueueRequestsFromMapFunc(b.pendingOf), builder.WithPredicates(b.acceptingChanged())).
		// The members of a batch are woken to be collected after their
		// retention, or tried again when their wait is over.
		WatchesRawSource(b.wakes.Source()).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Named(name).
		Complete(run)
}

// pendingOf lists a parent's unfinished children from the cache, when it
// takes work.
func (b *Batcher[C, P]) pendingOf(ctx context.Context, o client.Object) []reconcile.Request {
	p, ok := o.(P)
	if !ok {
		return nil
	}
	if accepting, _ := b.Accepting(p); !accepting {
		return nil
	}
	list, err := b.newList()
	if err != nil {
		return nil // Setup made one
	}
	return index.Requests(ctx, b.Client, list, p.GetNamespace(), index.PendingChildren, p.GetName())
}

// acceptingChanged lets through parents created, or whose taking of work
// changed: not every status write (their counters).
func (b *Batcher[C, P]) acceptingChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, okOld := e.ObjectOld.(P)
			n, okNew := e.ObjectNew.(P)
			if !okOld || !okNew {
				return false
			}
			was, _ := b.Accepting(o)
			is, _ := b.Accepting(n)
			return was != is
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// WaitFor shows why the child cannot proceed; the parent's watch wakes it
// when that changes.
func (b *Batcher[C, P]) WaitFor(obj C, why string) runner.Outcome {
	obj.GetChildStatus().Phase = v1alpha1.SyncPending
	status.MarkRetrying(obj, v1alpha1.DependencyNotReadyReason, why)
	return runner.Wait(DependencyRecheck)
}

// parentKey is the key of obj's parent.
func (b *Batcher[C, P]) parentKey(obj C) types.NamespacedName {
	return types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.ParentName()}
}

// parentOf reads obj's parent and passes it through the gate: a parent
// that is gone or takes no work makes obj wait.
func (b *Batcher[C, P]) parentOf(ctx context.Context, obj C) (P, runner.Outcome, bool) {
	key := b.parentKey(obj)
	p := newObject[P]()
	if err := b.Client.Get(ctx, key, p); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return p, b.WaitFor(obj, b.Parent+" "+key.Name+" not found"), false
		}
		return p, runner.Transient(v1alpha1.DependencyNotReadyReason, fmt.Errorf("read %s %s: %w", b.Parent, key.Name, err)), false
	}
	if err := b.adopt(ctx, obj, p); err != nil {
		return p, runner.Transient(v1alpha1.DependencyNotReadyReason, err), false
	}
	if ok, why := b.Accepting(p); !ok {
		return p, b.WaitFor(obj, why), false
	}
	return p, runner.Continue(), true
}

// TryLock takes the batch lock of a parent: one batch at a time per
// parent. ok is false while a batch of the parent is in flight.
func (b *Batcher[C, P]) TryLock(parent types.NamespacedName) (unlock func(), ok bool) {
	st := b.state(parent)
	if !st.mu.TryLock() {
		return nil, false
	}
	return st.mu.Unlock, true
}

func (b *Batcher[C, P]) state(parent types.NamespacedName) *parentState {
	v, _ := b.parents.LoadOrStore(parent, &parentState{})
	return v.(*parentState)
}

// retention is the retention of obj's parent (DefaultRetention when the
// parent is gone).
func (b *Batcher[C, P]) retention(ctx context.Context, obj C) time.Duration {
	p := newObject[P]()
	if err := b.Client.Get(ctx, b.parentKey(obj), p); err != nil {
		return DefaultRetention
	}
	return b.Retention(p)
}

// wake enqueues a child after d, without blocking and without losing it.
func (b *Batcher[C, P]) wake(c C, d time.Duration) {
	b.wakes.Wake(types.NamespacedName{Namespace: c.GetNamespace(), Name: c.GetName()}, d)
}
