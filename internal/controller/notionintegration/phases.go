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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// webhookPath derives the secret webhook path from the webhook token.
func (r *Reconciler) webhookPath(ctx context.Context, obj *v1alpha1.NotionIntegration, _ *runner.Run) runner.Outcome {
	path, out := grant.SecretPath(ctx, r.Client, obj, obj.Spec.WebhookSecretRef.Name, papers.WebhookTokenKey, 16, papers.WebhookPath)
	if path != "" {
		obj.Status.WebhookPath = path
	}
	return out
}

// eventsPath derives the public integration's connection-webhook path
// from the OAuth client's id and secret (the Grant phase has just used
// them): on the first run, on a spec change and when asked, so a rotated
// client secret shows after a requested-at.
func (r *Reconciler) eventsPath(ctx context.Context, obj *v1alpha1.NotionIntegration, run *runner.Run) runner.Outcome {
	if obj.Status.EventsPath != "" && obj.Status.ObservedGeneration == obj.Generation && !run.Requested {
		return runner.Continue()
	}
	var sec corev1.Secret
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.OAuth.ClientSecretRef.Name}
	if err := r.Get(ctx, key, &sec); err != nil {
		return runner.Transient(v1alpha1.SecretReadFailedReason, fmt.Errorf("read OAuth client Secret %s: %w", key, err))
	}
	id, secret := string(sec.Data[oauth.KeyClientID]), string(sec.Data[oauth.KeyClientSecret])
	if id != "" && secret != "" {
		obj.Status.EventsPath = papers.EventsPath(id, secret)
	}
	return runner.Continue()
}

// granted records the grant's refreshes and identity (the Grant phase
// records its expiry).
func (r *Reconciler) granted(obj *v1alpha1.NotionIntegration, tok oauth.Token, run *runner.Run) {
	st := &obj.Status
	if tok.Refreshed {
		st.TokenRefreshes++
	}
	st.WorkspaceID = tok.Extra["workspace_id"]
	st.WorkspaceName = tok.Extra["workspace_name"]
	st.BotID = tok.Extra["bot_id"]
	st.DuplicatedTemplateID = tok.Extra["duplicated_template_id"]
}

// backfillDue: never scanned, or backfillInterval has passed since the
// last scan (lastBackfill).
func backfillDue(last *metav1.Time, obj *v1alpha1.NotionIntegration, run *runner.Run) bool {
	return last == nil || !run.Now.Before(last.Add(obj.Spec.BackfillInterval.Duration))
}

// lastBackfill is when the database was last scanned: the copy's record,
// or this manager's own later scan while the cache does not show it yet.
// A reconcile queued by the scan's own writes (the token Secrets, the
// status) often reads a copy from before it, and would scan the whole
// database again (case 3 of docs/development.md's idempotent writes).
func (r *Reconciler) lastBackfill(obj *v1alpha1.NotionIntegration) *metav1.Time {
	last := obj.Status.LastBackfillAt
	if t, ahead := r.backfilled.Ahead(obj.UID, func(t metav1.Time) bool { return last != nil && !last.Before(&t) }); ahead {
		return &t
	}
	return last
}

// database finds, creates or repairs the database (§3.2) on the first run,
// on a spec change, when asked, and on the backfill timer.
func (r *Reconciler) database(ctx context.Context, obj *v1alpha1.NotionIntegration, run *runner.Run) runner.Outcome {
	if obj.Status.DatabaseID != "" && obj.Status.ObservedGeneration == obj.Generation && !run.Requested && !backfillDue(r.lastBackfill(obj), obj, run) {
		return runner.Continue()
	}
	spec := obj.Spec.Database
	name := spec.Name
	if name == "" {
		name = "ArXiv Papers"
	}
	// The id found before is kept through a rename in Notion. A restore
	// brings the integration back without it: the database is then found
	// by its name, or in the duplicated template (FindOrCreateDatabase).
	db, err := r.Notion.FindOrCreateDatabase(ctx, grant.Of(run).Token, notion.DatabaseSpec{Name: name, PinnedID: spec.ID,
		KnownID: obj.Status.DatabaseID, TemplateID: obj.Status.DuplicatedTemplateID, ParentPage: spec.ParentPageID,
		LinkProperty: papers.LinkProperty(obj)})
	if err != nil {
		status.Set(obj, v1alpha1.DatabaseReadyCondition, metav1.ConditionFalse, v1alpha1.UpstreamRejectedReason, err.Error())
		switch {
		case notion.IsUnauthorized(err):
			status.Set(obj, v1alpha1.AuthenticatedCondition, metav1.ConditionFalse, v1alpha1.ReauthRequiredReason, err.Error())
			return runner.Stall(v1alpha1.ReauthRequiredReason, err)
		case outbound.IsPermanent(err):
			r.event(obj, corev1.EventTypeWarning, "DatabaseFailed", err.Error())
			return runner.Stall(v1alpha1.UpstreamRejectedReason, err)
		}
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	if db.Created {
		r.event(obj, corev1.EventTypeNormal, "DatabaseCreated", "created database "+name+" ("+db.ID+")")
	}
	if len(db.Added) > 0 {
		r.event(obj, corev1.EventTypeNormal, "DatabaseRepaired", fmt.Sprintf("added properties %v", db.Added))
	}
	obj.Status.DatabaseID, obj.Status.DatabaseURL = db.ID, db.URL
	status.Set(obj, v1alpha1.DatabaseReadyCondition, metav1.ConditionTrue, v1alpha1.SucceededReason, "database has every property of the seed's schema")
	return runner.Continue()
}

// backfill creates PaperSyncs for pages with a Link but no metadata (§3.3
// healed): on the backfill timer, and when a person asks.
func (r *Reconciler) backfill(ctx context.Context, obj *v1alpha1.NotionIntegration, run *runner.Run) runner.Outcome {
	last := r.lastBackfill(obj)
	if (backfillDue(last, obj, run) || run.Requested) && r.Backfill != nil {
		n, err := r.Backfill(ctx, obj, grant.Of(run).Token)
		if err != nil {
			return runner.Transient(v1alpha1.UpstreamUnavailableReason, fmt.Errorf("backfill: %w", err))
		}
		t := metav1.NewTime(run.Now).Rfc3339Copy() // as the API server stores it
		obj.Status.LastBackfillAt, last = &t, &t
		r.backfilled.Remember(obj.UID, t)
		if n > 0 {
			r.event(obj, corev1.EventTypeNormal, "Backfill", fmt.Sprintf("queued %d pages whose metadata was missing", n))
		}
	}
	if last != nil {
		run.RequeueAt(last.Add(obj.Spec.BackfillInterval.Duration))
	}
	return runner.Continue()
}

func readyMessage(obj *v1alpha1.NotionIntegration) string {
	return fmt.Sprintf("workspace %q connected; database %s", obj.Status.WorkspaceName, obj.Status.DatabaseID)
}

func (r *Reconciler) event(obj *v1alpha1.NotionIntegration, typ, reason, note string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, typ, reason, "Reconcile", "%s", note)
	}
}
