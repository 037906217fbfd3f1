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
// §3.4–3.6): the pending PaperSyncs of an integration are fetched from
// arXiv in one request (at most one request every three seconds across the
// manager), each page is updated, and each PaperSync records the outcome
// in one status write. Batches of different integrations run in parallel.
// Finished PaperSyncs are deleted after the integration's syncRetention.
package papersync

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/arxiv"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/notion"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/runner"
	"github.com/switchboard-dev/switchboard/internal/status"
)

// +kubebuilder:rbac:groups=switchboard.dev,resources=papersyncs,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=switchboard.dev,resources=papersyncs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=notionintegrations,verbs=get;list;watch
// +kubebuilder:rbac:groups=switchboard.dev,resources=notionintegrations/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

const (
	// DependencyRecheck looks again at a sync whose integration is not
	// Ready. The integration's watch wakes it as soon as it is; this is
	// only a safety net.
	DependencyRecheck = 10 * time.Minute
	// BatchBusy is the wait of a sync whose integration's batch is in
	// flight: that batch may take it, or the next one will.
	BatchBusy = time.Second
	// DefaultConcurrency is how many integrations' batches run at once
	// (arXiv's pacing is shared across them).
	DefaultConcurrency = 4
	// statusWriters is how many status writes of one batch run at once:
	// the API server, not arXiv or Notion, sets the drain rate.
	statusWriters = 16
	// counterFlush is how often the integrations' counters are written.
	counterFlush = 5 * time.Second
)

// DefaultRecheck spaces the single attempts at a sync whose retries ran
// out: 1 minute, doubling to half an hour, ±10 %. The seed's 1, 2 and 4 s
// are spent within seconds, so an arXiv or Notion outage of minutes used
// to leave the page empty until the sync's retention (24 h) had passed and
// the backfill made it again; rechecked, the page fills minutes after the
// upstream recovers. A due recheck makes the sync pending, so rechecks
// that fall due while the integration's batch is in flight (or waiting
// its turn at arXiv) share the next request, and the pacer still lets at
// most one request through every 3 s.
var DefaultRecheck = outbound.Schedule{Base: time.Minute, Max: 30 * time.Minute, Jitter: outbound.DefaultJitter}

// Arxiv is the part of the arXiv client the controller uses.
type Arxiv interface {
	// Fetch asks for up to arxiv.MaxBatch identifiers in one request.
	Fetch(ctx context.Context, ids []string) (found map[string]arxiv.Paper, missing []string, err error)
}

// Notion is the part of the Notion client the controller uses.
type Notion interface {
	// UpdatePaper writes a paper into a page.
	UpdatePaper(ctx context.Context, token, pageID string, p notion.Paper) error
}

// Reconciler reconciles PaperSyncs.
type Reconciler struct {
	client.Client
	OAuth    oauth.TokenSource
	Notion   Notion
	Arxiv    Arxiv
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Retries spaces the attempts of a sync whose arXiv or Notion call
	// failed transiently (outbound.NotionRetries when Base is 0: 1, 2, 4 s).
	Retries outbound.Schedule
	// Recheck spaces the attempts at a sync whose retries ran out
	// (DefaultRecheck when Base is 0).
	Recheck outbound.Schedule
	// Concurrency is MaxConcurrentReconciles (DefaultConcurrency when 0).
	Concurrency int

	locks    sync.Map // integration key → *sync.Mutex: one batch per integration
	finished sync.Map // PaperSync UID → time finished, until the cache shows it
	attempts sync.Map // PaperSync UID → int32 Attempts counted for a pending sync, until the cache shows as many
	counts   *status.Counters[*v1alpha1.NotionIntegration]
	wake     chan event.TypedGenericEvent[*v1alpha1.PaperSync]
}

// Runner is the reconcile skeleton with PaperSync's phases.
func (r *Reconciler) Runner() *runner.Runner[*v1alpha1.PaperSync] {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Retries.Base == 0 {
		r.Retries = outbound.NotionRetries
	}
	if r.Recheck.Base == 0 {
		r.Recheck = DefaultRecheck
	}
	if r.wake == nil {
		r.wake = make(chan event.TypedGenericEvent[*v1alpha1.PaperSync], 4*arxiv.MaxBatch)
	}
	return &runner.Runner[*v1alpha1.PaperSync]{
		Client: r.Client, Recorder: r.Recorder, Clock: r.Clock,
		New:    func() *v1alpha1.PaperSync { return &v1alpha1.PaperSync{} },
		Normal: []runner.Phase[*v1alpha1.PaperSync]{r.collect, r.batch},
	}
}

// SetupWithManager registers the controller, its wake-ups and the counter
// flusher.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Concurrency <= 0 {
		r.Concurrency = DefaultConcurrency
	}
	run := r.Runner()
	r.counts = &status.Counters[*v1alpha1.NotionIntegration]{
		Client: r.Client, Every: counterFlush,
		New: func() *v1alpha1.NotionIntegration { return &v1alpha1.NotionIntegration{} },
		Apply: func(ni *v1alpha1.NotionIntegration, t status.Tally) {
			ni.Status.PapersSynced += t.Done
			ni.Status.SyncFailures += t.Failed
		},
	}
	if err := mgr.Add(r.counts); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.PaperSync{}, builder.WithPredicates(status.SpecOrRequest())).
		// An integration turning Ready (or resumed) wakes its waiting syncs:
		// no polling.
		Watches(&v1alpha1.NotionIntegration{}, handler.EnqueueRequestsFromMapFunc(r.pendingOf),
			builder.WithPredicates(readyOrSuspendChanged())).
		// The members of a batch are woken to be collected after their
		// retention, or retried when their status write failed.
		WatchesRawSource(source.Channel(r.wake, &handler.TypedEnqueueRequestForObject[*v1alpha1.PaperSync]{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Concurrency}).
		Named("papersync").
		Complete(run)
}

// pendingOf lists an integration's unfinished syncs from the cache.
func (r *Reconciler) pendingOf(ctx context.Context, o client.Object) []reconcile.Request {
	ni, ok := o.(*v1alpha1.NotionIntegration)
	if !ok || ni.Spec.Suspend || !status.IsTrue(ni, v1alpha1.ReadyCondition) {
		return nil
	}
	return index.Requests(ctx, r, &v1alpha1.PaperSyncList{}, ni.Namespace, index.PendingPaperSyncs, ni.Name)
}

// readyOrSuspendChanged lets through integrations created, resumed, or
// whose Ready condition changed — not every status write (its counters).
func readyOrSuspendChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, okOld := e.ObjectOld.(*v1alpha1.NotionIntegration)
			n, okNew := e.ObjectNew.(*v1alpha1.NotionIntegration)
			if !okOld || !okNew {
				return false
			}
			return o.Spec.Suspend != n.Spec.Suspend ||
				meta.IsStatusConditionTrue(o.Status.Conditions, v1alpha1.ReadyCondition) != meta.IsStatusConditionTrue(n.Status.Conditions, v1alpha1.ReadyCondition)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// wakeLater enqueues a PaperSync without blocking; when the channel is
// full the periodic resync finds it.
func (r *Reconciler) wakeLater(ps *v1alpha1.PaperSync) {
	select {
	case r.wake <- event.TypedGenericEvent[*v1alpha1.PaperSync]{Object: ps}:
	default:
	}
}
