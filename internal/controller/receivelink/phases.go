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
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/blob"
	"github.com/switchboard-dev/switchboard/internal/linktoken"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/runner"
	"github.com/switchboard-dev/switchboard/internal/status"
)

// expiry sets status.expiresAt and refuses an expiry past seed 003's 14
// days, which admission cannot check (CEL has no clock).
func (r *Reconciler) expiry(_ context.Context, l *v1alpha1.ReceiveLink, _ *runner.Run) runner.Outcome {
	exp := expiresAt(l)
	if exp.Sub(l.CreationTimestamp.Time) > MaxLifetime {
		return runner.Stall(v1alpha1.ExpiryTooFarReason, fmt.Errorf("spec.expiresAt %s is more than 14 days after the link was created (%s); set an earlier one",
			exp.UTC().Format(time.RFC3339), l.CreationTimestamp.UTC().Format(time.RFC3339)))
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
	exp := expiresAt(l)
	if run.Now.Before(exp) {
		run.RequeueAt(exp)
		return runner.Continue()
	}
	if !mayDeleteBlob(l) {
		return r.expireNeverLive(ctx, l, run, exp)
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
	if err := r.tombstone(ctx, l); err != nil {
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
	return r.retire(ctx, l, run, exp)
}

// retire deletes an Expired link once its retention is over. Retention
// counts from the expiry, or from the creation when the expiry was
// already past then: whoever made that typo gets the whole retention to
// read why the link expired.
func (r *Reconciler) retire(ctx context.Context, l *v1alpha1.ReceiveLink, run *runner.Run, exp time.Time) runner.Outcome {
	gone := latest(exp, l.CreationTimestamp.Time).Add(l.Spec.Retention.Duration)
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
func (r *Reconciler) expireNeverLive(ctx context.Context, l *v1alpha1.ReceiveLink, run *runner.Run, exp time.Time) runner.Outcome {
	if err := r.deleteTokenObjects(ctx, l); err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	if err := client.IgnoreNotFound(r.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: shareSecretName(l)}})); err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, fmt.Errorf("delete the share Secret: %w", err))
	}
	why := fmt.Sprintf("it expired at %s before it was ever live", exp.UTC().Format(time.RFC3339))
	switch {
	case !exp.After(l.CreationTimestamp.Time):
		why = fmt.Sprintf("spec.expiresAt %s was already past when the link was created (%s)",
			exp.UTC().Format(time.RFC3339), l.CreationTimestamp.UTC().Format(time.RFC3339))
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
	return r.retire(ctx, l, run, exp)
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

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

// mint gives the link its short and long tokens, once: the share Secret
// holds them, the short-token object maps the short token to the long one.
func (r *Reconciler) mint(ctx context.Context, l *v1alpha1.ReceiveLink, _ *runner.Run) runner.Outcome {
	share := &corev1.Secret{}
	err := r.Get(ctx, types.NamespacedName{Namespace: l.Namespace, Name: shareSecretName(l)}, share)
	switch {
	case err == nil && metav1.IsControlledBy(share, l) && len(share.Data[linktoken.ShareShortToken]) > 0:
		if err := r.ensureTokenObject(ctx, l, share); err == nil {
			l.Status.ShareSecretName, l.Status.KeyID = share.Name, string(share.Data[linktoken.ShareKeyID])
			return runner.Continue()
		} else if !errors.Is(err, errTaken) {
			return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
		}
		// The short token now belongs to another link: mint anew.
	case err == nil:
		return runner.Stall(v1alpha1.InvalidSpecReason, fmt.Errorf("a Secret named %s exists and is not this link's share Secret; rename or delete it", share.Name))
	case !apierrors.IsNotFound(err):
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, fmt.Errorf("read the share Secret: %w", err))
	}

	// The keyring read puts the keys in the link namespace (a mirror of a
	// Secret of the link's own) before anything is sealed with them, so
	// the webhook's cache holds a new key before any short-token object
	// sealed with it: both are in the same namespace, seen in order.
	kr, err := r.keyring(ctx, l)
	if err != nil {
		if errors.Is(err, linktoken.ErrKeys) || apierrors.IsNotFound(err) {
			return runner.Stall(v1alpha1.KeysInvalidReason, err).RecheckAfter(KeysRecheck)
		}
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	o, err := r.object(ctx, l)
	if err != nil {
		return r.storageFailed(err, "read the storage credentials")
	}
	// A crash between the two creates leaves a short-token object with no
	// share Secret: it names nothing anyone holds, so it goes first.
	if err := r.deleteTokenObjects(ctx, l); err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	claims := linktoken.Claims{Namespace: l.Namespace, Name: l.Name, UID: l.UID, Bucket: l.Spec.Blob.Bucket, Key: l.Spec.Blob.Key, ExpiresAt: expiresAt(l).UTC()}
	long, keyID, err := linktoken.Seal(kr, claims)
	if err != nil {
		return runner.Stall(v1alpha1.KeysInvalidReason, err).RecheckAfter(KeysRecheck)
	}
	for range MintTries {
		short := r.NewShort()
		data := map[string][]byte{linktoken.ShareShortToken: []byte(short), linktoken.ShareLongToken: []byte(long),
			linktoken.ShareKeyID: []byte(keyID), linktoken.ShareURL: []byte(r.PublicURL + linktoken.ResolvePath(short)),
			linktoken.ShareObject: []byte(r.Namespace + "/" + linktoken.ObjectName(short))}
		err := r.createTokenObject(ctx, l, short, long, keyID, o.Credentials)
		if errors.Is(err, errTaken) {
			continue // seed 003: SET NX refused, another token
		}
		if err != nil {
			return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
		}
		if err := r.writeShare(ctx, l, data); err != nil {
			return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
		}
		l.Status.ShareSecretName, l.Status.KeyID = shareSecretName(l), keyID
		return runner.Continue()
	}
	return runner.Stall(v1alpha1.TokenCollisionReason, fmt.Errorf("%d short tokens in a row were already taken; the link is not minted (request a reconcile to try again)", MintTries))
}

// errTaken: the short token's object belongs to another link.
var errTaken = errors.New("short token taken")

// shareSecretName is the Secret owned by the link that holds its tokens.
func shareSecretName(l *v1alpha1.ReceiveLink) string { return l.Name + "-share" }

// ensureTokenObject makes sure the short token in share maps to this link.
func (r *Reconciler) ensureTokenObject(ctx context.Context, l *v1alpha1.ReceiveLink, share *corev1.Secret) error {
	short := string(share.Data[linktoken.ShareShortToken])
	var obj corev1.Secret
	err := r.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: linktoken.ObjectName(short)}, &obj)
	switch {
	case err == nil && obj.Labels[linktoken.LinkUIDLabel] == string(l.UID):
		return r.publish(ctx, l, &obj)
	case err == nil:
		return errTaken
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("read the short-token object: %w", err)
	}
	if _, err := r.keyring(ctx, l); err != nil {
		return err
	}
	o, err := r.object(ctx, l)
	if err != nil {
		return err
	}
	return r.createTokenObject(ctx, l, short, string(share.Data[linktoken.ShareLongToken]), string(share.Data[linktoken.ShareKeyID]), o.Credentials)
}

