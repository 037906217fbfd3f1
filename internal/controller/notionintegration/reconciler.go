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

// Package notionintegration keeps NotionIntegrations true: the one-use
// connect link, the token refresh timer (seed 000 §3.7), the workspace
// identity, the "ArXiv Papers" database (§3.2), the secret webhook path,
// and the backfill that heals lost Automation webhooks.
package notionintegration

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// +kubebuilder:rbac:groups=switchboard.dev,resources=notionintegrations,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=notionintegrations/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=notionintegrations/finalizers,verbs=update
// +kubebuilder:rbac:groups=switchboard.dev,resources=papersyncs,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Notion is the part of the Notion client the controller uses.
type Notion interface {
	// FindOrCreateDatabase finds the papers database (pinned id; the
	// duplicated template; by name) or creates it, and adds missing
	// properties.
	FindOrCreateDatabase(ctx context.Context, token string, spec notion.DatabaseSpec) (notion.Database, error)
}

// Retries spaces Notion's and the token endpoint's transient failures: 1,
// 2, 4 s and on, doubling (seed 000 §7.2), ±10 %, never sooner than
// Retry-After.
var Retries = outbound.Schedule{Base: time.Second, Max: outbound.MaxRetryAfter}

// Reconciler reconciles NotionIntegrations.
type Reconciler struct {
	client.Client
	OAuth    oauth.TokenSource
	Notion   Notion
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Backfill creates PaperSyncs for pages whose metadata is missing.
	Backfill func(ctx context.Context, ni *v1alpha1.NotionIntegration, token string) (int, error)
	// PublicURL is the webhook server's public base URL, for the connect
	// link kept in the connect Secret ("" keeps only the token).
	PublicURL string
	// Reports is the mailbox the PaperSync controller posts to.
	Reports *Reports
	// Workers is how many objects are reconciled at once (DefaultWorkers
	// when 0).
	Workers int

	// backfilled is each integration's last scan until the cache shows it.
	backfilled runner.Written[metav1.Time]
}

// Runner is the reconcile skeleton with the integration's phases: the
// connect link, the webhook path, the grant, the database, the backfill.
func (r *Reconciler) Runner() *runner.Runner[*v1alpha1.NotionIntegration] {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	r.backfilled.Clock = r.Clock
	phases := grant.New[*v1alpha1.NotionIntegration](grant.Deps{Client: r.Client, Tokens: r.OAuth, Recorder: r.Recorder, PublicURL: r.PublicURL},
		targets.Notion).WithProvider(targets.NotionProvider).OnGrant(r.granted).WithRefreshLead()
	return &runner.Runner[*v1alpha1.NotionIntegration]{
		Client: r.Client, Recorder: r.Recorder, Clock: r.Clock,
		New: func() *v1alpha1.NotionIntegration { return &v1alpha1.NotionIntegration{} },
		Normal: []runner.Phase[*v1alpha1.NotionIntegration]{
			r.reports, phases.Connect, r.webhookPath, phases.Grant, r.eventsPath, r.database, r.backfill,
		},
		Ready: readyMessage,
		// Notion's and the token endpoint's transient failures: 1, 2, 4 s
		// and on, doubling (seed 000 §7.2), never sooner than Retry-After.
		Transient: Retries,
	}
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.NotionIntegration{}, builder.WithPredicates(status.SpecOrRequest())).
		// Token Secrets the operator wrote carry its label and are cached:
		// a grant from the OAuth callback reconciles its integration.
		Watches(grant.SecretWatch(r, &v1alpha1.NotionIntegrationList{})).
		// The connect Secret: deleted by the OAuth callback, minted again.
		Owns(&corev1.Secret{}).
		// The syncs' tallies (reports.go).
		WatchesRawSource(r.mailbox().Source()).
		WithOptions(controller.Options{MaxConcurrentReconciles: wire.Workers{N: r.Workers}.Or(DefaultWorkers)}).
		Named("notionintegration").
		Complete(r.Runner())
}
