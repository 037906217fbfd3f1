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
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// The webhook faces the internet, so it reads no Secret in the links'
// namespaces: the manager copies what a resolve needs into the link
// namespace, where the webhook's cache holds it (managed-by label). A
// short-token object carries its link's storage credentials; a key mirror
// (linktoken.KeysMirrorName) carries a key Secret that links name. These
// copies follow their sources: at each reconcile of a link, and every
// Sweeper.MirrorInterval for rotations (the sources are a person's
// Secrets, which the manager's cache does not hold, so nothing is told of
// their changes).

// mirrorKeys copies the key Secret src into its mirror in the link
// namespace, when it holds a valid keyring, and returns the keyring, the
// mirror as it was read (nil when there was none), and whether it wrote
// the mirror. The mirror is read before the
// source, and written with the resourceVersion read: a write therefore
// always carries a source read after the mirror's previous write, so a
// slow writer holding an older copy never takes a new key out of the
// mirror after a mint sealed with it (its write fails on a conflict).
// That write is then done again from fresh reads, at once: links that
// share a key Secret mirror it together when it changes, and a conflict
// between them is no failure of the link (reported as one, it would
// make a serving link answer 503 for a moment).
func (r *Reconciler) mirrorKeys(ctx context.Context, src types.NamespacedName) (kr linktoken.Keyring, read *corev1.Secret, changed bool, err error) {
	err = retry.OnError(retry.DefaultRetry, func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }, func() error {
		var e error
		kr, read, changed, e = r.mirrorKeysOnce(ctx, src)
		return e
	})
	return kr, read, changed, err
}

// mirrorKeysOnce is one read of the mirror and the source, and one write.
func (r *Reconciler) mirrorKeysOnce(ctx context.Context, src types.NamespacedName) (kr linktoken.Keyring, read *corev1.Secret, changed bool, err error) {
	mirror := &corev1.Secret{}
	key := types.NamespacedName{Namespace: r.Namespace, Name: linktoken.KeysMirrorName(src.Namespace, src.Name)}
	err = r.APIReader.Get(ctx, key, mirror)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return kr, nil, false, fmt.Errorf("read the mirror of key Secret %s: %w", src, err)
	}
	if exists {
		read = mirror.DeepCopy()
	}
	var sec corev1.Secret
	if err := r.APIReader.Get(ctx, src, &sec); err != nil {
		return kr, read, false, fmt.Errorf("read the encryption key Secret %s: %w", src, err)
	}
	if kr, err = linktoken.KeyringFrom(&sec); err != nil {
		return kr, read, false, err
	}
	want := map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue, linktoken.KeysMirrorLabel: "true"}
	if exists && maps.Equal(mirror.Labels, want) && mirror.Annotations[linktoken.KeysSourceAnnotation] == src.String() &&
		mirror.Annotations[linktoken.UnusedSinceAnnotation] == "" && dataEqual(mirror.Data, sec.Data) {
		return kr, read, false, nil
	}
	mirror.Namespace, mirror.Name = key.Namespace, key.Name
	mirror.Labels = want
	// Writing the mirror also clears a sweep's "unused" mark: a link
	// uses it again.
	mirror.Annotations = map[string]string{linktoken.KeysSourceAnnotation: src.String()}
	mirror.Type = corev1.SecretTypeOpaque
	mirror.Data = maps.Clone(sec.Data)
	if exists {
		err = r.Update(ctx, mirror)
	} else {
		err = r.Create(ctx, mirror)
	}
	if err != nil {
		return kr, read, false, fmt.Errorf("write the mirror of key Secret %s: %w", src, err)
	}
	return kr, read, true, nil
}

func dataEqual(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, bytes.Equal)
}

// publish brings a minted link's short-token object up to date with the
// Secrets it copies: the storage credentials (rotated, say) and the key
// mirror. An object minted before the copies existed gets the name of its
// key Secret, the link's current one.
func (r *Reconciler) publish(ctx context.Context, l *v1alpha1.ReceiveLink, obj *corev1.Secret) error {
	if _, sealed := obj.Data[linktoken.DataLongToken]; !sealed {
		return nil // a tombstone holds no credential
	}
	keySecret, recorded := obj.Data[linktoken.DataKeySecret]
	if !recorded {
		keySecret = []byte(keySecretName(l))
	}
	if name := string(keySecret); name != "" {
		// A key Secret now invalid or gone leaves the mirror as it was:
		// the links it sealed are not this reconcile's to break.
		_, _, _, err := r.mirrorKeys(ctx, types.NamespacedName{Namespace: l.Namespace, Name: name})
		if err != nil && !errors.Is(err, linktoken.ErrKeys) && !apierrors.IsNotFound(err) {
			return err
		}
	}
	o, err := r.object(ctx, l)
	if err != nil {
		return err
	}
	want := credsData(&o.Credentials)
	want[linktoken.DataKeySecret] = keySecret
	want[linktoken.DataCredentials] = []byte(l.Spec.Blob.CredentialsSecretRef.Name)
	_, err = r.updateTokenObject(ctx, obj, want)
	return err
}

// credsData is the data a short-token object carries for c; nil c removes
// the copy.
func credsData(c *blob.Credentials) map[string][]byte {
	if c == nil {
		return map[string][]byte{linktoken.DataAccessKeyID: nil, linktoken.DataSecretAccessKey: nil}
	}
	return map[string][]byte{linktoken.DataAccessKeyID: []byte(c.AccessKeyID), linktoken.DataSecretAccessKey: []byte(c.SecretAccessKey)}
}

