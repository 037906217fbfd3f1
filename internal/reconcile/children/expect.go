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
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// MemoryTTL bounds how long a write is remembered while the cache shows
// an older version of the child: an informer lags by milliseconds, at
// worst seconds; a child deleted by another (its parent's deletion) must
// not be remembered for ever.
const MemoryTTL = 2 * time.Minute

// written is a child as this manager last wrote it.
type written[C any] struct {
	obj C
	at  time.Time
}

// remember keeps c, just written (with the resourceVersion the API server
// answered), until the cache shows it.
func (b *Batcher[C, P]) remember(c C) {
	now := time.Now()
	b.memory.Store(c.GetUID(), &written[C]{obj: c.DeepCopyObject().(C), at: now})
	b.sweep(now)
}

// sweep drops, at most once a MemoryTTL, the writes remembered longer
// than that: children gone without another look (deleted with their
// parent).
func (b *Batcher[C, P]) sweep(now time.Time) {
	last := b.swept.Load()
	if now.UnixNano()-last < int64(MemoryTTL) || !b.swept.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	b.memory.Range(func(k, v any) bool {
		if now.Sub(v.(*written[C]).at) > MemoryTTL {
			b.memory.CompareAndDelete(k, v)
		}
		return true
	})
}

// Forget drops what was remembered of a child: its status changed in a
// way no batch wrote (a person's retry, a recheck), or it is gone.
func (b *Batcher[C, P]) Forget(uid types.UID) { b.memory.Delete(uid) }

// Remembers reports whether a write of the child is remembered: the
// cache has not been seen to show it.
func (b *Batcher[C, P]) Remembers(uid types.UID) bool {
	_, ok := b.memory.Load(uid)
	return ok
}

// recall is what this manager last wrote of c, when the cache's copy c is
// an older version: the cache has not shown the write yet. It forgets the
// write once the cache shows it or a later version (another's write: a
// person's annotation, the runner's patch after a phase).
func (b *Batcher[C, P]) recall(c C) (C, bool) {
	var none C
	v, ok := b.memory.Load(c.GetUID())
	if !ok {
		return none, false
	}
	w := v.(*written[C])
	if !later(w.obj.GetResourceVersion(), c.GetResourceVersion()) || time.Since(w.at) > MemoryTTL {
		b.memory.CompareAndDelete(c.GetUID(), v)
		return none, false
	}
	return w.obj, true
}

// later reports whether resourceVersion a is later than b: resource
// versions of one resource compare as integers (KEP-5504); where they do
// not parse, any other version is taken for an older one.
func later(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	if err != nil {
		return a != b
	}
	return c > 0
}

// catchUp gives c, a copy from the cache, the status and resourceVersion
// this manager last wrote, when the cache does not show them yet. A write
// locked on that version fails if anyone wrote since.
func (b *Batcher[C, P]) catchUp(c C) (C, bool) {
	mem, ok := b.recall(c)
	if !ok {
		return c, false
	}
	copyStatus(c, mem)
	c.SetResourceVersion(mem.GetResourceVersion())
	return c, true
}

// CatchUp is the first phase of a child: the child as this manager last
// wrote it, where the cache lags. It also keeps the child as the API
// server holds it, for the batch's writes (merge patches from it), and
// gives the runner a patcher from it.
func (b *Batcher[C, P]) CatchUp(_ context.Context, obj C, run *runner.Run) runner.Outcome {
	b.init()
	ack := obj.GetReconcileStatus().LastHandledRequestedAt
	server := obj.DeepCopyObject().(C)
	if run.Requested {
		// The runner acknowledged a request in memory: the API server
		// holds another value.
		server.GetReconcileStatus().LastHandledRequestedAt = ""
	}
	if mem, ok := b.catchUp(obj); ok {
		server = mem.DeepCopyObject().(C)
		if run.Requested && mem.GetReconcileStatus().LastHandledRequestedAt != ack {
			obj.GetReconcileStatus().LastHandledRequestedAt = ack // the runner's acknowledgement stands
		} else {
			// No request, or one handled already that only the stale copy
			// showed as new.
			run.Requested = false
		}
	}
	b.server.Put(run, &written[C]{obj: server})
	run.Patcher = status.NewPatcher(b.Client, server)
	return runner.Continue()
}

// serverCopy is obj as the API server holds it, as CatchUp kept it (or
// obj itself, when CatchUp did not run).
func (b *Batcher[C, P]) serverCopy(obj C, run *runner.Run) C {
	b.init()
	if s := b.server.From(run); s != nil && s.obj.GetUID() == obj.GetUID() {
		return s.obj
	}
	return obj.DeepCopyObject().(C)
}
