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

// Package notionintegration keeps NotionIntegrations true: the token
// refresh timer (seed 000 §3.7), the workspace identity, the "ArXiv Papers"
// database (§3.2), the secret webhook path, and the backfill that heals
// lost Automation webhooks.
package notionintegration

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/notion"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/status"
)

// Timers.
const (
	// RetryDelay is the wait after a transient failure (token endpoint 5xx,
	// Notion unavailable) before trying again.
	RetryDelay = 30 * time.Second
	// jitter spreads timers of many integrations (±10 %).
	jitter = 0.1
)

// tokenSecretIndex finds the integrations that use a token Secret, so that
// a new grant written by the OAuth callback reconciles them at once.
const tokenSecretIndex = "spec.oauth.tokenSecretRef.name" //nolint:gosec // a field path, not a credential

// Reconciler reconciles NotionIntegrations.
type Reconciler struct {
	client.Client
	OAuth    *oauth.Engine
	Notion   *notion.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Backfill creates PaperSyncs for pages whose metadata is missing.
	Backfill func(ctx context.Context, ni *v1alpha1.NotionIntegration, token string) (int, error)
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.NotionIntegration{}, tokenSecretIndex,
		func(o client.Object) []string {
			return []string{o.(*v1alpha1.NotionIntegration).Spec.OAuth.TokenSecretRef.Name}
		}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.NotionIntegration{}, builder.WithPredicates(status.SpecOrRequest())).
		// Token Secrets the operator wrote carry its label and are cached:
		// a grant from the OAuth callback reconciles its integration.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.integrationsUsing)).
		Named("notionintegration").
		Complete(r)
}

func (r *Reconciler) integrationsUsing(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.NotionIntegrationList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{tokenSecretIndex: o.GetName()}); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, ni := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ni.Namespace, Name: ni.Name}})
	}
	return reqs
}

// Reconcile computes status in memory and writes it once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	obj := &v1alpha1.NotionIntegration{}
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	patcher := status.NewPatcher(r.Client, obj)
	defer func() { retErr = errors.Join(retErr, patcher.Patch(ctx, obj)) }()
	if !obj.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // PaperSyncs are owned and garbage-collected
	}
	if obj.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	return r.reconcileNormal(ctx, obj)
}

// jittered spreads d by ±10 %.
func jittered(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (1 + jitter*(2*rand.Float64()-1))) //nolint:gosec // jitter needs no cryptographic randomness
}
