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

package webhook

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/go-logr/logr"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// DefaultAuditFlush is how often a webhook replica adds the resolves it
// counted to the links' status.
const DefaultAuditFlush = time.Second

// Auditor records every resolve (seed 003 known issue 4: the seed kept no
// trail of who used a share link). Each resolve is an Event on the link at
// once (who and when; never a token); the counts go to
// status.resolveCount and status.lastResolvedAt in one write per link per
// flush, so a burst of resolves is not a burst of API writes.
//
// The webhook writes only those two status fields, which the controller
// never writes: its status patches are merge patches of what it changed,
// so they cannot undo a count. Replicas add with optimistic concurrency
// (resourceVersion), so two replicas never lose each other's counts.
type Auditor struct {
	Client client.Client
	// Reader reads the link from the API server before an increment.
	Reader   client.Reader
	Recorder events.EventRecorder
	// Interval is DefaultAuditFlush when zero.
	Interval time.Duration
	Log      logr.Logger

	mu      sync.Mutex
	pending map[types.NamespacedName]*tally
}

type tally struct {
	uid  types.UID
	n    int64
	last time.Time
}

// Record audits one resolve of link by who at t.
func (a *Auditor) Record(link *v1alpha1.ReceiveLink, who string, t time.Time) {
	if a.Recorder != nil {
		a.Recorder.Eventf(link, nil, corev1.EventTypeNormal, "Resolved", "Resolve", "resolved by %s", who)
	}
	key := types.NamespacedName{Namespace: link.Namespace, Name: link.Name}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pending == nil {
		a.pending = map[types.NamespacedName]*tally{}
	}
	p := a.pending[key]
	if p == nil || p.uid != link.UID {
		p = &tally{uid: link.UID}
		a.pending[key] = p
	}
	p.n++
	if t.After(p.last) {
		p.last = t
	}
}

// Start flushes every Interval until ctx is done, then once more.
func (a *Auditor) Start(ctx context.Context) error {
	iv := a.Interval
	if iv <= 0 {
		iv = DefaultAuditFlush
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			// The replica is stopping: what it counted still lands.
			flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			a.Flush(flushCtx)
			cancel()
			return nil
		case <-t.C:
			a.Flush(ctx)
		}
	}
}

// Flush writes the counted resolves. A count that cannot be written yet
// is kept for the next flush; one whose link is gone is dropped.
func (a *Auditor) Flush(ctx context.Context) {
	a.mu.Lock()
	batch := a.pending
	a.pending = nil
	a.mu.Unlock()
	for key, p := range batch {
		err := a.add(ctx, key, p)
		if err == nil || apierrors.IsNotFound(err) {
			continue
		}
		a.Log.Error(err, "cannot record resolves; keeping them for the next flush", "link", key.String(), "resolves", p.n)
		a.mu.Lock()
		if a.pending == nil {
			a.pending = map[types.NamespacedName]*tally{}
		}
		if q := a.pending[key]; q != nil && q.uid == p.uid {
			q.n += p.n
			if p.last.After(q.last) {
				q.last = p.last
			}
		} else {
			a.pending[key] = p
		}
		a.mu.Unlock()
	}
}

// add increments one link's counters with optimistic concurrency.
func (a *Auditor) add(ctx context.Context, key types.NamespacedName, p *tally) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		var link v1alpha1.ReceiveLink
		if err := a.Reader.Get(ctx, key, &link); err != nil {
			return err
		}
		if link.UID != p.uid {
			return apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource("receivelinks").GroupResource(), key.Name)
		}
		before := link.DeepCopy()
		link.Status.ResolveCount += p.n
		if last := link.Status.LastResolvedAt; last == nil || p.last.After(last.Time) {
			t := metav1.NewTime(p.last)
			link.Status.LastResolvedAt = &t
		}
		if err := a.Client.Status().Patch(ctx, &link, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("add %d resolves to %s: %w", p.n, key, err)
		}
		return nil
	})
}
