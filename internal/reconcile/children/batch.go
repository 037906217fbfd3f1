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

package children

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// Batch is one batch of a parent: the reconciled child and, with it, the
// parent's other pending children that are due.
type Batch[C runner.Child, P grant.Object] struct {
	Parent P
	// Key is the parent's.
	Key types.NamespacedName
	// Grant is the parent's grant (its access token, for this batch only).
	Grant grant.Grant
	// Obj is the reconciled child; Members are Obj and then the others,
	// in the Batcher's order.
	Obj     C
	Members []C
	Now     time.Time
	// Tally is what the batch adds to the parent's counters.
	Tally Tally
	// RetryIn is the shortest wait of the members left pending (Later).
	RetryIn time.Duration

	b     *Batcher[C, P]
	saved map[types.UID]*written[C] // each member as the API server holds it
	later []wakeUp[C]
	// created are the children the batch created (Created).
	created []types.NamespacedName
}

type wakeUp[C any] struct {
	m     C
	after time.Duration
}

// Batch is the last phase of a child: obj's parent through the gate, its
// batch lock and pace, its grant, and the batch of its pending children,
// whose statuses are then written. A finished obj waits to be collected.
func (b *Batcher[C, P]) Batch(ctx context.Context, obj C, run *runner.Run) runner.Outcome {
	parent, out, ok := b.parentOf(ctx, obj)
	if !ok {
		return out
	}
	if wait := notBefore(obj).Sub(run.Now); wait > 0 {
		// Its own schedule; the Ready condition keeps the last failure.
		return runner.Wait(wait)
	}
	key := b.parentKey(obj)
	st := b.state(key)
	if !st.lock(client.ObjectKeyFromObject(obj)) {
		return runner.Wait(BatchBusy)
	}
	var bt *Batch[C, P]
	defer func() { b.release(st, bt) }()
	if runner.Stopping(ctx) {
		// No batch starts while the manager stops: the next leader takes
		// these children as they are.
		return runner.Wait(BatchBusy)
	}
	if wait := st.next.Sub(run.Now); wait > 0 {
		// The parent's pace: its status is left as it is, as when the
		// batch is busy (a new child shows no phase until its batch, a
		// Pace later at most); a write here would be one more per child.
		return runner.Wait(wait)
	}
	g, err := b.Grants.Token(ctx, parent)
	if err != nil {
		return b.WaitFor(obj, "the "+b.Parent+"'s grant: "+err.Error())
	}
	members, err := b.pending(ctx, obj, run.Now)
	if err != nil {
		return runner.Transient(v1alpha1.DependencyNotReadyReason, err)
	}
	members = b.adoptMembers(ctx, members, parent)
	bt = b.newBatch(parent, key, g, members, run, b.serverCopy(obj, run))
	out = b.Work(ctx, bt)
	if b.Pace > 0 {
		st.next = run.Now.Add(max(b.Pace, bt.RetryIn))
	}
	bt.write(ctx)
	if b.Tallies != nil && !bt.Tally.Zero() {
		b.Tallies.Tally(key, bt.Tally)
	}
	// The runner writes what changes after this phase, from obj as the
	// API server now holds it.
	run.Patcher = status.NewPatcher(b.Client, bt.saved[obj.GetUID()].obj)
	if finished(obj) != nil {
		return b.untilCollected(obj, b.Retention(parent), run.Now)
	}
	return out
}

// release lets go of a parent's batch lock. When a batch ran (bt not
// nil), it then wakes one child that met the lock held and that the
// batch did not take, to start the next batch at once rather than a
// BatchBusy later (the next edit of a page, sent while the last one's
// statuses were written), and the children the batch created. One is
// enough: its batch takes the oldest pending children, and its own
// release wakes the next; waking every waiter would have a burst of
// hundreds reconcile only to meet the lock again. When no batch ran (the
// parent's pace, a missing grant), the holder comes back for the
// waiting itself.
func (b *Batcher[C, P]) release(st *parentState, bt *Batch[C, P]) {
	st.mu.Unlock()
	if bt == nil {
		return
	}
	taken := make([]types.NamespacedName, 0, len(bt.Members))
	for _, m := range bt.Members {
		taken = append(taken, client.ObjectKeyFromObject(m))
	}
	if next, ok := st.nextWaiting(taken); ok {
		b.wakes.Wake(next, 0)
	}
	for _, key := range bt.created {
		b.wakes.Wake(key, 0)
	}
}

func (b *Batcher[C, P]) newBatch(parent P, key types.NamespacedName, g grant.Grant, members []C, run *runner.Run, server C) *Batch[C, P] {
	bt := &Batch[C, P]{Parent: parent, Key: key, Grant: g, Obj: members[0], Members: members, Now: run.Now,
		b: b, saved: make(map[types.UID]*written[C], len(members))}
	bt.saved[bt.Obj.GetUID()] = &written[C]{obj: server}
	for _, m := range members[1:] {
		bt.saved[m.GetUID()] = &written[C]{obj: m.DeepCopyObject().(C)}
	}
	return bt
}

