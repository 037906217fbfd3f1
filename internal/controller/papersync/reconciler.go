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
// The child-object machinery (the integration's watch and gate, the
// batch of its pending syncs, the memory of this manager's writes, the
// retention) is internal/reconcile/children's; this package is the
// arXiv and Notion work of a batch.
package papersync

import (
	"context"
	"maps"
	"time"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/children"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxiv"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// +kubebuilder:rbac:groups=switchboard.dev,resources=papersyncs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=switchboard.dev,resources=papersyncs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=notionintegrations,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

const (
	// DependencyRecheck looks again at a sync whose integration is not
	// Ready. The integration's watch wakes it as soon as it is; this is
	// only a safety net.
	DependencyRecheck = children.DependencyRecheck
	// BatchBusy is the wait of a sync whose integration's batch is in
	// flight: that batch may take it, or the next one will.
	BatchBusy = children.BatchBusy
	// DefaultWorkers is how many integrations' batches run at once
	// (arXiv's pacing is shared across them).
	DefaultWorkers = children.DefaultWorkers
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
	// ReadPage reads a page's Link and whether its metadata is filled.
	ReadPage(ctx context.Context, token, pageID, linkProperty string) (notion.Page, error)
}

// DefaultRetries: arXiv 503 and Notion 429 are retried at 1, 2 and 4
// seconds, three times (seed 000 §7.2), never sooner than Retry-After.
// Exact: the next attempt is stored in status, and the runner spreads the
// requeue.
var DefaultRetries = outbound.Schedule{Base: time.Second, Retries: 3, Max: outbound.MaxRetryAfter, Jitter: outbound.NoJitter}

// Reconciler reconciles PaperSyncs.
type Reconciler struct {
	client.Client
	OAuth  oauth.TokenSource
	Notion Notion
	// Pacer keeps each integration's page reads to Notion's three
	// requests a second (none when nil).
	Pacer    *notion.Pacer
	Arxiv    Arxiv
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Retries spaces the attempts of a sync whose arXiv or Notion call
	// failed transiently (DefaultRetries when Base is 0: 1, 2, 4 s).
	Retries outbound.Schedule
	// Recheck spaces the attempts at a sync whose retries ran out
	// (DefaultRecheck when Base is 0).
	Recheck outbound.Schedule
	// Workers is how many batches run at once (DefaultWorkers when 0).
	Workers int
	// Integrations is the NotionIntegration controller's mailbox: each
	// batch's tally, for the integration's papersSynced and syncFailures.
	Integrations children.Tallies

	batcher *children.Batcher[*v1alpha1.PaperSync, *v1alpha1.NotionIntegration]
}

// Runner is the reconcile skeleton with PaperSync's phases.
func (r *Reconciler) Runner() *runner.Runner[*v1alpha1.PaperSync] {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Retries.Base == 0 {
		r.Retries = DefaultRetries
	}
	if r.Recheck.Base == 0 {
		r.Recheck = DefaultRecheck
	}
	r.batcher = &children.Batcher[*v1alpha1.PaperSync, *v1alpha1.NotionIntegration]{
		Client: r.Client, Parent: "integration",
		Grants: grant.New[*v1alpha1.NotionIntegration](grant.Deps{Client: r.Client, Tokens: r.OAuth}, targets.Notion).
			WithProvider(targets.NotionProvider),
		Accepting: accepting,
		Retention: func(ni *v1alpha1.NotionIntegration) time.Duration { return ni.Spec.SyncRetention.Duration },
		// The oldest first: obj and up to arxiv.MaxBatch-1 others share
		// one arXiv request.
		Max:     arxiv.MaxBatch,
		Less:    func(a, b *v1alpha1.PaperSync) bool { return a.CreationTimestamp.Before(&b.CreationTimestamp) },
		Work:    r.work,
		Tallies: r.Integrations,
		Recheck: r.recheckAt,
		Reopen:  r.reopen,
		// Adopted after a restore, a sync still reads its page first
		// (restore.go): the owner reference no longer tells it apart.
		Adopted: func(ps *v1alpha1.PaperSync) {
			ps.Annotations = maps.Clone(ps.Annotations)
			if ps.Annotations == nil {
				ps.Annotations = map[string]string{}
			}
			ps.Annotations[papers.ReadFirstAnnotation] = "restored"
		},
	}
	return &runner.Runner[*v1alpha1.PaperSync]{
		Client: r.Client, Recorder: r.Recorder, Clock: r.Clock,
		New:    func() *v1alpha1.PaperSync { return &v1alpha1.PaperSync{} },
		Normal: r.phases(),
	}
}

// phases: what this manager last wrote, where the cache lags; the
// retention and rechecks of a finished sync; the batch.
func (r *Reconciler) phases() []runner.Phase[*v1alpha1.PaperSync] {
	return []runner.Phase[*v1alpha1.PaperSync]{r.batcher.CatchUp, r.batcher.Collect, r.batcher.Batch}
}

// SetupWithManager registers the controller, the integrations' watch and
// the batches' wake-ups.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	run := r.Runner()
	return r.batcher.Setup(mgr, "papersync", &v1alpha1.PaperSync{}, r.Workers, run)
}

// accepting: an integration takes syncs while it is Ready and not
// suspended.
func accepting(ni *v1alpha1.NotionIntegration) (bool, string) {
	switch {
	case ni.Spec.Suspend:
		return false, "integration " + ni.Name + " is suspended"
	case !status.IsTrue(ni, v1alpha1.ReadyCondition):
		return false, "integration " + ni.Name + " is not Ready"
	}
	return true, ""
}
