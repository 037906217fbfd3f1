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

package runner

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/clocks"
)

// WrittenTTL bounds how long a write is remembered while the cache does
// not show it: an informer lags by milliseconds, at worst seconds; an
// object deleted by another (its parent's deletion) must not be
// remembered for ever.
const WrittenTTL = 2 * time.Minute

// Written remembers, per object, what this manager last wrote of it until
// the informer cache shows it: the one memory of writes the cache lags
// behind (docs/development.md, "Idempotent external writes"). A reconcile
// queued by the write's own side effects (a child's event) often reads a
// copy from before the write, and acting on that copy would do the work
// again: open a second channel, sync a second time, append a child's rows
// twice. The zero value is ready to use.
type Written[V any] struct {
	// Clock, when set, is the clock WrittenTTL is counted on.
	Clock clock.PassiveClock
	m     sync.Map     // UID → *writtenEntry[V]
	swept atomic.Int64 // when m was last swept (Unix ns)
}

// writtenEntry is one remembered write and when it was made.
type writtenEntry[V any] struct {
	v  V
	at time.Time
}

// Remember records v as written for uid now.
func (w *Written[V]) Remember(uid types.UID, v V) {
	now := clocks.Now(w.Clock)
	w.m.Store(uid, &writtenEntry[V]{v: v, at: now})
	w.sweep(now)
}

// Forget drops what was remembered for uid: it is gone, or changed in a
// way this manager did not write.
func (w *Written[V]) Forget(uid types.UID) { w.m.Delete(uid) }

// Remembers reports whether a write for uid is remembered: no copy has
// been seen to show it.
func (w *Written[V]) Remembers(uid types.UID) bool {
	_, ok := w.m.Load(uid)
	return ok
}

// Ahead returns what was written for uid while the copy at hand does not
// show it (shown answers for the copy), and true; once a copy shows it,
// or WrittenTTL has passed, it is forgotten and Ahead answers false.
func (w *Written[V]) Ahead(uid types.UID, shown func(V) bool) (V, bool) {
	var none V
	e, ok := w.m.Load(uid)
	if !ok {
		return none, false
	}
	entry := e.(*writtenEntry[V])
	if shown(entry.v) || clocks.Now(w.Clock).Sub(entry.at) > WrittenTTL {
		w.m.CompareAndDelete(uid, e)
		return none, false
	}
	return entry.v, true
}

// sweep drops, at most once a WrittenTTL, the writes remembered longer
// than that: objects gone without another look.
func (w *Written[V]) sweep(now time.Time) {
	last := w.swept.Load()
	if now.UnixNano()-last < int64(WrittenTTL) || !w.swept.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	w.m.Range(func(k, e any) bool {
		if now.Sub(e.(*writtenEntry[V]).at) > WrittenTTL {
			w.m.CompareAndDelete(k, e)
		}
		return true
	})
}

// WriteAhead writes obj's status now, before a write outside the
// cluster that others act on (docs/development.md, "Idempotent external
// writes"): a channel token's hash before Google may push with it, a
// connect link's hash before the Secret shows the link, an expiry before
// its audit record. Should the process stop after the outside write,
// status already says what the next reconcile needs to find it; the
// deferred patch then writes only what changed after.
func (run *Run) WriteAhead(ctx context.Context, obj client.Object) error {
	return run.Patcher.Patch(ctx, obj)
}