// createTokenObject is the Kubernetes form of seed 003's `SET NX`:
// AlreadyExists means the short token is taken (errTaken). Beside the
// long token it carries a copy of the link's storage credentials, for the
// webhook to presign with (it reads no Secret in the link's namespace),
// and the name of the key Secret whose mirror opens the long token.
func (r *Reconciler) createTokenObject(ctx context.Context, l *v1alpha1.ReceiveLink, short, long, keyID string, creds blob.Credentials) error {
	policy := l.Spec.DeletionPolicy
	if policy == "" {
		policy = v1alpha1.DeletionPolicyDelete
	}
	obj := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: linktoken.ObjectName(short),
			Labels: map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue, linktoken.TokenLabel: "true", linktoken.LinkUIDLabel: string(l.UID)}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			linktoken.DataLongToken: []byte(long), linktoken.DataKeyID: []byte(keyID),
			linktoken.DataExpiresAt: []byte(expiresAt(l).UTC().Format(time.RFC3339)),
			linktoken.DataNamespace: []byte(l.Namespace), linktoken.DataName: []byte(l.Name),
			linktoken.DataBucket: []byte(l.Spec.Blob.Bucket), linktoken.DataKey: []byte(l.Spec.Blob.Key),
			linktoken.DataRegion: []byte(l.Spec.Blob.Region), linktoken.DataCredentials: []byte(l.Spec.Blob.CredentialsSecretRef.Name),
			linktoken.DataPolicy: []byte(policy), linktoken.DataKeySecret: []byte(keySecretName(l)),
		},
	}
	maps.Copy(obj.Data, credsData(&creds))
	if err := r.Create(ctx, obj); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return errTaken
		}
		return fmt.Errorf("create the short-token object: %w", err)
	}
	return nil
}

