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
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/notion"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/runner"
	"github.com/switchboard-dev/switchboard/internal/status"
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
	FindOrCreateDatabase(ctx context.Context, token, name, pinnedID, templateID, parentPage string) (notion.Database, error)
}

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
}

// Runner is the reconcile skeleton with the integration's phases: the
// connect link, the webhook path, the grant, the database, the backfill.
func (r *Reconciler) Runner() *runner.Runner[*v1alpha1.NotionIntegration] {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	grant := &oauth.Phases[*v1alpha1.NotionIntegration]{
		Client: r.Client, Tokens: r.OAuth, Recorder: r.Recorder, Target: "notion", PublicURL: r.PublicURL,
		Provider:      targets.NotionProvider,
		Credentials:   func(ni *v1alpha1.NotionIntegration) v1alpha1.OAuthCredentials { return ni.Spec.OAuth },
		RefreshBefore: func(ni *v1alpha1.NotionIntegration) time.Duration { return ni.Spec.TokenRefresh.RefreshBefore.Duration },
		Granted:       r.granted,
	}
	return &runner.Runner[*v1alpha1.NotionIntegration]{
		Client: r.Client, Recorder: r.Recorder, Clock: r.Clock,
		New:       func() *v1alpha1.NotionIntegration { return &v1alpha1.NotionIntegration{} },
		Suspended: func(ni *v1alpha1.NotionIntegration) bool { return ni.Spec.Suspend },
		Normal: []runner.Phase[*v1alpha1.NotionIntegration]{
			grant.Connect, r.webhookPath, grant.Grant, r.database, r.backfill, r.ready,
		},
		// Notion's and the token endpoint's transient failures: 1, 2, 4 s
		// and on, doubling (seed 000 §7.2), never sooner than Retry-After.
		Transient: outbound.Schedule{Base: outbound.NotionRetries.Base, Max: outbound.MaxRetryAfter, Jitter: outbound.DefaultJitter},
	}
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.NotionIntegration{}, builder.WithPredicates(status.SpecOrRequest())).
		// Token Secrets the operator wrote carry its label and are cached:
		// a grant from the OAuth callback reconciles its integration.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.integrationsUsing), builder.WithPredicates(oauth.GrantChanged())).
		// The connect Secret: deleted by the OAuth callback, minted again.
		Owns(&corev1.Secret{}).
		Named("notionintegration").
		Complete(r.Runner())
}

func (r *Reconciler) integrationsUsing(ctx context.Context, o client.Object) []reconcile.Request {
	return index.Requests(ctx, r, &v1alpha1.NotionIntegrationList{}, o.GetNamespace(), index.NotionTokenSecret, o.GetName())
}
