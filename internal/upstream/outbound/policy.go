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

package outbound

import (
	"math/rand/v2"
	"time"
)

// The one timer and retry policy of every controller: how far apart
// retries are (Schedule), how much they are spread (Jitter), how far an
// upstream's Retry-After is believed (ClampRetryAfter) and when an object
// should be looked at next (Next). Retries never sleep inside a worker:
// a controller returns the delay as RequeueAfter and counts attempts in
// the object's status.

// Bounds of a Retry-After an upstream sends. Below the minimum a retry
// would hammer the upstream; above the maximum one answer could park an
// object (or, before this policy, a worker) for as long as the upstream
// liked — the object is looked at again and the upstream asked once more.
const (
	// MinRetryAfter is the least wait honoured after a throttled answer.
	MinRetryAfter = time.Second
	// MaxRetryAfter is the longest Retry-After believed.
	MaxRetryAfter = 5 * time.Minute
)

// DefaultJitter spreads timers by ±10 % so that thousands of objects
// created together do not fire together.
const DefaultJitter = 0.1

// NoJitter, as a Schedule's Jitter, keeps its delays exact: for a delay a
// phase turns into a stored deadline (the runner spreads the requeue).
const NoJitter = -1.0

// Schedule is an exponential retry schedule given as data: Base, then
// doubling, for Retries retries; Max caps any single delay.
type Schedule struct {
	// Base is the delay before the first retry.
	Base time.Duration
	// Retries is how many retries the schedule allows after the first
	// attempt; zero means no limit (a recheck schedule).
	Retries int
	// Max caps a delay (zero: no cap).
	Max time.Duration
	// Jitter spreads each delay by ±Jitter (0.2 = ±20 %); zero means
	// DefaultJitter, NoJitter none.
	Jitter float64
}

// Each controller keeps the schedules its seed specifies beside it
// (calendarwatch.Retries, papersync.DefaultRetries, …). Recheck is the
// policy of every kind whose retries ran out.

// Recheck looks again at an object whose retries ran out, as cert-manager
// retries a failed issuance: 1 h doubling to 24 h, ±10 %. An upstream
// outage longer than a schedule's few seconds heals by itself.
var Recheck = Schedule{Base: time.Hour, Max: 24 * time.Hour}

// Exhausted reports whether retry number n (1 for the first retry) is
// beyond the schedule.
func (s Schedule) Exhausted(n int) bool { return s.Retries > 0 && n > s.Retries }

// Delay is the wait before retry number n (1 for the first retry):
// Base·2^(n-1), capped, jittered.
func (s Schedule) Delay(n int) time.Duration {
	d := s.Base
	for i := 1; i < n && (s.Max == 0 || d < s.Max); i++ {
		d *= 2
	}
	if s.Max > 0 && d > s.Max {
		d = s.Max
	}
	return Jitter(d, s.jitter())
}

// Exact is s without jitter: for a delay a phase turns into a deadline it
// stores in status (status times have whole seconds; the runner spreads
// the requeue instead).
func (s Schedule) Exact() Schedule {
	s.Jitter = NoJitter
	return s
}

func (s Schedule) jitter() float64 {
	switch {
	case s.Jitter == 0:
		return DefaultJitter
	case s.Jitter < 0:
		return 0
	}
	return s.Jitter
}

// After is Delay(n), but never less than a Retry-After that err carries
// (clamped between MinRetryAfter and MaxRetryAfter).
func (s Schedule) After(n int, err error) time.Duration {
	d := s.Delay(n)
	if ra := RetryAfterOf(err); ra > d {
		d = ra
	}
	return d
}

// AfterOr is After(n, err) while the schedule's retries last, and then
// fallback, the kind's normal timer, spread by ±DefaultJitter (never
// sooner than a Retry-After err carries): seed 002's "1, 2, 4, 8, 16 s,
// then the backup sync".
func (s Schedule) AfterOr(n int, err error, fallback time.Duration) time.Duration {
	if !s.Exhausted(n) {
		return s.After(n, err)
	}
	return max(Jitter(fallback, DefaultJitter), RetryAfterOf(err))
}

// RetryAfterOf is the clamped Retry-After an upstream sent with err, or 0.
func RetryAfterOf(err error) time.Duration {
	if e, ok := Classify(err); ok && e.RetryAfter > 0 {
		return ClampRetryAfter(e.RetryAfter)
	}
	return 0
}

// ClampRetryAfter bounds a Retry-After between MinRetryAfter and
// MaxRetryAfter.
func ClampRetryAfter(d time.Duration) time.Duration {
	return min(max(d, MinRetryAfter), MaxRetryAfter)
}

// MaxDeadlineSpread is the most a deadline asked for is put off by
// JitterLater: objects that share a deadline are spread over this much,
// and none is late by more.
const MaxDeadlineSpread = time.Second

// JitterLater is d put off by a random part of at most frac of d and at
// most MaxDeadlineSpread, never earlier: for deadlines that are instants
// (an expiry, a token's refresh time), where ±frac of a 14-day wait would
// be more than a day early or late.
func JitterLater(d time.Duration, frac float64) time.Duration {
	if frac <= 0 || d <= 0 {
		return d
	}
	return d + time.Duration(rand.Float64()*float64(min(time.Duration(float64(d)*frac), MaxDeadlineSpread))) //nolint:gosec // jitter needs no cryptographic randomness
}

// Jitter spreads d by ±frac.
func Jitter(d time.Duration, frac float64) time.Duration {
	if frac <= 0 || d <= 0 {
		return d
	}
	return time.Duration(float64(d) * (1 + frac*(2*rand.Float64()-1))) //nolint:gosec // jitter needs no cryptographic randomness
}

// Next is how long from now until the earliest of the deadlines (zero
// times are ignored), never negative; ok is false when there is none.
// Controllers requeue at "the earliest of token refresh, renewal, backup
// sync and expiry" with it.
func Next(now time.Time, deadlines ...time.Time) (d time.Duration, ok bool) {
	var first time.Time
	for _, t := range deadlines {
		if !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	if first.IsZero() {
		return 0, false
	}
	return max(first.Sub(now), 0), true
}
