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
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/children"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxiv"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// No paper is synced twice by one manager: the batcher runs one batch at
// a time per integration and remembers what each batch wrote until the
// cache shows it (children). A status write that fails forgets its sync,
// which is then synced again: the page gets the same metadata twice, and
// nothing is lost.

// batch is one batch of an integration.
type batch = children.Batch[*v1alpha1.PaperSync, *v1alpha1.NotionIntegration]

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
	s = s.Exact()
	return s.Delay(max(int(attempts)-r.Retries.Retries, 1))
}

// work syncs the batch's members (obj first) with one arXiv request,
// setting each one's status in memory; the batcher writes them.
func (r *Reconciler) work(ctx context.Context, b *batch) runner.Outcome {
	w := &batchRun{r: r, now: b.Now, token: b.Grant.Token, obj: b.Obj, ni: b.Parent, batch: b}
	w.sync(ctx, b.Members)
	b.Tally = children.Tally{Done: int64(w.synced), Failed: int64(w.failed)}
	if w.retryIn > 0 {
		// Members left pending by a throttled or failed call come back on
		// the schedule, as obj does.
		for _, m := range b.Members {
			if m.Status.CompletedAt == nil {
				b.Later(m, w.retryIn)
			}
		}
	}
	if w.objErr != nil {
		return runner.Retry(v1alpha1.UpstreamUnavailableReason, w.objErr, w.retryIn)
	}
	return runner.Wait(w.retryIn)
}

// batchRun is one batch's outcome, computed in memory.
type batchRun struct {
	r              *Reconciler
	now            time.Time
	token          string
	obj            *v1alpha1.PaperSync
	ni             *v1alpha1.NotionIntegration
	batch          *batch
	synced, failed int
	// retryIn is when the members left pending should be tried again.
	retryIn time.Duration
	objErr  error
	// pages are the pages the unsure members read first (restore.go).
	pages map[types.UID]notion.Page
}

// sync fetches the batch's papers in one arXiv request and writes each
// page, setting each member's status in memory.
func (b *batchRun) sync(ctx context.Context, members []*v1alpha1.PaperSync) {
	if members = b.readFirst(ctx, b.resolve(ctx, members)); len(members) == 0 {
		return
	}
	ids := make([]string, 0, len(members))
	seen := map[string]bool{}
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
		case b.filledBefore(ps, paper):
			// Written before a restore re-created it: not again.
		case throttled || runner.Stopping(ctx):
			// Notion throttled this integration, or the manager is stopping:
			// the rest of the batch waits for the next try (the next
			// leader's), without an attempt counted. The pages already
			// written are recorded: the batcher's write outlives the stop.
		default:
			throttled = b.update(ctx, ps, paper)
		}
	}
}

// update writes a paper into its page; it reports whether Notion
// throttled the integration.
func (b *batchRun) update(ctx context.Context, ps *v1alpha1.PaperSync, paper arxiv.Paper) (throttled bool) {
	err := b.r.Notion.UpdatePaper(ctx, b.token, ps.Spec.PageID, paperFor(ps, paper))
	if err != nil {
		b.attemptFailed(ctx, ps, "PageUpdateFailed", fmt.Errorf("update page %s: %w", ps.Spec.PageID, err))
		return throttledBy(err)
	}
	ps.Status.Attempts++
	b.succeed(ps, paper)
	return false
}

// throttledBy reports Notion's 429: the rest of the batch's Notion calls
// wait for the next try.
func throttledBy(err error) bool {
	e, ok := outbound.Classify(err)
	return ok && e.Status == http.StatusTooManyRequests
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
	b.later(delay)
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
}

func (b *batchRun) succeed(ps *v1alpha1.PaperSync, p arxiv.Paper) {
	ps.Status.Title, ps.Status.PublicationYear = notion.Truncate(p.Title), int32(p.Year()) //nolint:gosec // years fit
	b.batch.Succeeded(ps, v1alpha1.SucceededReason, "page updated with "+ps.Spec.ArxivID)
	b.synced++
}

// fail finishes a sync as Failed: a Warning Event with the link and one
// log line, with the sync's key and the reason.
func (b *batchRun) fail(ctx context.Context, ps *v1alpha1.PaperSync, reason, event string, err error) {
	b.batch.Failed(ps, reason, err)
	log.FromContext(ctx).Error(err, "paper sync failed", "paperSync", klog.KObj(ps), "reason", reason)
	if b.r.Recorder != nil {
		b.r.Recorder.Eventf(ps, nil, corev1.EventTypeWarning, event, "Sync", "%s: %s", ps.Spec.Link, err.Error())
	}
	b.failed++
}
