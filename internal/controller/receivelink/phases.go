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
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// blob checks the file exists before the link is minted or shown Ready.
func (r *Reconciler) blob(ctx context.Context, l *v1alpha1.ReceiveLink, _ *runner.Run) runner.Outcome {
	o, err := r.object(ctx, l)
	if err != nil {
		return r.storageFailed(err, "read the storage credentials")
	}
	if _, err := r.Blobs.Head(ctx, o); err != nil {
		return r.storageFailed(err, "look up the blob")
	}
	return runner.Continue()
}

// storageFailed turns an S3 or credentials error into an outcome.
func (r *Reconciler) storageFailed(err error, what string) runner.Outcome {
	err = fmt.Errorf("%s: %w", what, err)
	switch {
	case apierrors.IsNotFound(err), errors.Is(err, blob.ErrCredentialsIncomplete):
		return runner.Stall(v1alpha1.SecretNotFoundReason, err).RecheckAfter(KeysRecheck)
	case errors.Is(err, blob.ErrNotFound):
		return runner.Stall(v1alpha1.BlobNotFoundReason, err).RecheckAfter(BlobRecheck)
	case errors.Is(err, blob.ErrForbidden):
		return runner.Stall(v1alpha1.StorageRefusedReason, err).RecheckAfter(BlobRecheck)
	case outbound.IsTransient(err):
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	return runner.Stall(v1alpha1.UpstreamRejectedReason, err).RecheckAfter(BlobRecheck)
}

// tokenObjects lists the short-token objects of a link.
func (r *Reconciler) tokenObjects(ctx context.Context, l *v1alpha1.ReceiveLink) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := r.List(ctx, &list, client.InNamespace(r.Namespace), client.MatchingLabels{linktoken.TokenLabel: "true", linktoken.LinkUIDLabel: string(l.UID)}); err != nil {
		return nil, fmt.Errorf("list the link's short-token objects: %w", err)
	}
	return list.Items, nil
}

func (r *Reconciler) deleteTokenObjects(ctx context.Context, l *v1alpha1.ReceiveLink) error {
	objs, err := r.tokenObjects(ctx, l)
	if err != nil {
		return err
	}
	for i := range objs {
		if err := client.IgnoreNotFound(r.Delete(ctx, &objs[i], client.Preconditions{UID: &objs[i].UID})); err != nil {
			return fmt.Errorf("delete short-token object %s: %w", objs[i].Name, err)
		}
	}
	return nil
}

// active: the link is minted (every phase continued); the runner marks it
// Ready with this message until its expiry.
func active(l *v1alpha1.ReceiveLink) string {
	l.Status.Phase = v1alpha1.LinkActive
	return fmt.Sprintf("the short link resolves until %s (share URL in Secret %s)",
		linkExpiry(l).UTC().Format(time.RFC3339), l.Status.ShareSecretName)
}

// release runs on delete: a live link's blob goes with it unless the
// deletion policy is Retain (a link that was never live keeps it, unless
// spec.deleteBlobIfNeverLive); its short-token objects and its share Secret
// go in every case. The share Secret is deleted here rather than left to
// the garbage collector: a deleted link is revoked, and a link created
// again under its name (a GitOps delete and re-apply) must find no share
// Secret to take over, or it would bring the revoked short link back.
//
// A reconcile may come from a cache that has not yet seen the finalizer go
// (the event of the share Secret deleted here brings one at once): it must
// not delete the blob a second time, nor touch a link created again under
// the same name since. The API server says whether the link is still
// there to release.
func (r *Reconciler) release(ctx context.Context, l *v1alpha1.ReceiveLink, _ *runner.Run) runner.Outcome {
	var live v1alpha1.ReceiveLink
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(l), &live)
	switch {
	case apierrors.IsNotFound(err), err == nil && (live.UID != l.UID || !controllerutil.ContainsFinalizer(&live, v1alpha1.Finalizer)):
		return runner.Done() // released already
	case err != nil:
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, fmt.Errorf("read the link: %w", err))
	}
	if l.Status.BlobDeletedAt == nil && l.Spec.DeletionPolicy != v1alpha1.DeletionPolicyRetain && mayDeleteBlob(l) {
		o, err := r.object(ctx, l)
		if err != nil {
			return r.storageFailed(err, "read the storage credentials to delete the blob")
		}
		wait, err := r.deleteBlob(ctx, o)
		if err != nil {
			return r.storageFailed(err, "delete the blob")
		}
		if wait > 0 {
			return runner.Wait(wait)
		}
	}
	if err := r.deleteTokenObjects(ctx, l); err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	if err := r.deleteShare(ctx, l); err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	return runner.Continue()
}

// deleteShare deletes the link's share Secret: the one it controls, or one
// a restore brought back for it that it never claimed (oauth.ClaimSecret
// takes it over first). Someone else's Secret of that name stays.
func (r *Reconciler) deleteShare(ctx context.Context, l *v1alpha1.ReceiveLink) error {
	share := &corev1.Secret{}
	err := r.Get(ctx, types.NamespacedName{Namespace: l.Namespace, Name: shareSecretName(l)}, share)
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	if claim, err := oauth.ClaimSecret(ctx, r.Client, l, share); err != nil || claim == oauth.Foreign {
		return client.IgnoreNotFound(err)
	}
	if err := r.Delete(ctx, share, client.Preconditions{UID: &share.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete the share Secret: %w", err)
	}
	return nil
}
