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

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// written is a child as the API server holds it after this manager's
// last write of it (a box, so a batch updates it in place).
type written[C any] struct{ obj C }

// remember keeps c, just written (with the resourceVersion the API server
// answered), until the cache shows it.
func (b *Batcher[C, P]) remember(c C) {
	b.memory.Remember(c.GetUID(), c.DeepCopyObject().(C))
}

// Forget drops what was remembered of a child: its status changed in a
// way no batch wrote (a person's retry, a recheck), or it is gone.
func (b *Batcher[C, P]) Forget(uid types.UID) { b.memory.Forget(uid) }

// Remembers reports whether a write of the child is remembered: the
// cache has not been seen to show it.
func (b *Batcher[C, P]) Remembers(uid types.UID) bool { return b.memory.Remembers(uid) }

// recall is what this manager last wrote of c, when the cache's copy c is
// an older version: the cache has not shown the write yet. The write is
// forgotten once the cache shows it or a later version (another's write:
// a person's annotation, the runner's patch after a phase).
func (b *Batcher[C, P]) recall(c C) (C, bool) {
	return b.memory.Ahead(c.GetUID(), func(mem C) bool { return !later(mem.GetResourceVersion(), c.GetResourceVersion()) })
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
