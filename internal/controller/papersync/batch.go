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
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/arxiv"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/notion"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/runner"
	"github.com/switchboard-dev/switchboard/internal/status"
)

// No paper is synced twice. Batches read PaperSyncs from the informer
// cache, which may lag the writes of the batch before: so one batch runs
// at a time per integration (a lock), and the UIDs a batch finished are
// remembered until the cache shows them finished (the expectations a
// ReplicaSet controller keeps). So are the attempts a batch counted for a
// sync that stays pending: a retry that comes sooner than the cache sees
// the last count would otherwise count from the stale one and lose
// attempts. Only the leader runs controllers, so the memory is the only
// writer's. A status write that fails forgets its sync,
// which is then synced again: the page gets the same metadata twice, and
// nothing is lost.

// defaultRetention applies when the integration is gone.
const defaultRetention = 24 * time.Hour

// collect deletes a finished sync once its retention has passed, and
// puts one whose retries ran out back among the pending when its recheck
// is due (before the retention ends).
func (r *Reconciler) collect(ctx context.Context, obj *v1alpha1.PaperSync, run *runner.Run) runner.Outcome {
	if obj.Status.CompletedAt == nil {
		if _, ok := r.finished.Load(obj.UID); ok {
			// Finished by a batch; the cache lags. Look again when it
			// shows how the sync ended: a recheck may be due long before
			// the retention.
			return runner.Wait(BatchBusy)
		}
		return runner.Continue()
	}
	r.finished.Delete(obj.UID) // the cache has caught up
	done := obj.Status.CompletedAt.Time
	retention := r.retention(ctx, obj)
	if due, ok := r.recheckAt(obj); ok && due.Before(done.Add(retention)) {
		if run.Now.Before(due) {
			return runner.Wait(due.Sub(run.Now))
		}
		r.reopen(obj)
		return runner.Continue() // to the batch, with the integration's other pending syncs
	}
	return runner.DeleteAfter(ctx, r.Client, obj, done, retention, run.Now)
}

// retention is the integration's syncRetention (defaultRetention when the
// integration is gone).
func (r *Reconciler) retention(ctx context.Context, obj *v1alpha1.PaperSync) time.Duration {
	ni := &v1alpha1.NotionIntegration{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.IntegrationRef.Name}, ni); err == nil {
		return ni.Spec.SyncRetention.Duration
	}
	return defaultRetention
}

// recheckAt is when a sync that failed because its retries ran out is
// tried again: recheckDelay after its last failure. Syncs that failed for
// good (a permanent answer) are not rechecked.
func (r *Reconciler) recheckAt(obj *v1alpha1.PaperSync) (time.Time, bool) {
	c := status.Get(obj, v1alpha1.StalledCondition)
	if obj.Status.Phase != v1alpha1.SyncFailed || obj.Status.CompletedAt == nil || c == nil || c.Reason != v1alpha1.RetriesExhaustedReason {
		return time.Time{}, false
	}
	return obj.Status.CompletedAt.Add(r.recheckDelay(obj.Status.Attempts)), true
}

// untilNext is how long a finished sync waits: until its recheck when that
// comes before its retention ends, else until it is deleted.
func (r *Reconciler) untilNext(obj *v1alpha1.PaperSync, retention time.Duration, now time.Time) time.Duration {
	at := obj.Status.CompletedAt.Add(retention)
	if due, ok := r.recheckAt(obj); ok && due.Before(at) {
		at = due
	}
	return max(at.Sub(now), time.Second)
}

// reopen makes a sync whose recheck is due pending again, for one more
// attempt: the batch that takes it fetches it with every other pending
// sync of the integration, and other rechecks that fall due while a batch
// is in flight join the next one.
func (r *Reconciler) reopen(obj *v1alpha1.PaperSync) {
	n := int(obj.Status.Attempts) - r.Retries.Retries
	obj.Status.Phase, obj.Status.CompletedAt = v1alpha1.SyncPending, nil
	status.MarkRetrying(obj, v1alpha1.UpstreamUnavailableReason,
		fmt.Sprintf("recheck %d after the retries ran out; last error: %s", n, obj.Status.LastError))
}

