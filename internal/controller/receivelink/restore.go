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
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
)

// What a restore brings back of a link (issue 35 §3). Velero, and an
// export and re-create, bring the ReceiveLink back with a new UID, a new
// creation time and no status, and its share Secret without an owner; the
// old cluster's finalizer never ran, so a short-token object that came
// back too (or never went) still names the old UID. Receivers hold the
// short token, and the link must go on resolving it until its original
// expiry. The share Secret carries what that takes: the short token, the
// long token sealed with the operator's key (the proof that the Secret is
// this link's and not one a person planted) and the original creation
// time (linktoken.ShareCreatedAt).

var (
	// originKey is when the link began (origin), for the phases after
	// adopt.
	originKey = runner.NewKey[time.Time]()
	// shareKey is the link's share Secret as adopt left it (nil: none).
	shareKey = runner.NewKey[*corev1.Secret]()
	// boundKey is the short-token object adopt gave back to the link, as
	// written (the cache may not show the write yet).
	boundKey = runner.NewKey[*corev1.Secret]()
)

// ShareReplacedReason is the Warning Event of a link whose restored share
// Secret did not prove to be its own: a new share link is minted.
const ShareReplacedReason = "ShareSecretReplaced"

// errNotThisLink: a share Secret's long token opens but seals another
// link (or blob).
var errNotThisLink = errors.New("the long token seals another link")

// adopt runs first. It reads the link's share Secret, claims one that a
// restore brought back without its owner (claimShare), and hands the
// phases after it the link's origin, whether it was live, and the
// short-token object it gave back to the link.
func (r *Reconciler) adopt(ctx context.Context, l *v1alpha1.ReceiveLink, run *runner.Run) runner.Outcome {
	share := &corev1.Secret{}
	err := r.Get(ctx, types.NamespacedName{Namespace: l.Namespace, Name: shareSecretName(l)}, share)
	if apierrors.IsNotFound(err) {
		return runner.Continue()
	}
	if err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, fmt.Errorf("read the share Secret: %w", err))
	}
	if !metav1.IsControlledBy(share, l) {
		if out, done := r.claimShare(ctx, l, share); done {
			return out
		}
	}
	start := origin(l, share)
	shareKey.Put(run, share)
	originKey.Put(run, start)
	if len(share.Data[linktoken.ShareShortToken]) == 0 {
		return runner.Continue() // cleared: mint mints anew
	}
	if l.Status.Phase == "" {
		// Minted (mint is the last phase; Ready follows it): the link
		// was live, though a restore dropped the status that said so.
		l.Status.Phase = v1alpha1.LinkActive
	}
	obj, err := r.rebindObject(ctx, l, share, expiresAt(l, start))
	if err != nil && !errors.Is(err, errTaken) {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	boundKey.Put(run, obj)
	return runner.Continue()
}

// claimShare takes over a share Secret that a restore brought back
// (oauth.ClaimSecret), in one write with its long token sealed again for
// the link's new UID, when it proves to be this link's: its long token
// opens with the link's keys and seals the link's namespace, name and
// blob. Content that does not (planted, or sealed under a key the restore
// did not bring back) is cleared instead, and mint mints a new share
// link. done: the reconcile ends with out (someone else's Secret; keys
// that cannot be read).
func (r *Reconciler) claimShare(ctx context.Context, l *v1alpha1.ReceiveLink, share *corev1.Secret) (out runner.Outcome, done bool) {
	foreign := runner.Stall(v1alpha1.InvalidSpecReason, fmt.Errorf("a Secret named %s exists and is not this link's share Secret; rename or delete it", share.Name))
	if share.Labels[v1alpha1.ManagedByLabel] != v1alpha1.ManagedByValue {
		return foreign, true
	}
	kr, err := r.keyring(ctx, l)
	if err != nil {
		return keysFailed(err), true
	}
	data, proof := r.resealed(l, kr, share)
	share.Data = data
	claim, err := oauth.ClaimSecret(ctx, r.Client, l, share)
	switch {
	case err != nil:
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err), true
	case claim == oauth.Foreign:
		return foreign, true
	case proof != nil:
		log.FromContext(ctx).Info("a share Secret brought back without its link is not this link's; minting a new share link", "secret", share.Name, "reason", proof.Error())
		r.Recorder.Eventf(l, nil, corev1.EventTypeWarning, ShareReplacedReason, "Mint",
			"the Secret %s was not this link's share Secret (%v); a new short link is minted, the one it held does not resolve", share.Name, proof)
	}
	return runner.Outcome{}, false
}

