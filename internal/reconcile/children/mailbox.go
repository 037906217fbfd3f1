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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// TallyDelay is how long a tally waits for its parent's reconcile: the
// batches of a burst make one status write of the parent, not one each.
const TallyDelay = 5 * time.Second

// Tally is what children's work adds to their parent's counters: work
// done, work failed, and when the last was done.
type Tally struct {
	Done, Failed int64
	Last         time.Time
}

// Plus is t and u together.
func (t Tally) Plus(u Tally) Tally {
	t.Done += u.Done
	t.Failed += u.Failed
	if u.Last.After(t.Last) {
		t.Last = u.Last
	}
	return t
}

// Zero reports whether t counts nothing.
func (t Tally) Zero() bool { return t.Done == 0 && t.Failed == 0 && t.Last.IsZero() }

// atLeast is t where each count is at least u's.
func (t Tally) atLeast(u Tally) Tally {
	t.Done, t.Failed = max(t.Done, u.Done), max(t.Failed, u.Failed)
	if u.Last.After(t.Last) {
		t.Last = u.Last
	}
	return t
}

// covers reports whether t counts at least what u counts (times to the
// second, as status keeps them).
func (t Tally) covers(u Tally) bool {
	return t.Done >= u.Done && t.Failed >= u.Failed && !u.Last.Truncate(time.Second).After(t.Last)
}

// Tallies is where a Batcher reports what each batch did: the parent's
// controller's mailbox.
type Tallies interface {
	Tally(parent types.NamespacedName, t Tally)
}

// Wakes puts requests into one controller's work queue, registered as
// the controller's source: without blocking, without losing one (the
// queue keeps a request once, at its earliest time). Before the
// controller starts there is no queue; its start reconciles every object.
type Wakes struct {
	mu sync.Mutex
	q  workqueue.TypedRateLimitingInterface[reconcile.Request]
}

// Source is the source to register with the controller (WatchesRawSource).
func (w *Wakes) Source() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.q = q
		return nil
	})
}

// Wake reconciles key after d (now when d is not positive).
func (w *Wakes) Wake(key types.NamespacedName, d time.Duration) {
	w.mu.Lock()
	q := w.q
	w.mu.Unlock()
	switch {
	case q == nil:
	case d <= 0:
		q.Add(reconcile.Request{NamespacedName: key})
	default:
		q.AddAfter(reconcile.Request{NamespacedName: key}, d)
	}
}

// Mailbox is a parent controller's in-process mailbox: child controllers
// post what happened to a parent (R, the parent kind's report) and wake
// it; the parent's controller takes the report in one of its phases, so
// its own status patch is the only writer of the parent's status. What is
// posted and not yet taken when the leader stops is lost: the children
// are the record, counters a person's overview.
type Mailbox[R any] struct {
	Wakes

	mu      sync.Mutex
	box     map[types.NamespacedName]*R
	counted map[types.NamespacedName]Tally
}

// Post adds to key's report (add changes it under the mailbox's lock) and
// wakes the parent after d.
func (m *Mailbox[R]) Post(key types.NamespacedName, d time.Duration, add func(*R)) {
	m.mu.Lock()
	if m.box == nil {
		m.box = map[types.NamespacedName]*R{}
	}
	r, ok := m.box[key]
	if !ok {
		r = new(R)
		m.box[key] = r
	}
	add(r)
	m.mu.Unlock()
	m.Wake(key, d)
}

// Take empties key's report and returns it; ok is false when nothing was
// posted.
func (m *Mailbox[R]) Take(key types.NamespacedName) (report R, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.box[key]
	if !ok {
		return report, false
	}
	delete(m.box, key)
	return *r, true
}

// Receive takes key's report, and adds its tally (tally picks it out) to
// the parent's counters as shown (Count): what the parent's phase
// records.
func (m *Mailbox[R]) Receive(key types.NamespacedName, shown Tally, tally func(R) Tally) (R, Tally) {
	r, _ := m.Take(key)
	return r, m.Count(key, shown, tally(r))
}

// Count is the parent's counters once t is added: to shown, the counters
// as the parent was read, or to what this process last counted, where the
// cache does not show that yet (the counters only grow, and only the
// parent's controller writes them). A count whose status write failed is
// counted again from memory, not lost.
func (m *Mailbox[R]) Count(key types.NamespacedName, shown, t Tally) Tally {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counted == nil {
		m.counted = map[types.NamespacedName]Tally{}
	}
	last, ok := m.counted[key]
	if ok && t.Zero() && shown.covers(last) {
		delete(m.counted, key) // the cache shows it all
		return shown
	}
	n := shown.atLeast(last).Plus(t)
	if !t.Zero() || ok {
		m.counted[key] = n
	}
	return n
}