// recheckDelay is the un-jittered wait before the recheck that follows a
// sync's attempts-th attempt (the runner jitters the requeue, so each
// reconcile computes the same deadline): Recheck's first delay after the
// attempt that exhausted the retries, then doubling.
func (r *Reconciler) recheckDelay(attempts int32) time.Duration {
	s := r.Recheck
	s.Jitter = 0
	return s.Delay(max(int(attempts)-r.Retries.Retries, 1))
}

// waitFor shows why the sync cannot proceed; the integration's watch wakes
// it when that changes.
func waitFor(obj *v1alpha1.PaperSync, why string) runner.Outcome {
	obj.Status.Phase = v1alpha1.SyncPending
	status.MarkRetrying(obj, v1alpha1.DependencyNotReadyReason, why)
	return runner.Wait(DependencyRecheck)
}

// batch syncs obj and, in the same arXiv request, the integration's other
// pending syncs.
func (r *Reconciler) batch(ctx context.Context, obj *v1alpha1.PaperSync, run *runner.Run) runner.Outcome {
	niKey := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.IntegrationRef.Name}
	ni := &v1alpha1.NotionIntegration{}
	if err := r.Get(ctx, niKey, ni); err != nil {
		if apierrors.IsNotFound(err) {
			return waitFor(obj, "integration "+niKey.Name+" not found")
		}
		return runner.Transient(v1alpha1.DependencyNotReadyReason, fmt.Errorf("read integration %s: %w", niKey.Name, err))
	}
	switch {
	case ni.Spec.Suspend:
		return waitFor(obj, "integration "+ni.Name+" is suspended")
	case !status.IsTrue(ni, v1alpha1.ReadyCondition):
		return waitFor(obj, "integration "+ni.Name+" is not Ready")
	}
	mu, _ := r.locks.LoadOrStore(niKey, &sync.Mutex{})
	if !mu.(*sync.Mutex).TryLock() {
		return runner.Wait(BatchBusy)
	}
	defer mu.(*sync.Mutex).Unlock()

	clientKey, tokenKey := oauth.Keys(ni.Namespace, ni.Spec.OAuth)
	tok, err := r.OAuth.Ensure(ctx, targets.NotionProvider(ni),
		clientKey, tokenKey, ni.Spec.TokenRefresh.RefreshBefore.Duration, false)
	if err != nil {
		return waitFor(obj, "the integration's grant: "+err.Error())
	}
	members, err := r.pending(ctx, obj)
	if err != nil {
		return runner.Transient(v1alpha1.DependencyNotReadyReason, err)
	}
	r.catchUp(members)
	b := &batchRun{r: r, now: run.Now, token: tok.AccessToken, obj: obj}
	b.sync(ctx, members)
	b.write(ctx, members[1:])
	// obj's status is the runner's to write, after this phase: counted as
	// if it lands (a failed write counts one attempt too many, never too
	// few).
	r.remember(obj)
	if r.counts != nil {
		r.counts.Add(niKey, status.Tally{Done: int64(b.synced), Failed: int64(b.failed)})
	}
	if b.retryIn > 0 && len(members) > 1 {
		// Members left pending by a throttled or failed call come back on
		// the schedule, as obj does.
		rest := members[1:]
		time.AfterFunc(b.retryIn, func() {
			for _, m := range rest {
				if m.Status.CompletedAt == nil {
					r.wakeLater(m)
				}
			}
		})
	}
	switch {
	case obj.Status.CompletedAt != nil:
		return runner.Wait(r.untilNext(obj, ni.Spec.SyncRetention.Duration, run.Now)) // then collect
	case b.objErr != nil:
		return runner.Retry(v1alpha1.UpstreamUnavailableReason, b.objErr, b.retryIn)
	}
	return runner.Wait(b.retryIn)
}

// catchUp raises each member's Attempts to what this process counted
// last, where the cache has not seen that write yet, and forgets the
// counts the cache has caught up with.
func (r *Reconciler) catchUp(members []*v1alpha1.PaperSync) {
	for _, m := range members {
		v, ok := r.attempts.Load(m.UID)
		if !ok {
			continue
		}
		if counted := v.(int32); counted > m.Status.Attempts {
			m.Status.Attempts = counted
		} else {
			r.attempts.Delete(m.UID)
		}
	}
}

// remember keeps a pending sync's Attempts for catchUp; a finished sync
// needs none (finished covers it).
func (r *Reconciler) remember(ps *v1alpha1.PaperSync) {
	if ps.Status.CompletedAt != nil {
		r.attempts.Delete(ps.UID)
		return
	}
	r.attempts.Store(ps.UID, ps.Status.Attempts)
}

