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
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// mint gives the link its short and long tokens, once: the share Secret
// holds them, the short-token object maps the short token to the long one.
func (r *Reconciler) mint(ctx context.Context, l *v1alpha1.ReceiveLink, run *runner.Run) runner.Outcome {
	if out, done := r.reuseShare(ctx, l, shareKey.From(run)); done {
		return out
	}

	// The keyring read puts the keys in the link namespace (a mirror of a
	// Secret of the link's own) before anything is sealed with them, so
	// the webhook's cache holds a new key before any short-token object
	// sealed with it: both are in the same namespace, seen in order.
	kr, err := r.keyring(ctx, l)
	if err != nil {
		return keysFailed(err)
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
	claims := linktoken.Claims{Namespace: l.Namespace, Name: l.Name, UID: l.UID, Bucket: l.Spec.Blob.Bucket, Key: l.Spec.Blob.Key, ExpiresAt: linkExpiry(l).UTC()}
	long, keyID, err := linktoken.Seal(kr, claims)
	if err != nil {
		return runner.Stall(v1alpha1.KeysInvalidReason, err).RecheckAfter(KeysRecheck)
	}
	return r.mintShort(ctx, l, long, keyID, originOf(l, run), o.Credentials)
}

// reuseShare keeps the tokens of share, the share Secret adopt found (nil:
// none), and says whether that settled the mint (done) and how; not done:
// there are none to keep, mint anew.
func (r *Reconciler) reuseShare(ctx context.Context, l *v1alpha1.ReceiveLink, share *corev1.Secret) (out runner.Outcome, done bool) {
	switch {
	case share == nil:
	case !metav1.IsControlledBy(share, l):
		// adopt claims the link's share Secret or stalls; never here.
		return runner.Stall(v1alpha1.InvalidSpecReason, fmt.Errorf("a Secret named %s exists and is not this link's share Secret; rename or delete it", share.Name)), true
	case len(share.Data[linktoken.ShareShortToken]) > 0:
		if err := r.ensureTokenObject(ctx, l, share); err == nil {
			l.Status.ShareSecretName, l.Status.KeyID = share.Name, string(share.Data[linktoken.ShareKeyID])
			return runner.Continue(), true
		} else if !errors.Is(err, errTaken) {
			return runner.Transient(v1alpha1.UpstreamUnavailableReason, err), true
		}
		// The short token now belongs to another link: mint anew.
	}
	return runner.Outcome{}, false
}

// mintShort draws short tokens until one is free, maps it to the long
// token (sealed with keyID), and writes both to the share Secret, with the
// link's origin (kept across a restore).
func (r *Reconciler) mintShort(ctx context.Context, l *v1alpha1.ReceiveLink, long, keyID string, origin time.Time, creds blob.Credentials) runner.Outcome {
	for range MintTries {
		short := r.NewShort()
		data := map[string][]byte{linktoken.ShareShortToken: []byte(short), linktoken.ShareLongToken: []byte(long),
			linktoken.ShareKeyID: []byte(keyID), linktoken.ShareURL: []byte(r.PublicURL + linktoken.ResolvePath(short)),
			linktoken.ShareObject:    []byte(r.Namespace + "/" + linktoken.ObjectName(short)),
			linktoken.ShareCreatedAt: []byte(origin.UTC().Format(time.RFC3339))}
		err := r.createTokenObject(ctx, l, short, long, keyID, creds)
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
		recordIssued(ctx, l)
		return runner.Continue()
	}
	return runner.Stall(v1alpha1.TokenCollisionReason, fmt.Errorf("%d short tokens in a row were already taken; the link is not minted (request a reconcile to try again)", MintTries))
}

// errTaken: the short token's object belongs to another link.
var errTaken = errors.New("short token taken")

// shareSecretName is the Secret owned by the link that holds its tokens.
func shareSecretName(l *v1alpha1.ReceiveLink) string { return l.Name + "-share" }

// ensureTokenObject makes sure the short token in share maps to this link:
// its object, given back to the link if a restore left it naming the
// link's previous UID (rebindObject), or created again if it is gone.
func (r *Reconciler) ensureTokenObject(ctx context.Context, l *v1alpha1.ReceiveLink, share *corev1.Secret) error {
	short := string(share.Data[linktoken.ShareShortToken])
	obj, err := r.rebindObject(ctx, l, share, linkExpiry(l))
	if err != nil {
		return err
	}
	if obj != nil {
		return r.publish(ctx, l, obj)
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
	policy := policyOf(l)
	obj := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: linktoken.ObjectName(short),
			Labels: map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue, linktoken.TokenLabel: "true", linktoken.LinkUIDLabel: string(l.UID)}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			linktoken.DataLongToken: []byte(long), linktoken.DataKeyID: []byte(keyID),
			linktoken.DataExpiresAt: []byte(linkExpiry(l).UTC().Format(time.RFC3339)),
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