// pending lists, from the cache, the parent's unfinished children that
// are due, each as this manager last wrote it: obj first, then the first
// Max-1 others in Less order.
func (b *Batcher[C, P]) pending(ctx context.Context, obj C, now time.Time) ([]C, error) {
	parent := obj.ParentName()
	list, err := b.newList()
	if err == nil {
		err = b.Client.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.MatchingFields{index.PendingChildren: parent})
	}
	if err != nil {
		return nil, fmt.Errorf("list the pending children of %s %s: %w", b.Parent, parent, err)
	}
	var others []C
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		c, ok := o.(C) // the cache's List already copied it
		if !ok || c.GetUID() == obj.GetUID() {
			return nil
		}
		c, _ = b.catchUp(c)
		if finished(c) == nil && c.GetDeletionTimestamp().IsZero() && !now.Before(notBefore(c)) {
			others = append(others, c)
		}
		return nil
	})
	sort.SliceStable(others, func(i, j int) bool { return b.Less(others[i], others[j]) })
	if n := max(b.Max-1, 0); len(others) > n {
		others = others[:n]
	}
	return append([]C{obj}, others...), nil
}

// Created says the batch created the child key (a PaperSync an event's
// sync handed its page to): it is woken as soon as the batch lets go of
// the parent's lock, rather than meet it held and wait BatchBusy.
func (bt *Batch[C, P]) Created(key types.NamespacedName) {
	bt.created = append(bt.created, key)
}

// Succeeded finishes m's work: the runner marks it Succeeded and Ready,
// with reason and message, the kind's words for what it did (runner.Succeeded).
func (bt *Batch[C, P]) Succeeded(m C, reason, message string) {
	runner.Succeeded(m, bt.Now, reason, message)
}

// Failed finishes m as Failed and Stalled with reason and message
// (runner.Failed), err's text its last error.
func (bt *Batch[C, P]) Failed(m C, reason string, err error) {
	runner.Failed(m, bt.Now, reason, err.Error())
}

// Later wakes m after d (the reconciled child comes back by its own
// outcome), and makes RetryIn at most d.
func (bt *Batch[C, P]) Later(m C, d time.Duration) {
	if bt.RetryIn == 0 || d < bt.RetryIn {
		bt.RetryIn = d
	}
	if m.GetUID() != bt.Obj.GetUID() {
		bt.later = append(bt.later, wakeUp[C]{m: m, after: d})
	}
}

// patch writes m's status as changed since the batch last saw it on the
// API server (a JSON merge patch; nothing when nothing changed). Written,
// m is remembered; otherwise forgotten, since the memory may no longer be
// what the API server holds.
func (bt *Batch[C, P]) patch(ctx context.Context, m C) error {
	saved := bt.saved[m.GetUID()]
	p := client.MergeFrom(saved.obj)
	if data, err := p.Data(m); err == nil && string(data) == "{}" {
		return nil
	}
	if err := bt.b.Client.Status().Patch(ctx, m, p); err != nil {
		bt.b.Forget(m.GetUID())
		return fmt.Errorf("patch status of %s: %w", client.ObjectKeyFromObject(m), err)
	}
	if bt.b.Recorded != nil {
		bt.b.Recorded(ctx, saved.obj, m)
	}
	saved.obj = m.DeepCopyObject().(C)
	bt.b.remember(m)
	return nil
}

// write patches the members' statuses, several at once, then wakes them:
// the finished ones to be collected after their retention, the others
// when Later says. A member whose write failed is told to Unwritten and
// looked at again (a PaperSync is synced again; a SheetSync is looked up
// in the sheet first).
func (bt *Batch[C, P]) write(ctx context.Context) {
	obj := bt.Obj.GetUID() // read before the writes answer into Obj
	status.Each(statusWriters, bt.Members, func(m C) {
		uid := m.GetUID()
		if err := bt.patch(ctx, m); err != nil {
			if !apierrors.IsNotFound(err) {
				log.FromContext(ctx).Error(err, "child status not written; it will be looked at again", "child", klog.KObj(m))
			}
			if bt.b.Unwritten != nil {
				bt.b.Unwritten(m) // a refused write leaves m as meant
			}
			if uid != obj {
				bt.b.wake(m, BatchBusy)
			}
			return
		}
		if finished(m) != nil && uid != obj {
			bt.b.wake(m, 0)
		}
	})
	for _, l := range bt.later {
		if finished(l.m) == nil {
			bt.b.wake(l.m, l.after)
		}
	}
}
