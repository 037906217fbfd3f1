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

package runner_test

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
)

// What was written stays ahead of every copy that does not show it, and
// is forgotten by the first that does.
func TestWrittenIsAheadUntilACopyShowsIt(t *testing.T) {
	var w runner.Written[int64]
	if _, ahead := w.Ahead("a", func(int64) bool { return false }); ahead {
		t.Fatal("ahead with nothing written")
	}
	w.Remember("a", 7)
	shows := func(have int64) func(int64) bool { return func(v int64) bool { return have >= v } }
	if v, ahead := w.Ahead("a", shows(6)); !ahead || v != 7 {
		t.Fatalf("a copy showing 6: %d, ahead %v; want 7, true", v, ahead)
	}
	if v, ahead := w.Ahead("a", shows(6)); !ahead || v != 7 {
		t.Fatalf("asked again: %d, ahead %v; want 7, true", v, ahead)
	}
	if _, ahead := w.Ahead("a", shows(7)); ahead {
		t.Fatal("ahead of a copy that shows it")
	}
	if _, ahead := w.Ahead("a", shows(0)); ahead {
		t.Fatal("not forgotten once a copy showed it")
	}
	w.Remember("b", 1)
	w.Forget("b")
	if _, ahead := w.Ahead("b", shows(0)); ahead {
		t.Fatal("ahead after Forget")
	}
}

// A write the cache never shows (its object deleted by another) is
// forgotten after WrittenTTL, by the next look at it and by the sweep of
// a later Remember.
func TestWrittenForgetsAfterItsTTL(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	w := runner.Written[string]{Clock: clk}
	never := func(string) bool { return false }
	w.Remember("a", "x")
	w.Remember("b", "y")
	clk.SetTime(clk.Now().Add(runner.WrittenTTL))
	if v, ahead := w.Ahead("a", never); !ahead || v != "x" {
		t.Fatalf("at the TTL: %q, ahead %v; want x, true", v, ahead)
	}
	clk.SetTime(clk.Now().Add(time.Millisecond))
	if _, ahead := w.Ahead("a", never); ahead || w.Remembers("a") {
		t.Fatal("a write older than the TTL is still ahead")
	}
	if !w.Remembers("b") {
		t.Fatal("b forgotten before it was looked at or swept")
	}
	w.Remember("c", "z") // sweeps: the last sweep was a TTL and more ago
	if w.Remembers("b") || !w.Remembers("c") {
		t.Fatalf("after the sweep: b %v (want false), c %v (want true)", w.Remembers("b"), w.Remembers("c"))
	}
}
