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
	"time"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
)

// Collect deletes a finished child once its parent's retention has
// passed. A child Kept stays until a person acts; one whose Recheck falls
// due before its retention ends waits for it and is then made pending
// again, for the next batch. An unfinished child goes on to the batch.
func (b *Batcher[C, P]) Collect(ctx context.Context, obj C, run *runner.Run) runner.Outcome {
	done := finished(obj)
	if done == nil {
		return runner.Continue()
	}
	if b.Kept != nil && b.Kept(obj) {
		return runner.Done()
	}
	retention := b.retention(ctx, obj)
	if due, ok := b.recheck(obj, retention); ok {
		if run.Now.Before(due) {
			return runner.Wait(due.Sub(run.Now))
		}
		b.Reopen(obj)
		b.Forget(obj.GetUID())
		return runner.Continue() // to the batch, with the parent's other pending children
	}
	if b.Collecting != nil && !run.Now.Before(done.Add(retention)) {
		if err := b.Collecting(ctx, obj, b.parentKey(obj)); err != nil {
			return runner.Transient(v1alpha1.DependencyNotReadyReason, fmt.Errorf("record the finished child before it goes: %w", err))
		}
	}
	out := runner.DeleteAfter(ctx, b.Client, obj, done.Time, retention, run.Now)
	if out.IsDone() {
		b.Forget(obj.GetUID())
	}
	return out
}

// recheck is when a finished child is tried again, if that comes before
// its retention ends.
func (b *Batcher[C, P]) recheck(obj C, retention time.Duration) (time.Time, bool) {
	if b.Recheck == nil {
		return time.Time{}, false
	}
	due, ok := b.Recheck(obj)
	return due, ok && due.Before(finished(obj).Add(retention))
}

// untilCollected is the wait of a child a batch just finished: until its
// recheck, or the end of its retention (then Collect deletes it); a Kept
// child waits for a person.
func (b *Batcher[C, P]) untilCollected(obj C, retention time.Duration, now time.Time) runner.Outcome {
	if b.Kept != nil && b.Kept(obj) {
		return runner.Done()
	}
	at := finished(obj).Add(retention)
	if due, ok := b.recheck(obj, retention); ok {
		at = due
	}
	return runner.Wait(max(at.Sub(now), time.Second))
}
