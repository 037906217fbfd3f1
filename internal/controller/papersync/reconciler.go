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

// Package papersync fills Notion pages with arXiv metadata (seed 000
// §3.4–3.6): pending PaperSyncs of an integration are fetched from arXiv in
// one request (at most one request every three seconds across the
// manager), each page is updated, and each PaperSync records the outcome.
// Finished PaperSyncs are deleted after the integration's syncRetention.
package papersync

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/arxiv"
	"github.com/switchboard-dev/switchboard/internal/notion"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/papers"
	"github.com/switchboard-dev/switchboard/internal/status"
)

// Retry policy (seed 000 §7.2: arXiv 503 and Notion 429 are retried at
// 1, 2 and 4 seconds, three times).
var retryWaits = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}

const (
	// waitForIntegration is the requeue while the integration is not ready.
	waitForIntegration = 15 * time.Second
	// retryLater is the requeue after the in-place retries are spent.
	retryLater = 30 * time.Second
	// maxAttempts fails a sync whose transient failures never end.
	maxAttempts = 10
)

// Reconciler reconciles PaperSyncs.
type Reconciler struct {
	client.Client
	// APIReader reads PaperSyncs from the API server: a batch may have
	// finished a sync moments ago, and a stale cache would sync it twice.
	APIReader client.Reader
	OAuth     *oauth.Engine
	Notion    *notion.Client
	Arxiv     *arxiv.Client
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// Sleep waits between in-place retries.
	Sleep func(context.Context, time.Duration) error
}

// SetupWithManager registers the controller. One worker: arXiv allows one
// request every three seconds anyway, and a batch serves every pending
// sync of an integration.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Sleep == nil {
		r.Sleep = outbound.Sleep
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.PaperSync{}, builder.WithPredicates(status.SpecOrRequest())).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Named("papersync").
		Complete(r)
}

// Reconcile handles the sync and, in the same arXiv request, every other
// pending sync of its integration.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := &v1alpha1.PaperSync{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if done := obj.Status.CompletedAt; done != nil {
		return r.collect(ctx, obj)
	}

	ni := &v1alpha1.NotionIntegration{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.IntegrationRef.Name}, ni); err != nil {
		if apierrors.IsNotFound(err) {
			return r.wait(ctx, obj, "integration "+obj.Spec.IntegrationRef.Name+" not found")
		}
		return ctrl.Result{}, err
	}
	if !status.IsTrue(ni, v1alpha1.ReadyCondition) {
		return r.wait(ctx, obj, "integration "+ni.Name+" is not Ready")
	}
	tok, err := r.OAuth.Ensure(ctx, papers.Provider(ni), types.NamespacedName{Namespace: ni.Namespace, Name: ni.Spec.OAuth.ClientSecretRef.Name},
		types.NamespacedName{Namespace: ni.Namespace, Name: ni.Spec.OAuth.TokenSecretRef.Name}, ni.Spec.TokenRefresh.RefreshBefore.Duration, false)
	if err != nil {
		return r.wait(ctx, obj, "the integration's grant: "+err.Error())
	}
	batch, err := r.pending(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	res, err := r.sync(ctx, ni, tok.AccessToken, batch)
	if obj.Status.CompletedAt != nil && err == nil {
		// Come back to delete it after the retention.
		res = ctrl.Result{RequeueAfter: max(ni.Spec.SyncRetention.Duration, time.Second)}
	}
	return res, err
}

// pending lists the integration's unfinished syncs, oldest first, obj
// included, at most arxiv.MaxBatch.
func (r *Reconciler) pending(ctx context.Context, obj *v1alpha1.PaperSync) ([]*v1alpha1.PaperSync, error) {
	var list v1alpha1.PaperSyncList
	if err := r.APIReader.List(ctx, &list, client.InNamespace(obj.Namespace), client.MatchingLabels{papers.IntegrationLabel: obj.Spec.IntegrationRef.Name}); err != nil {
		return nil, err
	}
	batch := []*v1alpha1.PaperSync{obj}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].CreationTimestamp.Before(&list.Items[j].CreationTimestamp) })
	for i := range list.Items {
		ps := &list.Items[i]
		if ps.Name == obj.Name || ps.Status.CompletedAt != nil || !ps.DeletionTimestamp.IsZero() || len(batch) >= arxiv.MaxBatch {
			continue
		}
		batch = append(batch, ps)
	}
	return batch, nil
}

