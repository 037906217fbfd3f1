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
	"time"
)

// DefaultShutdownGrace is how long a reconcile in flight when the manager
// stops may go on: long enough to finish the upstream call it is in and
// write down what the calls did, well inside controller-runtime's graceful
// shutdown (30 s), which releases the leader lease only after every
// reconcile has returned.
//
// Cancelled at once, a reconcile loses what it has done upstream but not
// yet written: a Notion page updated whose PaperSync still says pending,
// an answer the upstream sent that nobody reads. The next leader then does
// it again, and what the seeds promise once happens twice (the e2e's helm
// upgrade under load saw 9 pages of one batch updated twice).
const DefaultShutdownGrace = 10 * time.Second

type stoppingKey struct{}

// outliving is a context for one reconcile that is not cancelled when
// ctx is, but grace after; Stopping on it reports whether ctx was. A
// deadline of ctx (a reconcile timeout) is kept.
func outliving(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	base, cancelDeadline := context.WithoutCancel(ctx), context.CancelFunc(func() {})
	if d, ok := ctx.Deadline(); ok {
		base, cancelDeadline = context.WithDeadline(base, d)
	}
	out, cancelOut := context.WithCancel(base)
	cancel := func() { cancelOut(); cancelDeadline() }
	out = context.WithValue(out, stoppingKey{}, ctx.Done())
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(grace, cancel)
		context.AfterFunc(out, func() { t.Stop() })
	})
	return out, func() { stop(); cancel() }
}

// Stopping reports whether the manager is stopping: a phase that makes
// many upstream calls starts no more of them (and leaves what it did not
// start as it was, to the next leader), and writes down what it did. The
// calls already made finish; ctx itself is cancelled only when the grace
// is spent.
func Stopping(ctx context.Context) bool {
	if done, ok := ctx.Value(stoppingKey{}).(<-chan struct{}); ok {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	return ctx.Err() != nil
}