// pending lists, from the cache, the integration's unfinished syncs: obj
// first, then the oldest, at most arxiv.MaxBatch.
func (r *Reconciler) pending(ctx context.Context, obj *v1alpha1.PaperSync) ([]*v1alpha1.PaperSync, error) {
	var list v1alpha1.PaperSyncList
	if err := r.List(ctx, &list, client.InNamespace(obj.Namespace), client.MatchingFields{index.PendingPaperSyncs: obj.Spec.IntegrationRef.Name}); err != nil {
		return nil, fmt.Errorf("list syncs of %s: %w", obj.Spec.IntegrationRef.Name, err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].CreationTimestamp.Before(&list.Items[j].CreationTimestamp) })
	batch := []*v1alpha1.PaperSync{obj}
	for i := range list.Items {
		ps := &list.Items[i]
		if len(batch) >= arxiv.MaxBatch {
			break
		}
		if _, done := r.finished.Load(ps.UID); done || ps.UID == obj.UID || ps.Status.CompletedAt != nil || !ps.DeletionTimestamp.IsZero() {
			continue
		}
		batch = append(batch, ps) // the cache's List already copied it
	}
	return batch, nil
}

// batchRun is one batch's outcome, computed in memory and then written.
type batchRun struct {
	r     *Reconciler
	now   time.Time
	token string
	obj   *v1alpha1.PaperSync
	// patchers hold each member's status as read, for one write.
	patchers       map[types.UID]*status.Patcher
	synced, failed int
	// retryIn is when the members left pending should be tried again.
	retryIn time.Duration
	objErr  error
}

// sync fetches the batch's papers in one arXiv request and writes each
// page, setting each member's status in memory.
func (b *batchRun) sync(ctx context.Context, members []*v1alpha1.PaperSync) {
	b.patchers = make(map[types.UID]*status.Patcher, len(members))
	ids := make([]string, 0, len(members))
	seen := map[string]bool{}
	for _, ps := range members[1:] {
		b.patchers[ps.UID] = status.NewPatcher(b.r.Client, ps)
	}
	for _, ps := range members {
		if !seen[ps.Spec.ArxivID] {
			seen[ps.Spec.ArxivID] = true
			ids = append(ids, ps.Spec.ArxivID)
		}
	}
	found, missing, err := b.r.Arxiv.Fetch(ctx, ids)
	if err != nil {
		// A permanent arXiv answer fails the batch; a transient one (503,
		// timeout) is retried on the schedule.
		for _, ps := range members {
			b.attemptFailed(ctx, ps, "ArxivFailed", fmt.Errorf("arXiv: %w", err))
		}
		return
	}
	// arXiv answered these ids with an entry without an id, or left them
	// out, or they are malformed (never sent): it has no such paper.
	unknown := make(map[string]bool, len(missing))
	for _, id := range missing {
		unknown[id] = true
	}
	throttled := false
	for _, ps := range members {
		paper, ok := found[ps.Spec.ArxivID]
		switch {
		case unknown[ps.Spec.ArxivID] || !ok:
			ps.Status.Attempts++
			b.fail(ctx, ps, v1alpha1.PaperNotFoundReason, "PaperNotFound", fmt.Errorf("arXiv has no paper %s", ps.Spec.ArxivID))
		case throttled:
			// Notion throttled this integration: the rest of the batch waits
			// for the next try, without an attempt counted.
		default:
			err := b.r.Notion.UpdatePaper(ctx, b.token, ps.Spec.PageID, notion.Paper{
				Title: paper.Title, Summary: paper.Summary, Authors: paper.Authors, Year: paper.Year(), Link: ps.Spec.Link,
			})
			if err != nil {
				if e, ok := outbound.Classify(err); ok && e.Status == 429 {
					throttled = true
				}
				b.attemptFailed(ctx, ps, "PageUpdateFailed", fmt.Errorf("update page %s: %w", ps.Spec.PageID, err))
				continue
			}
			ps.Status.Attempts++
			b.succeed(ps, paper)
		}
	}
}

