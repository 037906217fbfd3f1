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

package receivelink

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// expiry sets status.expiresAt and refuses an expiry past seed 003's 14
// days, which admission cannot check (CEL has no clock).
// A restored link counts from its original creation (origin).
func (r *Reconciler) expiry(_ context.Context, l *v1alpha1.ReceiveLink, run *runner.Run) runner.Outcome {
	start := originOf(l, run)
	exp := expiresAt(l, start)
	if exp.Sub(start) > MaxLifetime {
		return runner.Stall(v1alpha1.ExpiryTooFarReason, fmt.Errorf("spec.expiresAt %s is more than 14 days after the link was created (%s); set an earlier one",
			exp.UTC().Format(time.RFC3339), start.UTC().Format(time.RFC3339)))
	}
	if l.Status.ExpiresAt == nil || !l.Status.ExpiresAt.Time.Equal(exp) {
		t := metav1.NewTime(exp)
		l.Status.ExpiresAt = &t
	}
	return runner.Continue()
}

// expire runs from the expiry instant on: the blob, the share Secret and
// the long token go (the short-token object stays as a tombstone so the
// link answers 410, not 404, while the link object is kept), then the link
// itself after spec.retention.
func (r *Reconciler) expire(ctx context.Context, l *v1alpha1.ReceiveLink, run *runner.Run) runner.Outcome {
	exp := linkExpiry(l)
	if run.Now.Before(exp) {
		run.RequeueAt(exp)
		return runner.Continue()
	}
	// What status held before this expiry, for recordExpired.
	var was *v1alpha1.ReceiveLinkStatus
	if l.Status.Phase != v1alpha1.LinkExpired {
		was = l.Status.DeepCopy()
	}
	if !mayDeleteBlob(l) {
		return r.expireNeverLive(ctx, l, run, exp, was)
	}
	if l.Status.BlobDeletedAt == nil {
		o, err := r.object(ctx, l)
		if err != nil {
			return r.storageFailed(err, "read the storage credentials to delete the expired blob")
		}
		wait, err := r.deleteBlob(ctx, o)
		if err != nil {
			return r.storageFailed(err, "delete the expired blob")
		}
		if wait > 0 {
			return runner.Wait(wait)
		}
		now := metav1.NewTime(run.Now)
		l.Status.BlobDeletedAt = &now
	}
	if err := r.tombstone(ctx, l, boundKey.From(run)); err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	if err := client.IgnoreNotFound(r.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: shareSecretName(l)}})); err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, fmt.Errorf("delete the share Secret: %w", err))
	}
	if l.Status.Phase != v1alpha1.LinkExpired {
		l.Status.Phase = v1alpha1.LinkExpired
		l.Status.ShareSecretName = ""
		r.Recorder.Eventf(l, nil, corev1.EventTypeNormal, v1alpha1.ExpiredReason, "Expire",
			"expired at %s: the blob s3://%s/%s and the link's tokens are deleted", exp.UTC().Format(time.RFC3339), l.Spec.Blob.Bucket, l.Spec.Blob.Key)
	}
	status.Set(l, v1alpha1.ReadyCondition, metav1.ConditionFalse, v1alpha1.ExpiredReason,
		fmt.Sprintf("the link expired at %s; its blob and tokens are deleted", exp.UTC().Format(time.RFC3339)))
	status.Remove(l, v1alpha1.ReconcilingCondition)
	status.Remove(l, v1alpha1.StalledCondition)
	l.Status.ObservedGeneration = l.Generation
	if was != nil {
		if out := recordExpired(ctx, l, run, was); !out.IsContinue() {
			return out
		}
	}
	return r.retire(ctx, l, run, exp)
}

// retire deletes an Expired link once its retention is over. Retention
// counts from the expiry, or from the creation (origin) when the expiry
// was already past then: whoever made that typo gets the whole retention
// to read why the link expired.
func (r *Reconciler) retire(ctx context.Context, l *v1alpha1.ReceiveLink, run *runner.Run, exp time.Time) runner.Outcome {
	gone := latest(exp, originOf(l, run)).Add(l.Spec.Retention.Duration)
	if run.Now.Before(gone) {
		return runner.Wait(gone.Sub(run.Now))
	}
	if err := client.IgnoreNotFound(r.Delete(ctx, l, client.Preconditions{UID: &l.UID})); err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, fmt.Errorf("delete the link after its retention: %w", err))
	}
	return runner.Done()
}

// wasLive reports whether the link ever served its file: it became
// Active (minted and Ready) before it expired. A link whose blob was
// deleted at expiry was live, or was allowed to act as if.
func wasLive(l *v1alpha1.ReceiveLink) bool {
	return l.Status.Phase == v1alpha1.LinkActive || l.Status.BlobDeletedAt != nil
}

