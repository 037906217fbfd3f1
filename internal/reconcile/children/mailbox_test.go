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

package children_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/switchboard-dev/switchboard/internal/reconcile/children"
)

type report struct {
	tally children.Tally
	notes []string
}

func TestPostsToOneParentAddUpUntilTaken(t *testing.T) {
	var m children.Mailbox[report]
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	m.Post(a, 0, func(r *report) { r.tally = r.tally.Plus(children.Tally{Done: 2}) }) // no queue yet: kept
	m.Post(a, 0, func(r *report) { r.tally = r.tally.Plus(children.Tally{Done: 1, Failed: 1}) })
	m.Post(b, 0, func(r *report) { r.notes = append(r.notes, "renamed") })
	if r, ok := m.Take(a); !ok || r.tally.Done != 3 || r.tally.Failed != 1 {
		t.Fatalf("a: %+v %v", r, ok)
	}
	if _, ok := m.Take(a); ok {
		t.Fatal("taken twice")
	}
	if r, ok := m.Take(b); !ok || len(r.notes) != 1 {
		t.Fatalf("b: %+v %v", r, ok)
	}
}

// The parent's counters are counted on from what this process counted
// last while the cache shows less, and the count of a write that failed
// is not lost.
func TestCountsNeverCountFromLessThanTheLastCount(t *testing.T) {
	var m children.Mailbox[report]
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	if got := m.Count(key, children.Tally{Done: 5}, children.Tally{Done: 2}); got.Done != 7 {
		t.Fatalf("first count %d, want 7", got.Done)
	}
	// The cache still shows 5: count on from 7.
	if got := m.Count(key, children.Tally{Done: 5}, children.Tally{Done: 1, Failed: 1}); got.Done != 8 || got.Failed != 1 {
		t.Fatalf("second count %+v, want 8 and 1", got)
	}
	// Nothing new, the cache still behind: the last count stands.
	if got := m.Count(key, children.Tally{Done: 5}, children.Tally{}); got.Done != 8 {
		t.Fatalf("%+v, want 8", got)
	}
	// The cache shows it all: the cache's counters are the counters.
	if got := m.Count(key, children.Tally{Done: 8, Failed: 1}, children.Tally{}); got.Done != 8 || got.Failed != 1 {
		t.Fatalf("%+v", got)
	}
	last := time.Date(2026, 11, 22, 12, 0, 0, 500, time.UTC)
	if got := m.Count(key, children.Tally{Done: 8, Failed: 1}, children.Tally{Last: last}); !got.Last.Equal(last) {
		t.Fatalf("last %v", got.Last)
	}
}

func TestAWakeIsQueuedOnceAtItsEarliestTime(t *testing.T) {
	var w children.Wakes
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	w.Wake(key, 0) // before the controller starts: nothing, and no block
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	if err := w.Source().Start(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	w.Wake(key, time.Hour)
	w.Wake(key, 0)
	w.Wake(key, 0)
	if q.Len() != 1 {
		t.Fatalf("%d requests queued, want 1", q.Len())
	}
	if r, _ := q.Get(); r.NamespacedName != key {
		t.Fatalf("queued %v", r)
	}
}
