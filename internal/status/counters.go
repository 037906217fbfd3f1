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

package status

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Tally is what a child controller adds to its parent's counters: work
// done, work failed, and when the last was done.
type Tally struct {
	Done, Failed int64
	Last         time.Time
}

func (t Tally) plus(u Tally) Tally {
	t.Done += u.Done
	t.Failed += u.Failed
	if u.Last.After(t.Last) {
		t.Last = u.Last
	}
	return t
}

// Counters gathers the tallies a child controller (PaperSync, SheetSync)
// owes its parents' status counters, and writes them every Every: one
// write per parent every few seconds instead of one per child, so a burst
// costs about one API write per child. Each write is an optimistic-lock
// merge patch of the counter fields alone (the parent's controller owns
// the rest of its status); a conflict keeps the tally for the next flush.
// Tallies not written when the leader stops are lost: counters are a
// person's overview, the children are the record. Add it to the manager
// (mgr.Add): it runs on the leader only.
type Counters[T client.Object] struct {
	Client client.Client
	// New returns an empty parent.
	New func() T
	// Apply adds a tally to a parent's status.
	Apply func(parent T, t Tally)
	// Every is the flush interval (5 s when 0).
	Every time.Duration

	mu  sync.Mutex
	due map[types.NamespacedName]Tally
}

// Add owes t to the parent key.
func (c *Counters[T]) Add(key types.NamespacedName, t Tally) {
	if t.Done == 0 && t.Failed == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.due == nil {
		c.due = map[types.NamespacedName]Tally{}
	}
	c.due[key] = c.due[key].plus(t)
}

// Start writes the tallies every Every until ctx ends, then once more.
func (c *Counters[T]) Start(ctx context.Context) error {
	every := c.Every
	if every <= 0 {
		every = 5 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			c.Flush(final)
			return nil
		case <-t.C:
			c.Flush(ctx)
		}
	}
}

// Flush writes what is owed now.
func (c *Counters[T]) Flush(ctx context.Context) {
	c.mu.Lock()
	due := c.due
	c.due = nil
	c.mu.Unlock()
	for key, d := range due {
		parent := c.New()
		err := c.Client.Get(ctx, key, parent)
		if err == nil {
			before := parent.DeepCopyObject().(T)
			c.Apply(parent, d)
			err = c.Client.Status().Patch(ctx, parent, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
		}
		switch {
		case err == nil, apierrors.IsNotFound(err):
		default:
			if !apierrors.IsConflict(err) {
				log.FromContext(ctx).Error(err, "counters not written; kept for the next try", "parent", key)
			}
			c.Add(key, d)
		}
	}
}
