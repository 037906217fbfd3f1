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

package testenv

import (
	"testing"
	"time"
)

// PollInterval is how often EventuallyWithin and EventuallyReport call
// their condition.
const PollInterval = 25 * time.Millisecond

// Poll calls cond every interval until it reports done or timeout has
// passed, and returns the last state cond described and whether it was
// done. cond always runs at least once, and once more after the deadline
// before Poll gives up. It runs on the caller's goroutine, so it may call
// t.Fatal; Poll itself never fails a test, which suits callers without a
// testing.TB or with something to do before failing.
func Poll(timeout, interval time.Duration, cond func() (done bool, last string)) (last string, ok bool) {
	deadline := time.Now().Add(timeout)
	for {
		done, last := cond()
		if done {
			return last, true
		}
		if time.Now().After(deadline) {
			return last, false
		}
		time.Sleep(interval)
	}
}

// EventuallyWithin polls cond every PollInterval for up to timeout,
// failing the test with what it waited for.
func EventuallyWithin(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if _, ok := Poll(timeout, PollInterval, func() (bool, string) { return cond(), "" }); !ok {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// EventuallyReport is EventuallyWithin for a cond that also describes the
// state it saw: the failure message ends with the last description.
func EventuallyReport(t testing.TB, timeout time.Duration, what string, cond func() (done bool, last string)) {
	t.Helper()
	if last, ok := Poll(timeout, PollInterval, cond); !ok {
		t.Fatalf("timed out after %s waiting for %s: %s", timeout, what, last)
	}
}
