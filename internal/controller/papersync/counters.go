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

package papersync

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// counters gathers the integrations' papersSynced and syncFailures and
// writes them every counterFlush: one write per integration every few
// seconds instead of one per batch, so a burst of small batches costs
// about one API write per sync. Counts not yet written when the leader
// stops are lost; they are a person's overview, not a record (the
// PaperSyncs are the record).
type counters struct {
	client client.Client
	mu     sync.Mutex
	due    map[types.NamespacedName][2]int64
}

func (c *counters) add(key types.NamespacedName, synced, failed int) {
	if synced == 0 && failed == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.due == nil {
		c.due = map[types.NamespacedName][2]int64{}
	}
	d := c.due[key]
	c.due[key] = [2]int64{d[0] + int64(synced), d[1] + int64(failed)}
}

// Start writes the counts every counterFlush until ctx ends, then once
// more. It runs on the leader only (a manager Runnable's default).
func (c *counters) Start(ctx context.Context) error {
	t := time.NewTicker(counterFlush)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			c.flush(final)
			return nil
		case <-t.C:
			c.flush(ctx)
		}
	}
}

// flush adds the counts to each integration with an optimistic-lock merge
// patch of the two fields (the integration controller owns the rest of
// its status); a conflict keeps them for the next flush.
func (c *counters) flush(ctx context.Context) {
	c.mu.Lock()
	due := c.due
	c.due = nil
	c.mu.Unlock()
	for key, d := range due {
		ni := &v1alpha1.NotionIntegration{}
		err := c.client.Get(ctx, key, ni)
		if err == nil {
			before := ni.DeepCopy()
			ni.Status.PapersSynced += d[0]
			ni.Status.SyncFailures += d[1]
			err = c.client.Status().Patch(ctx, ni, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
		}
		switch {
		case err == nil, apierrors.IsNotFound(err):
		default:
			if !apierrors.IsConflict(err) {
				log.FromContext(ctx).Error(err, "integration counters not written; kept for the next try", "integration", key)
			}
			c.add(key, int(d[0]), int(d[1]))
		}
	}
}
