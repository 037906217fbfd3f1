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

package notionintegration

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/notion"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/papers"
	"github.com/switchboard-dev/switchboard/internal/status"
)

func (r *Reconciler) reconcileNormal(ctx context.Context, obj *v1alpha1.NotionIntegration) (ctrl.Result, error) {
	now := r.Clock.Now()
	requested, force := status.RequestedAt(obj)
	if force {
		status.AcknowledgeRequest(obj, requested)
	}

	// 1. The webhook path, from the webhook token.
	if err := r.webhookPath(ctx, obj); err != nil {
		status.MarkStalled(obj, v1alpha1.SecretNotFoundReason, err.Error())
		// Person-made Secrets are not watched (not cached): look again soon.
		return ctrl.Result{RequeueAfter: jittered(time.Minute)}, nil
	}

	// 2. The grant: refreshed when less than refreshBefore remains, or when
	// a person asked (the seed's manual refresh endpoint, §3.7.5).
	tok, res, done := r.token(ctx, obj, force)
	if done {
		return res, nil
	}

	// 3. The database (§3.2): found, created or repaired on the first run,
	// on a spec change, when asked, and on the backfill timer.
	backfillDue := obj.Status.LastBackfillAt == nil || !now.Before(obj.Status.LastBackfillAt.Add(obj.Spec.BackfillInterval.Duration))
	if obj.Status.DatabaseID == "" || obj.Status.ObservedGeneration != obj.Generation || force || backfillDue {
		if res, done := r.database(ctx, obj, tok.AccessToken); done {
			return res, nil
		}
	}

	// 4. Backfill (§3.3 healed): pages with a Link but no metadata; also
	// when a person asks for a reconcile.
	if (backfillDue || force) && r.Backfill != nil {
		n, err := r.Backfill(ctx, obj, tok.AccessToken)
		if err != nil {
			status.MarkRetrying(obj, v1alpha1.UpstreamUnavailableReason, "backfill: "+err.Error())
			return ctrl.Result{RequeueAfter: jittered(RetryDelay)}, nil
		}
		t := metav1.NewTime(now)
		obj.Status.LastBackfillAt = &t
		if n > 0 && r.Recorder != nil {
			r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Backfill", "Backfill", "queued %d pages whose metadata was missing", n)
		}
	}

	status.MarkReady(obj, v1alpha1.SucceededReason, fmt.Sprintf("workspace %q connected; database %s", obj.Status.WorkspaceName, obj.Status.DatabaseID))

	// Next: the earlier of the refresh deadline and the backfill timer.
	next := obj.Spec.BackfillInterval.Duration
	if until := tok.Expiry.Add(-obj.Spec.TokenRefresh.RefreshBefore.Duration).Sub(now); until < next {
		next = until
	}
	if next < time.Second {
		next = time.Second
	}
	return ctrl.Result{RequeueAfter: jittered(next)}, nil
}

func (r *Reconciler) webhookPath(ctx context.Context, obj *v1alpha1.NotionIntegration) error {
	var sec corev1.Secret
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.WebhookSecretRef.Name}
	if err := r.Get(ctx, key, &sec); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("webhook Secret %s not found", key.Name)
		}
		return err
	}
	token := string(sec.Data[papers.WebhookTokenKey])
	if len(token) < 16 {
		return fmt.Errorf("webhook Secret %s needs a key %q of at least 16 characters", key.Name, papers.WebhookTokenKey)
	}
	obj.Status.WebhookPath = papers.WebhookPath(token, obj.Namespace, obj.Name)
	return nil
}