// writeShare creates the share Secret (or overwrites the one a re-mint
// replaces).
func (r *Reconciler) writeShare(ctx context.Context, l *v1alpha1.ReceiveLink, data map[string][]byte) error {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: shareSecretName(l)}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, sec, func() error {
		sec.Labels = map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue}
		sec.Type = corev1.SecretTypeOpaque
		sec.Data = maps.Clone(data)
		return controllerutil.SetControllerReference(l, sec, r.Scheme())
	})
	if err != nil {
		return fmt.Errorf("write the share Secret: %w", err)
	}
	return nil
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

// tombstone strips the long token and the copy of the storage credentials
// from the link's short-token objects and marks the blob deleted: the
// short link then answers 410, the sweep knows there is no blob left to
// delete, and no credential of an expired link stays in the link
// namespace.
func (r *Reconciler) tombstone(ctx context.Context, l *v1alpha1.ReceiveLink) error {
	objs, err := r.tokenObjects(ctx, l)
	if err != nil {
		return err
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

// keyring reads the link's encryption keys. A key Secret the link names
// is mirrored into the link namespace first (mirrorKeys). The manager's
// default key Secret is there already; it is created, with one fresh key,
// the first time a link needs it, and carries the managed-by label so that
// the webhook's cache holds it.
func (r *Reconciler) keyring(ctx context.Context, l *v1alpha1.ReceiveLink) (linktoken.Keyring, error) {
	if name := keySecretName(l); name != "" {
		kr, _, _, err := r.mirrorKeys(ctx, types.NamespacedName{Namespace: l.Namespace, Name: name})
		return kr, err
	}
	key := r.DefaultKeys
	var sec corev1.Secret
	err := r.APIReader.Get(ctx, key, &sec)
	if apierrors.IsNotFound(err) && key == r.DefaultKeys {
		sec = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue}},
			Type: corev1.SecretTypeOpaque, Data: linktoken.NewKeyData("k" + r.Clock.Now().UTC().Format("20060102"))}
		if err = r.Create(ctx, &sec); apierrors.IsAlreadyExists(err) {
			err = r.APIReader.Get(ctx, key, &sec)
		} else if err == nil {
			log.FromContext(ctx).Info("created the default link key Secret", "secret", key.String())
		}
	}
	if err != nil {
		return linktoken.Keyring{}, fmt.Errorf("read the encryption key Secret %s: %w", key, err)
	}
	if sec.Labels[v1alpha1.ManagedByLabel] != v1alpha1.ManagedByValue {
		// Created by a person: label it, or the webhook never sees it.
		patch := client.MergeFrom(sec.DeepCopy())
		if sec.Labels == nil {
			sec.Labels = map[string]string{}
		}
		sec.Labels[v1alpha1.ManagedByLabel] = v1alpha1.ManagedByValue
		if err := r.Patch(ctx, &sec, patch); err != nil {
			return linktoken.Keyring{}, fmt.Errorf("label the encryption key Secret %s: %w", key, err)
		}
	}
	return linktoken.KeyringFrom(&sec)
}

// keySecretName is the key Secret the link names, or "" for the default.
func keySecretName(l *v1alpha1.ReceiveLink) string {
	if ref := l.Spec.EncryptionKeySecretRef; ref != nil {
		return ref.Name
	}
	return ""
}

// active: the link is minted (every phase continued); the runner marks it
// Ready with this message until its expiry.
func active(l *v1alpha1.ReceiveLink) string {
	l.Status.Phase = v1alpha1.LinkActive
	return fmt.Sprintf("the short link resolves until %s (share URL in Secret %s)",
		expiresAt(l).UTC().Format(time.RFC3339), l.Status.ShareSecretName)
}

// release runs on delete: a live link's blob goes with it unless the
// deletion policy is Retain (a link that was never live keeps it, unless
// spec.deleteBlobIfNeverLive); its short-token objects go in every case (the
// share Secret is the garbage collector's: the link owns it).
func (r *Reconciler) release(ctx context.Context, l *v1alpha1.ReceiveLink, _ *runner.Run) runner.Outcome {
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
	return runner.Continue()
}