// wait records why the sync cannot proceed and looks again later.
func (r *Reconciler) wait(ctx context.Context, obj *v1alpha1.PaperSync, why string) (ctrl.Result, error) {
	p := status.NewPatcher(r.Client, obj)
	obj.Status.Phase = v1alpha1.SyncPending
	status.MarkRetrying(obj, v1alpha1.DependencyNotReadyReason, why)
	return ctrl.Result{RequeueAfter: waitForIntegration}, p.Patch(ctx, obj)
}

// collect deletes a finished sync once its retention has passed.
func (r *Reconciler) collect(ctx context.Context, obj *v1alpha1.PaperSync) (ctrl.Result, error) {
	retention := 24 * time.Hour
	ni := &v1alpha1.NotionIntegration{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.IntegrationRef.Name}, ni); err == nil {
		retention = ni.Spec.SyncRetention.Duration
	}
	left := obj.Status.CompletedAt.Add(retention).Sub(r.Clock.Now())
	if left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, obj, client.Preconditions{UID: &obj.UID}))
}

// sync fetches the batch's papers in one arXiv request and writes each page.
func (r *Reconciler) sync(ctx context.Context, ni *v1alpha1.NotionIntegration, token string, batch []*v1alpha1.PaperSync) (ctrl.Result, error) {
	ids := make([]string, 0, len(batch))
	seen := map[string]bool{}
	for _, ps := range batch {
		if !seen[ps.Spec.ArxivID] {
			seen[ps.Spec.ArxivID] = true
			ids = append(ids, ps.Spec.ArxivID)
		}
	}
	found, _, err := r.fetchWithRetry(ctx, ids)
	if err != nil {
		// A permanent arXiv answer (a malformed id) fails the batch's syncs;
		// a transient one (503 after the retries, timeouts) waits.
		return r.finishAll(ctx, ni, batch, err)
	}
	var errs []error
	var res ctrl.Result
	synced, failed := 0, 0
	for _, ps := range batch {
		p := status.NewPatcher(r.Client, ps)
		ps.Status.Attempts++
		paper, ok := found[ps.Spec.ArxivID]
		switch {
		case !ok:
			r.fail(ps, v1alpha1.UpstreamRejectedReason, "PaperNotFound", fmt.Sprintf("arXiv has no paper %s", ps.Spec.ArxivID))
			failed++
		default:
			err := r.updatePage(ctx, token, ps, paper)
			switch {
			case err == nil:
				r.succeed(ps, paper)
				synced++
			case outbound.IsTransient(err) && ps.Status.Attempts < maxAttempts:
				ps.Status.Phase, ps.Status.LastError = v1alpha1.SyncPending, err.Error()
				status.MarkRetrying(ps, v1alpha1.UpstreamUnavailableReason, err.Error())
				res = ctrl.Result{RequeueAfter: retryLater}
			default:
				r.fail(ps, v1alpha1.UpstreamRejectedReason, "PageUpdateFailed", err.Error())
				failed++
			}
		}
		if err := p.Patch(ctx, ps); err != nil {
			errs = append(errs, err)
		}
	}
	if err := r.count(ctx, ni, synced, failed); err != nil {
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}

func (r *Reconciler) fetchWithRetry(ctx context.Context, ids []string) (map[string]arxiv.Paper, []string, error) {
	for attempt := 0; ; attempt++ {
		found, missing, err := r.Arxiv.Fetch(ctx, ids)
		if err == nil || !outbound.IsTransient(err) || attempt >= len(retryWaits) {
			return found, missing, err
		}
		if serr := r.Sleep(ctx, retryWaits[attempt]); serr != nil {
			return nil, nil, serr
		}
	}
}

func (r *Reconciler) updatePage(ctx context.Context, token string, ps *v1alpha1.PaperSync, p arxiv.Paper) error {
	for attempt := 0; ; attempt++ {
		err := r.Notion.UpdatePaper(ctx, token, ps.Spec.PageID, notion.Paper{
			Title: p.Title, Summary: p.Summary, Authors: p.Authors, Year: p.Year(), Link: ps.Spec.Link,
		})
		e, ok := outbound.Classify(err)
		if err == nil || !ok || e.Status != 429 || attempt >= len(retryWaits) {
			return err
		}
		wait := retryWaits[attempt]
		if e.RetryAfter > wait {
			wait = e.RetryAfter
		}
		if serr := r.Sleep(ctx, wait); serr != nil {
			return serr
		}
	}
}

// finishAll records an arXiv failure on every sync of the batch.
func (r *Reconciler) finishAll(ctx context.Context, ni *v1alpha1.NotionIntegration, batch []*v1alpha1.PaperSync, err error) (ctrl.Result, error) {
	var errs []error
	failed := 0
	res := ctrl.Result{}
	for _, ps := range batch {
		p := status.NewPatcher(r.Client, ps)
		ps.Status.Attempts++
		if outbound.IsTransient(err) && ps.Status.Attempts < maxAttempts {
			ps.Status.Phase, ps.Status.LastError = v1alpha1.SyncPending, err.Error()
			status.MarkRetrying(ps, v1alpha1.UpstreamUnavailableReason, err.Error())
			res = ctrl.Result{RequeueAfter: retryLater}
		} else {
			r.fail(ps, v1alpha1.UpstreamRejectedReason, "ArxivFailed", err.Error())
			failed++
		}
		if perr := p.Patch(ctx, ps); perr != nil {
			errs = append(errs, perr)
		}
	}
	if cerr := r.count(ctx, ni, 0, failed); cerr != nil {
		errs = append(errs, cerr)
	}
	return res, errors.Join(errs...)
}

func (r *Reconciler) succeed(ps *v1alpha1.PaperSync, p arxiv.Paper) {
	now := metav1.NewTime(r.Clock.Now())
	ps.Status.Phase, ps.Status.LastError, ps.Status.CompletedAt = v1alpha1.SyncSucceeded, "", &now
	ps.Status.Title, ps.Status.PublicationYear = notion.Truncate(p.Title), int32(p.Year()) //nolint:gosec // years fit
	status.MarkReady(ps, v1alpha1.SucceededReason, "page updated with "+ps.Spec.ArxivID)
	if r.Recorder != nil {
		r.Recorder.Eventf(ps, nil, corev1.EventTypeNormal, "PaperSynced", "Sync", "page %s now holds arXiv %s", ps.Spec.PageID, ps.Spec.ArxivID)
	}
}

func (r *Reconciler) fail(ps *v1alpha1.PaperSync, reason, event, msg string) {
	now := metav1.NewTime(r.Clock.Now())
	ps.Status.Phase, ps.Status.LastError, ps.Status.CompletedAt = v1alpha1.SyncFailed, msg, &now
	status.MarkStalled(ps, reason, msg)
	if r.Recorder != nil {
		r.Recorder.Eventf(ps, nil, corev1.EventTypeWarning, event, "Sync", "%s: %s", ps.Spec.Link, msg)
	}
}

// count adds to the integration's counters with a merge patch of just
// those fields (the integration controller owns the rest of its status).
func (r *Reconciler) count(ctx context.Context, ni *v1alpha1.NotionIntegration, synced, failed int) error {
	if synced == 0 && failed == 0 {
		return nil
	}
	for range 5 {
		cur := &v1alpha1.NotionIntegration{}
		if err := r.Get(ctx, client.ObjectKeyFromObject(ni), cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		before := cur.DeepCopy()
		cur.Status.PapersSynced += int64(synced)
		cur.Status.SyncFailures += int64(failed)
		err := r.Status().Patch(ctx, cur, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
		if !apierrors.IsConflict(err) {
			return err
		}
	}
	return fmt.Errorf("count syncs of %s: too many conflicts", ni.Name)
}

// Backfill creates the PaperSyncs for pages whose Link is set but whose
// Title or Publication Year is empty (a lost webhook, healed).
func Backfill(c client.Client, nc *notion.Client) func(ctx context.Context, ni *v1alpha1.NotionIntegration, token string) (int, error) {
	return func(ctx context.Context, ni *v1alpha1.NotionIntegration, token string) (int, error) {
		if ni.Status.DatabaseID == "" {
			return 0, nil
		}
		pages, err := nc.PagesMissingMetadata(ctx, token, ni.Status.DatabaseID)
		if err != nil {
			return 0, err
		}
		created := 0
		for _, pl := range pages {
			id, err := arxiv.ParseLink(pl.Link)
			pageID := papers.NormalizeID(pl.PageID)
			if err != nil || pageID == "" {
				continue // not an arXiv link: nothing to fill
			}
			ps := papers.NewSync(ni, pageID, pl.Link, id)
			switch err := c.Create(ctx, ps); {
			case err == nil:
				created++
			case apierrors.IsAlreadyExists(err):
				// A sync for this page and paper exists (pending, or failed
				// and kept for its retention): not again.
			default:
				return created, err
			}
		}
		return created, nil
	}
}