// attemptFailed counts an attempt: a transient error is retried on the
// schedule until it is spent, and then rechecked (collect); anything else
// fails the sync.
func (b *batchRun) attemptFailed(ctx context.Context, ps *v1alpha1.PaperSync, event string, err error) {
	ps.Status.Attempts++
	n := int(ps.Status.Attempts)
	if retries := b.r.Retries.Retries; retries > 0 && n > retries+1 && outbound.IsTransient(err) {
		b.recheckFailed(ctx, ps, n-retries-1, err)
		return
	}
	if !outbound.IsTransient(err) || b.r.Retries.Exhausted(n) {
		reason := v1alpha1.UpstreamRejectedReason
		if outbound.IsTransient(err) {
			reason = v1alpha1.RetriesExhaustedReason
			err = fmt.Errorf("gave up after %d attempts: %w", n, err)
		}
		b.fail(ctx, ps, reason, event, err)
		return
	}
	delay := b.r.Retries.After(n, err)
	ps.Status.Phase, ps.Status.LastError = v1alpha1.SyncPending, err.Error()
	status.MarkRetrying(ps, v1alpha1.UpstreamUnavailableReason, err.Error())
	if b.retryIn == 0 || delay < b.retryIn {
		b.retryIn = delay
	}
	if ps == b.obj {
		b.objErr = err
	}
}

// recheckFailed finishes a recheck that failed transiently: Failed again,
// for the next recheck, without another Event or failure count (the
// dead-letter Event was sent when the retries ran out).
func (b *batchRun) recheckFailed(ctx context.Context, ps *v1alpha1.PaperSync, recheck int, err error) {
	now := metav1.NewTime(b.now)
	ps.Status.Phase, ps.Status.LastError, ps.Status.CompletedAt = v1alpha1.SyncFailed, err.Error(), &now
	status.MarkStalled(ps, v1alpha1.RetriesExhaustedReason, fmt.Sprintf("recheck %d failed: %v", recheck, err))
	log.FromContext(ctx).V(1).Info("paper sync recheck failed", "paperSync", klog.KObj(ps), "recheck", recheck, "error", err.Error())
	b.r.finished.Store(ps.UID, b.now)
}

func (b *batchRun) succeed(ps *v1alpha1.PaperSync, p arxiv.Paper) {
	now := metav1.NewTime(b.now)
	ps.Status.Phase, ps.Status.LastError, ps.Status.CompletedAt = v1alpha1.SyncSucceeded, "", &now
	ps.Status.Title, ps.Status.PublicationYear = notion.Truncate(p.Title), int32(p.Year()) //nolint:gosec // years fit
	status.MarkReady(ps, v1alpha1.SucceededReason, "page updated with "+ps.Spec.ArxivID)
	b.r.finished.Store(ps.UID, b.now)
	b.synced++
}

// fail finishes a sync as Failed: a Warning Event with the link and one
// log line, with the sync's key and the reason.
func (b *batchRun) fail(ctx context.Context, ps *v1alpha1.PaperSync, reason, event string, err error) {
	now := metav1.NewTime(b.now)
	ps.Status.Phase, ps.Status.LastError, ps.Status.CompletedAt = v1alpha1.SyncFailed, err.Error(), &now
	status.MarkStalled(ps, reason, err.Error())
	log.FromContext(ctx).Error(err, "paper sync failed", "paperSync", klog.KObj(ps), "reason", reason)
	if b.r.Recorder != nil {
		b.r.Recorder.Eventf(ps, nil, corev1.EventTypeWarning, event, "Sync", "%s: %s", ps.Spec.Link, err.Error())
	}
	b.r.finished.Store(ps.UID, b.now)
	b.failed++
}

// write patches the members' statuses (obj's is the runner's), several at
// once, then wakes them: finished ones to be collected after their
// retention, and those whose write failed to be synced again.
func (b *batchRun) write(ctx context.Context, members []*v1alpha1.PaperSync) {
	status.Each(statusWriters, members, func(ps *v1alpha1.PaperSync) {
		if err := b.patchers[ps.UID].Patch(ctx, ps); err != nil {
			if !apierrors.IsNotFound(err) {
				log.FromContext(ctx).Error(err, "paper sync status not written; it will be synced again", "paperSync", klog.KObj(ps))
			}
			b.r.finished.Delete(ps.UID)
		} else {
			b.r.remember(ps)
		}
		if ps.Status.CompletedAt != nil {
			b.r.wakeLater(ps)
		}
	})
}
