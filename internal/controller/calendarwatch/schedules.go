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

package calendarwatch

import (
	"context"
	"time"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// The schedules of seed 002, each ±10 % (outbound.DefaultJitter) and never
// sooner than a Retry-After Google sent.
var (
	// Retries spaces the Calendar calls that failed transiently (network
	// errors, 5xx, rate limits): 1, 2, 4, 8 and 16 seconds, then the
	// backup sync timer (seed 002 "Retry Logic", "Sync Errors"). The
	// runner's Transient schedule and the HTTP sink's deliveries use it.
	Retries = outbound.Schedule{Base: time.Second, Retries: 5, Max: outbound.MaxRetryAfter}
	// ChannelRetries spaces attempts to open a push channel that failed:
	// 1 s doubling to an hour. The backup sync goes on meanwhile (seed 002
	// "Graceful Degradation"), so nothing is lost while a refused address
	// waits for a person to fix it.
	ChannelRetries = outbound.Schedule{Base: time.Second, Max: time.Hour}
)

// untilChannelAttempt is how long until the channel attempt status
// promises (status.nextChannelAttemptAt), when one is. It is stretched by
// the runner's jitter (±outbound.DefaultJitter on a recheck or on the
// backup timer), so that the reconcile comes no earlier than promised and
// makes the attempt, rather than coming early, finding the attempt not
// due, and failing the same way again.
func (r *Reconciler) untilChannelAttempt(obj *v1alpha1.CalendarWatch) (time.Duration, bool) {
	at := obj.Status.NextChannelAttemptAt
	if at == nil || r.PublicURL == "" || obj.Spec.Suspend || !obj.DeletionTimestamp.IsZero() {
		return 0, false
	}
	until := time.Duration(float64(at.Sub(r.Clock.Now())) / (1 - outbound.DefaultJitter))
	return max(until, minChannelWait), true
}

// minChannelWait is the least wait for a channel attempt already due.
const minChannelWait = 100 * time.Millisecond

// keepChannelPromise wraps a phase that runs after the channel's: when it
// stalls the watch (a sink a person must fix, looked at again every
// backupSyncInterval), the channel attempt status promises still happens
// when promised, 1 s doubling to an hour, not a backup interval later.
// (A transient failure is the runner's 1, 2, 4, 8, 16 s, then the backup
// timer, which Exhausted shortens the same way.) A refused grant is left
// alone: no channel can be opened without one.
func (r *Reconciler) keepChannelPromise(phase runner.Phase[*v1alpha1.CalendarWatch]) runner.Phase[*v1alpha1.CalendarWatch] {
	return func(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run) runner.Outcome {
		out := phase(ctx, obj, run)
		if !out.IsStall() || out.Reason() == v1alpha1.ReauthRequiredReason {
			return out
		}
		if d, ok := r.untilChannelAttempt(obj); ok && (out.After() == 0 || d < out.After()) {
			return out.RecheckAfter(d)
		}
		return out
	}
}