// mayDeleteBlob reports whether the link may delete its blob (at expiry,
// or on delete under deletionPolicy Delete): a link that was never live
// deletes nothing unless spec.deleteBlobIfNeverLive says so (issue 18: a
// typo in spec.expiresAt must not destroy a file nobody could download).
func mayDeleteBlob(l *v1alpha1.ReceiveLink) bool {
	return wasLive(l) || l.Spec.DeleteBlobIfNeverLive
}

// expireNeverLive expires a link that was never live without touching its
// blob: status says why (Ready=False, NeverLive), one Warning Event says
// so, and the link object goes after its retention as any Expired link
// does. It holds no tokens: it was never minted, or minted without ever
// being Ready; any short-token object goes with it.
func (r *Reconciler) expireNeverLive(ctx context.Context, l *v1alpha1.ReceiveLink, run *runner.Run, exp time.Time, was *v1alpha1.ReceiveLinkStatus) runner.Outcome {
	if err := r.deleteTokenObjects(ctx, l); err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	if err := client.IgnoreNotFound(r.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: shareSecretName(l)}})); err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, fmt.Errorf("delete the share Secret: %w", err))
	}
	why := fmt.Sprintf("it expired at %s before it was ever live", exp.UTC().Format(time.RFC3339))
	switch start := originOf(l, run); {
	case !exp.After(start):
		why = fmt.Sprintf("spec.expiresAt %s was already past when the link was created (%s)",
			exp.UTC().Format(time.RFC3339), start.UTC().Format(time.RFC3339))
	case status.IsTrue(l, v1alpha1.StalledCondition):
		why += fmt.Sprintf(" (it was Stalled: %s)", status.Get(l, v1alpha1.StalledCondition).Reason)
	}
	msg := fmt.Sprintf("%s; nothing was deleted: the blob s3://%s/%s is kept (set spec.deleteBlobIfNeverLive to delete it)",
		why, l.Spec.Blob.Bucket, l.Spec.Blob.Key)
	if l.Status.Phase != v1alpha1.LinkExpired {
		l.Status.Phase = v1alpha1.LinkExpired
		l.Status.ShareSecretName = ""
		r.Recorder.Eventf(l, nil, corev1.EventTypeWarning, v1alpha1.NeverLiveReason, "Expire", "%s", msg)
	}
	if c := status.Get(l, v1alpha1.ReadyCondition); c == nil || c.Reason != v1alpha1.NeverLiveReason {
		status.Set(l, v1alpha1.ReadyCondition, metav1.ConditionFalse, v1alpha1.NeverLiveReason, msg)
	}
	status.Remove(l, v1alpha1.ReconcilingCondition)
	status.Remove(l, v1alpha1.StalledCondition)
	l.Status.ObservedGeneration = l.Generation
	if was != nil {
		if out := recordExpired(ctx, l, run, was); !out.IsContinue() {
			return out
		}
	}
	return r.retire(ctx, l, run, exp)
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// tombstone strips the long token and the copy of the storage credentials
// from the link's short-token objects and marks the blob deleted: the
// short link then answers 410, the sweep knows there is no blob left to
// delete, and no credential of an expired link stays in the link
// namespace.
//
// bound is the object adopt gave back to the link in this reconcile (nil:
// none), which the cache may not list under the link's UID yet.
func (r *Reconciler) tombstone(ctx context.Context, l *v1alpha1.ReceiveLink, bound *corev1.Secret) error {
	objs, err := r.tokenObjects(ctx, l)
	if err != nil {
		return err
	}
	if bound != nil {
		objs = slices.DeleteFunc(objs, func(o corev1.Secret) bool { return o.Name == bound.Name })
		objs = append(objs, *bound)
	}
	for i := range objs {
		obj := &objs[i]
		if !holdsSecrets(obj) && string(obj.Data[linktoken.DataBlobDeleted]) == "true" {
			continue
		}
		for _, k := range tombstoned {
			delete(obj.Data, k)
		}
		obj.Data[linktoken.DataBlobDeleted] = []byte("true")
		if err := r.Update(ctx, obj, &client.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("strip the long token from %s: %w", obj.Name, err)
		}
	}
	return nil
}

// tombstoned are the data keys a tombstone loses: the long token and the
// credentials.
var tombstoned = []string{linktoken.DataLongToken, linktoken.DataKeyID, linktoken.DataAccessKeyID, linktoken.DataSecretAccessKey}

// holdsSecrets says whether a short-token object still holds a long token
// or credentials.
func holdsSecrets(obj *corev1.Secret) bool {
	for _, k := range tombstoned {
		if _, ok := obj.Data[k]; ok {
			return true
		}
	}
	return false
}