// resealed opens the share Secret's long token with kr. When it seals this
// link (namespace, name, blob), resealed returns the Secret's data with a
// long token sealed again for the link's UID and its original expiry;
// otherwise nil data and why.
func (r *Reconciler) resealed(l *v1alpha1.ReceiveLink, kr linktoken.Keyring, share *corev1.Secret) (map[string][]byte, error) {
	d := share.Data
	short := string(d[linktoken.ShareShortToken])
	if !linktoken.ValidShort(short) {
		return nil, fmt.Errorf("no short token: %w", linktoken.ErrMalformed)
	}
	c, err := linktoken.Open(kr, string(d[linktoken.ShareKeyID]), string(d[linktoken.ShareLongToken]))
	if err != nil {
		return nil, err
	}
	if c.Namespace != l.Namespace || c.Name != l.Name || c.Bucket != l.Spec.Blob.Bucket || c.Key != l.Spec.Blob.Key {
		return nil, errNotThisLink
	}
	start := origin(l, share)
	if _, recorded := d[linktoken.ShareCreatedAt]; !recorded && l.Spec.TTL != nil {
		// Minted before the share Secret recorded its origin: the
		// sealed expiry says when it was.
		start = earliest(c.ExpiresAt.Add(-l.Spec.TTL.Duration), start)
	}
	c.UID, c.ExpiresAt = l.UID, expiresAt(l, start).UTC()
	long, keyID, err := linktoken.Seal(kr, c)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(d)
	out[linktoken.ShareLongToken], out[linktoken.ShareKeyID] = []byte(long), []byte(keyID)
	out[linktoken.ShareCreatedAt] = []byte(start.UTC().Format(time.RFC3339))
	out[linktoken.ShareURL] = []byte(r.PublicURL + linktoken.ResolvePath(short))
	out[linktoken.ShareObject] = []byte(r.Namespace + "/" + linktoken.ObjectName(short))
	return out, nil
}

// rebindObject returns the short-token object the share Secret names,
// bound to the link: one a restore left naming the link's previous UID
// (restored with it, or never deleted: the old cluster's finalizer did not
// run) is relabelled with the link's UID and, unless it is a tombstone,
// given the share Secret's long token (sealed for this UID) and the link's
// expiry exp. None: nil, nil (mint creates it). An object of another link:
// errTaken.
func (r *Reconciler) rebindObject(ctx context.Context, l *v1alpha1.ReceiveLink, share *corev1.Secret, exp time.Time) (*corev1.Secret, error) {
	obj := &corev1.Secret{}
	err := r.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: linktoken.ObjectName(string(share.Data[linktoken.ShareShortToken]))}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the short-token object: %w", err)
	case obj.Labels[linktoken.LinkUIDLabel] == string(l.UID):
		return obj, nil
	case string(obj.Data[linktoken.DataNamespace]) != l.Namespace || string(obj.Data[linktoken.DataName]) != l.Name:
		return nil, errTaken
	}
	if obj.Labels == nil {
		obj.Labels = map[string]string{}
	}
	obj.Labels[linktoken.LinkUIDLabel] = string(l.UID)
	if obj.Data == nil {
		obj.Data = map[string][]byte{}
	}
	if _, sealed := obj.Data[linktoken.DataLongToken]; sealed {
		obj.Data[linktoken.DataLongToken] = share.Data[linktoken.ShareLongToken]
		obj.Data[linktoken.DataKeyID] = share.Data[linktoken.ShareKeyID]
		obj.Data[linktoken.DataExpiresAt] = []byte(exp.UTC().Format(time.RFC3339))
	}
	obj.Data[linktoken.DataPolicy] = []byte(policyOf(l))
	if err := r.Update(ctx, obj); err != nil {
		return nil, fmt.Errorf("give the short-token object %s back to the link: %w", obj.Name, err)
	}
	return obj, nil
}

// origin is when the link began, which spec.ttl counts from: the creation
// recorded in its share Secret (linktoken.ShareCreatedAt, which a restore
// keeps), or its own creation. Never later than its own creation: a
// recorded time can only shorten a link, not lengthen it past 14 days.
func origin(l *v1alpha1.ReceiveLink, share *corev1.Secret) time.Time {
	created := l.CreationTimestamp.Time
	if share == nil {
		return created
	}
	t, err := time.Parse(time.RFC3339, string(share.Data[linktoken.ShareCreatedAt]))
	if err != nil {
		return created
	}
	return earliest(t, created)
}

// originOf is the origin adopt found, or the link's creation.
func originOf(l *v1alpha1.ReceiveLink, run *runner.Run) time.Time {
	if t := originKey.From(run); !t.IsZero() {
		return t
	}
	return l.CreationTimestamp.Time
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// keysFailed is the outcome of keys that cannot be read.
func keysFailed(err error) runner.Outcome {
	if errors.Is(err, linktoken.ErrKeys) || apierrors.IsNotFound(err) {
		return runner.Stall(v1alpha1.KeysInvalidReason, err).RecheckAfter(KeysRecheck)
	}
	return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
}

// policyOf is the link's deletion policy, Delete when unset.
func policyOf(l *v1alpha1.ReceiveLink) v1alpha1.DeletionPolicy {
	if l.Spec.DeletionPolicy == "" {
		return v1alpha1.DeletionPolicyDelete
	}
	return l.Spec.DeletionPolicy
}
