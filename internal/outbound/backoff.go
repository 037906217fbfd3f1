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
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is an exponential retry schedule with jitter, shared by every
// controller that retries outbound calls.
type Backoff struct {
	// Base is the delay before the first retry.
	Base time.Duration
	// Max caps any delay, Retry-After included.
	Max time.Duration
	// Jitter spreads delays by ±Jitter (0.2 = ±20 %) so that many objects
	// failing together do not retry together.
	Jitter float64
}

// Delay returns how long to wait before retry number n (1 for the first
// retry): Base·2^(n-1), jittered, never less than a Retry-After the
// upstream sent with err, and at most Max.
func (b Backoff) Delay(n int, err error) time.Duration {
	if n < 1 {
		n = 1
	}
	d := b.Base
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	if b.Jitter > 0 {
		f := 1 + b.Jitter*(2*rand.Float64()-1) //nolint:gosec // jitter needs no cryptographic randomness
		d = time.Duration(float64(d) * f)
	}
	if e, ok := Classify(err); ok && e.RetryAfter > d {
		d = e.RetryAfter
	}
	if b.Max > 0 && d > b.Max {
		d = b.Max
	}
	return d
}

// Sleep waits d or until ctx is done, whichever comes first.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