// token ensures a fresh grant; done means the reconcile ends here.
func (r *Reconciler) token(ctx context.Context, obj *v1alpha1.NotionIntegration, force bool) (oauth.Token, ctrl.Result, bool) {
	clientKey := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.OAuth.ClientSecretRef.Name}
	tokenKey := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.OAuth.TokenSecretRef.Name}
	margin := obj.Spec.TokenRefresh.RefreshBefore.Duration
	tok, err := r.OAuth.Ensure(ctx, papers.Provider(obj), clientKey, tokenKey, margin, force)
	switch {
	case errors.Is(err, oauth.ErrReauthRequired):
		// The Secret is kept (seed 000 §3.7.6); a person connects again and
		// the callback's new grant reconciles this object.
		status.Set(obj, v1alpha1.AuthenticatedCondition, metav1.ConditionFalse, v1alpha1.ReauthRequiredReason, err.Error())
		status.MarkStalled(obj, v1alpha1.ReauthRequiredReason, "connect the workspace again: "+err.Error())
		r.event(obj, corev1.EventTypeWarning, v1alpha1.ReauthRequiredReason, err.Error())
		return oauth.Token{}, ctrl.Result{}, true
	case err != nil:
		status.MarkRetrying(obj, v1alpha1.TokenRefreshFailedReason, err.Error())
		return oauth.Token{}, ctrl.Result{RequeueAfter: jittered(RetryDelay)}, true
	}
	st := &obj.Status
	if tok.Refreshed {
		now := metav1.NewTime(r.Clock.Now())
		st.LastTokenRefreshAt = &now
		st.TokenRefreshes++
	}
	if st.TokenExpiresAt == nil || !st.TokenExpiresAt.Time.Equal(tok.Expiry) {
		exp := metav1.NewTime(tok.Expiry)
		st.TokenExpiresAt = &exp
	}
	st.WorkspaceID = tok.Extra["workspace_id"]
	st.WorkspaceName = tok.Extra["workspace_name"]
	st.BotID = tok.Extra["bot_id"]
	st.DuplicatedTemplateID = tok.Extra["duplicated_template_id"]
	status.Set(obj, v1alpha1.AuthenticatedCondition, metav1.ConditionTrue, v1alpha1.SucceededReason, "the grant works")
	return tok, ctrl.Result{}, false
}

func (r *Reconciler) database(ctx context.Context, obj *v1alpha1.NotionIntegration, token string) (ctrl.Result, bool) {
	spec := obj.Spec.Database
	name := spec.Name
	if name == "" {
		name = "ArXiv Papers"
	}
	db, err := r.Notion.FindOrCreateDatabase(ctx, token, name, spec.ID, obj.Status.DuplicatedTemplateID, spec.ParentPageID)
	if err != nil {
		msg := err.Error()
		status.Set(obj, v1alpha1.DatabaseReadyCondition, metav1.ConditionFalse, v1alpha1.UpstreamRejectedReason, msg)
		switch {
		case notion.IsUnauthorized(err):
			status.Set(obj, v1alpha1.AuthenticatedCondition, metav1.ConditionFalse, v1alpha1.ReauthRequiredReason, msg)
			status.MarkStalled(obj, v1alpha1.ReauthRequiredReason, msg)
			return ctrl.Result{}, true
		case outbound.IsPermanent(err):
			status.MarkStalled(obj, v1alpha1.UpstreamRejectedReason, msg)
			r.event(obj, corev1.EventTypeWarning, "DatabaseFailed", msg)
			return ctrl.Result{}, true
		default:
			status.MarkRetrying(obj, v1alpha1.UpstreamUnavailableReason, msg)
			delay := RetryDelay
			if e, ok := outbound.Classify(err); ok && e.RetryAfter > 0 {
				delay = e.RetryAfter
			}
			return ctrl.Result{RequeueAfter: jittered(delay)}, true
		}
	}
	if db.Created {
		r.event(obj, corev1.EventTypeNormal, "DatabaseCreated", "created database "+name+" ("+db.ID+")")
	}
	if len(db.Added) > 0 {
		r.event(obj, corev1.EventTypeNormal, "DatabaseRepaired", fmt.Sprintf("added properties %v", db.Added))
	}
	obj.Status.DatabaseID, obj.Status.DatabaseURL = db.ID, db.URL
	status.Set(obj, v1alpha1.DatabaseReadyCondition, metav1.ConditionTrue, v1alpha1.SucceededReason, "database has every property of the seed's schema")
	return ctrl.Result{}, false
}

func (r *Reconciler) event(obj *v1alpha1.NotionIntegration, typ, reason, note string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, typ, reason, "Reconcile", "%s", note)
	}
}
