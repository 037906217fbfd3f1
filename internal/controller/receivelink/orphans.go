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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// What the sweep calls an orphan: a short-token object no link holds.

func (s *Sweeper) sweepToken(ctx context.Context, obj *corev1.Secret, used map[string]bool, res *SweepResult) {
	d := obj.Data
	key := types.NamespacedName{Namespace: string(d[linktoken.DataNamespace]), Name: string(d[linktoken.DataName])}
	l, err := s.link(ctx, key)
	if err == nil {
		var held bool
		if held, err = s.holds(ctx, l, obj); err == nil && held {
			if _, sealed := d[linktoken.DataLongToken]; sealed {
				keySecret, recorded := d[linktoken.DataKeySecret]
				if !recorded {
					keySecret = []byte(keySecretName(l))
				}
				if len(keySecret) > 0 {
					used[linktoken.KeysMirrorName(key.Namespace, string(keySecret))] = true
				}
			}
			return // the link's own timer owns it
		}
	}
	young := s.Clock.Since(obj.CreationTimestamp.Time) < s.Grace
	if name := string(d[linktoken.DataKeySecret]); (young || err != nil && !apierrors.IsNotFound(err)) && name != "" {
		// Its link is unknown, or may yet be restored: keep the mirror
		// it may need.
		used[linktoken.KeysMirrorName(key.Namespace, name)] = true
	}
	if err != nil && !apierrors.IsNotFound(err) {
		res.Errors++
		return
	}
	if young {
		return // a restore may bring its link back after it
	}
	res.MissingMeta++
	// A link of the same name on the same blob (the link, created again)
	// owns the blob now: only the object goes.
	if (l == nil || !sameBlob(l, d)) && string(d[linktoken.DataBlobDeleted]) != "true" && string(d[linktoken.DataPolicy]) != string(v1alpha1.DeletionPolicyRetain) {
		if !s.deleteOrphanBlob(ctx, key.Namespace, d) {
			res.Errors++
			return
		}
		res.Deleted++
	}
	if err := client.IgnoreNotFound(s.Client.Delete(ctx, obj, client.Preconditions{UID: &obj.UID})); err != nil {
		res.Errors++
	}
}

// link reads the link named key: from this manager's cache, or, when the
// cache lacks it (gone, another shard's, or not seen yet), from the API
// server, which decides. NotFound: there is none.
func (s *Sweeper) link(ctx context.Context, key types.NamespacedName) (*v1alpha1.ReceiveLink, error) {
	var l v1alpha1.ReceiveLink
	err := s.Client.Get(ctx, key, &l)
	if apierrors.IsNotFound(err) {
		err = s.APIReader.Get(ctx, key, &l)
	}
	if err != nil {
		return nil, err
	}
	return &l, nil
}

// deleteOrphanBlob deletes the blob of a short-token object whose link is
// gone, with the link's credentials Secret or, when that went with its
// namespace, the object's copy of them; it reports whether it did.
func (s *Sweeper) deleteOrphanBlob(ctx context.Context, ns string, d map[string][]byte) bool {
	creds, err := loadCredentials(ctx, s.APIReader, ns, v1alpha1.SecretReference{Name: string(d[linktoken.DataCredentials])})
	if copied := (blob.Credentials{AccessKeyID: string(d[linktoken.DataAccessKeyID]), SecretAccessKey: string(d[linktoken.DataSecretAccessKey])}); err != nil && copied.AccessKeyID != "" && copied.SecretAccessKey != "" {
		creds, err = copied, nil // the link's namespace went with its Secret: the copy deletes the blob
	}
	if err != nil {
		return false
	}
	o := blob.Object{Bucket: string(d[linktoken.DataBucket]), Key: string(d[linktoken.DataKey]), Region: string(d[linktoken.DataRegion]), Credentials: creds}
	return s.Reconciler.deleteBlobNow(ctx, o) == nil
}

// holds says whether l has obj, a short-token object that names l's
// namespace and name: obj carries l's UID, or l's share Secret names it (a
// restore brought both back and the controller has not given the object
// back to the link yet). Either way the object and its blob are the
// link's, not an orphan's.
func (s *Sweeper) holds(ctx context.Context, l *v1alpha1.ReceiveLink, obj *corev1.Secret) (bool, error) {
	if string(l.UID) == obj.Labels[linktoken.LinkUIDLabel] {
		return true, nil
	}
	var share corev1.Secret
	err := s.APIReader.Get(ctx, types.NamespacedName{Namespace: l.Namespace, Name: shareSecretName(l)}, &share)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the share Secret of %s/%s: %w", l.Namespace, l.Name, err)
	}
	short := string(share.Data[linktoken.ShareShortToken])
	return short != "" && linktoken.ObjectName(short) == obj.Name, nil
}

// sameBlob says whether the short-token object's data points at l's blob.
func sameBlob(l *v1alpha1.ReceiveLink, d map[string][]byte) bool {
	return l.Spec.Blob.Bucket == string(d[linktoken.DataBucket]) && l.Spec.Blob.Key == string(d[linktoken.DataKey])
}