// updateTokenObject sets (or, for nil values, removes) data keys of a
// short-token object, writing only when one differs. The write carries
// the resourceVersion read: an object tombstoned since is never given its
// credentials back.
func (r *Reconciler) updateTokenObject(ctx context.Context, obj *corev1.Secret, want map[string][]byte) (changed bool, err error) {
	for k, v := range want {
		old, ok := obj.Data[k]
		switch {
		case v == nil && ok:
			delete(obj.Data, k)
		case v != nil && (!ok || !bytes.Equal(old, v)):
			if obj.Data == nil {
				obj.Data = map[string][]byte{}
			}
			obj.Data[k] = v
		default:
			continue
		}
		changed = true
	}
	if !changed {
		return false, nil
	}
	if err := r.Update(ctx, obj); err != nil {
		return false, fmt.Errorf("update short-token object %s: %w", obj.Name, err)
	}
	return true, nil
}

// MirrorResult is what one Sweeper.Refresh changed.
type MirrorResult struct {
	// Updated counts copies written: rotated credentials in short-token
	// objects, and key mirrors.
	Updated int
	// Removed counts copies removed because their source is gone (or, for
	// credentials, incomplete).
	Removed int
	// Errors counts copies that could not be checked; the next refresh
	// tries again.
	Errors int
}

// Refresh brings every copy in the link namespace up to date with its
// source: the credentials in each live short-token object, and the key
// mirror of each key Secret a live object was sealed with. A source that
// is gone takes its copy with it: a link whose credentials Secret was
// deleted answers 503, one whose key Secret was deleted 404. The
// short-token objects are read from the API server, a page of Batch at a
// time as the sweep reads them: the manager's cache keeps no Secret's
// data (setup.Scope.SecretsOnlyWake), and what Refresh compares is data.
// Each source is read once, from the API server.
func (s *Sweeper) Refresh(ctx context.Context) (MirrorResult, error) {
	if err := s.init(); err != nil {
		return MirrorResult{}, err
	}
	var res MirrorResult
	keys := map[types.NamespacedName]bool{}
	creds := map[types.NamespacedName]credentialsRead{}
	if err := s.secretPages(ctx, linktoken.TokenLabel, "short-token objects", func(objs []corev1.Secret) {
		s.refreshCredentials(ctx, objs, creds, keys, &res)
	}); err != nil {
		return res, err
	}
	for src := range keys {
		s.refreshKeyMirror(ctx, src, &res)
	}
	return res, nil
}

// credentialsRead is a credentials Secret as Refresh read it.
type credentialsRead struct {
	creds *blob.Credentials // nil: gone
	err   error
}

// refreshCredentials brings the copy of the storage credentials in each
// live short-token object of objs up to date, reading each credentials
// Secret once (creds keeps what was read, across pages), and adds to keys
// the key Secrets the live objects were sealed with.
func (s *Sweeper) refreshCredentials(ctx context.Context, objs []corev1.Secret, creds map[types.NamespacedName]credentialsRead,
	keys map[types.NamespacedName]bool, res *MirrorResult) {
	for i := range objs {
		obj := &objs[i]
		if _, sealed := obj.Data[linktoken.DataLongToken]; !sealed {
			continue
		}
		ns := string(obj.Data[linktoken.DataNamespace])
		if name := string(obj.Data[linktoken.DataKeySecret]); name != "" {
			keys[types.NamespacedName{Namespace: ns, Name: name}] = true
		}
		src := types.NamespacedName{Namespace: ns, Name: string(obj.Data[linktoken.DataCredentials])}
		got, ok := creds[src]
		if !ok {
			got = s.readCredentials(ctx, src)
			creds[src] = got
		}
		if got.err != nil {
			res.Errors++
			continue
		}
		changed, err := s.Reconciler.updateTokenObject(ctx, obj, credsData(got.creds))
		switch {
		case err != nil:
			res.Errors++
		case changed && got.creds == nil:
			res.Removed++
		case changed:
			res.Updated++
		}
	}
}

// readCredentials reads the credentials Secret src: gone (or incomplete)
// is no error, it removes the copies.
func (s *Sweeper) readCredentials(ctx context.Context, src types.NamespacedName) credentialsRead {
	var got credentialsRead
	c, err := loadCredentials(ctx, s.APIReader, src.Namespace, v1alpha1.SecretReference{Name: src.Name})
	switch {
	case err == nil:
		got.creds = &c
	case !apierrors.IsNotFound(err) && !errors.Is(err, blob.ErrCredentialsIncomplete):
		got.err = err
	}
	return got
}

// refreshKeyMirror brings the mirror of the key Secret src up to date, or
// deletes it when the key Secret is gone.
func (s *Sweeper) refreshKeyMirror(ctx context.Context, src types.NamespacedName, res *MirrorResult) {
	_, mirror, changed, err := s.Reconciler.mirrorKeys(ctx, src)
	switch {
	case err == nil && changed:
		res.Updated++
	case err == nil:
	case apierrors.IsNotFound(err) && mirror == nil:
	case apierrors.IsNotFound(err):
		// The key Secret is gone, and with it its keys. The delete is
		// conditional on the mirror being as read before the source:
		// a mint that saw the Secret again since has rewritten it.
		err := s.Client.Delete(ctx, mirror, client.Preconditions{UID: &mirror.UID, ResourceVersion: &mirror.ResourceVersion})
		switch {
		case err == nil:
			res.Removed++
		case !apierrors.IsNotFound(err) && !apierrors.IsConflict(err):
			res.Errors++
		}
	default:
		res.Errors++ // an invalid key Secret leaves its mirror as it was
	}
}
