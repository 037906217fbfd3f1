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

package receivelink_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/controller/receivelink"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// Issue 35 §3: a link brought back by a restore (new UID, new creation
// time, no status, its share Secret without an owner, its short-token
// object naming the old UID) keeps the short link receivers hold until its
// original expiry, deletes its blob once, at that expiry, and is no
// orphan to the sweep.

// countingBlobs counts the deletes of each blob key.
type countingBlobs struct {
	receivelink.Blobs
	mu      sync.Mutex
	deletes map[string]int
}

func (b *countingBlobs) Delete(ctx context.Context, o blob.Object) error {
	b.mu.Lock()
	if b.deletes == nil {
		b.deletes = map[string]int{}
	}
	b.deletes[o.Key]++
	b.mu.Unlock()
	return b.Blobs.Delete(ctx, o)
}

func (b *countingBlobs) count(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.deletes[key]
}

// restore backs up the link key, its share Secret and its short-token
// object, loses them as a lost cluster does (no finalizer runs) and
// restores them as Velero does. It first waits for the API server's clock
// to pass the link's creation second, so that the restored link's
// creationTimestamp differs from the original's.
func (f *fixture) restore(t *testing.T, key types.NamespacedName, short string) *v1alpha1.ReceiveLink {
	t.Helper()
	ctx := context.Background()
	orig := get(t, key)
	testenv.EventuallyWithin(t, 10*time.Second, "a second has passed since the link was created", func() bool {
		return time.Since(orig.CreationTimestamp.Time) >= 1100*time.Millisecond
	})
	b, err := testenv.TakeBackup(ctx, env.Client, orig,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name + "-share"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.opns, Name: linktoken.ObjectName(short)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Replay(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	l := get(t, key)
	if l.UID == orig.UID || !l.CreationTimestamp.After(orig.CreationTimestamp.Time) || l.Status.ExpiresAt != nil {
		t.Fatalf("the restore kept the UID, the creation time or the status: %v %v %+v", l.UID, l.CreationTimestamp, l.Status)
	}
	return l
}

// sweepAfterGrace runs the sweep at a time past its grace for new objects,
// so that it judges the restored ones.
func (f *fixture) sweepAfterGrace(t *testing.T) receivelink.SweepResult {
	t.Helper()
	sw := &receivelink.Sweeper{Client: env.Client, APIReader: env.Client, Reconciler: f.r, Namespace: f.opns,
		Clock: clocktesting.NewFakeClock(time.Now().Add(receivelink.DefaultOrphanGrace + time.Hour))}
	res, err := sw.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// opened is the claims of the long token a short-token object holds.
func (f *fixture) opened(t *testing.T, obj *corev1.Secret) linktoken.Claims {
	t.Helper()
	var keys corev1.Secret
	if err := env.Client.Get(context.Background(), f.r.DefaultKeys, &keys); err != nil {
		t.Fatal(err)
	}
	kr, err := linktoken.KeyringFrom(&keys)
	if err != nil {
		t.Fatal(err)
	}
	c, err := linktoken.Open(kr, string(obj.Data[linktoken.DataKeyID]), string(obj.Data[linktoken.DataLongToken]))
	if err != nil {
		t.Fatalf("the short-token object's long token does not open: %v", err)
	}
	return c
}

func TestARestoredLinkKeepsItsShortLinkUntilItsOriginalExpiry(t *testing.T) {
	blobs := &countingBlobs{Blobs: s3.Blob}
	f := newFixture(t, func(r *receivelink.Reconciler) { r.Blobs = blobs })
	blobKey := f.upload(t, "prize.zip")
	key := f.link(t, "prize", blobKey, nil)
	f.reconcile(t, key)
	short := string(f.share(t, key)[linktoken.ShareShortToken])
	exp := get(t, key).Status.ExpiresAt.Time
	l := f.restore(t, key, short)

	// The first sweep after the restore, before the controller has run:
	// the object names the old UID, but the link's share Secret names it.
	if res := f.sweepAfterGrace(t); res.Deleted != 0 || res.MissingMeta != 0 {
		t.Fatalf("the sweep after the restore = %+v, want nothing deleted", res)
	}
	if _, ok := f.tokenObject(t, short); !ok || !f.exists(t, blobKey) {
		t.Fatal("the sweep deleted the restored link's short-token object or blob")
	}

	f.clock.SetTime(l.CreationTimestamp.Time)
	f.reconcile(t, key)
	l = get(t, key)
	if !status.IsTrue(l, v1alpha1.ReadyCondition) || l.Status.ExpiresAt == nil || !l.Status.ExpiresAt.Time.Equal(exp) {
		t.Fatalf("restored link: Ready %v, expiresAt %v, want Ready until the original %s (not creation + ttl: %s)",
			condition(l, v1alpha1.ReadyCondition), l.Status.ExpiresAt, exp, l.CreationTimestamp.Add(time.Hour))
	}
	share := f.share(t, key)
	if string(share[linktoken.ShareShortToken]) != short {
		t.Fatal("the restored link minted a new short token: the one receivers hold answers 404")
	}
	var sec corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: key.Namespace, Name: key.Name + "-share"}, &sec); err != nil || !metav1.IsControlledBy(&sec, l) {
		t.Fatalf("the share Secret is not the restored link's: %v %v", err, sec.OwnerReferences)
	}
	obj, ok := f.tokenObject(t, short)
	if !ok || obj.Labels[linktoken.LinkUIDLabel] != string(l.UID) || string(obj.Data[linktoken.DataExpiresAt]) != exp.UTC().Format(time.RFC3339) {
		t.Fatalf("short-token object = %v %v, want it labelled with the new UID and the original expiry", obj.Labels, string(obj.Data[linktoken.DataExpiresAt]))
	}
	if c := f.opened(t, obj); c.UID != l.UID || !c.ExpiresAt.Equal(exp) {
		t.Fatalf("the long token seals UID %s, expiry %s; want %s, %s", c.UID, c.ExpiresAt, l.UID, exp)
	}
	if ev := f.rec.With(receivelink.ShareReplacedReason); len(ev) != 0 {
		t.Errorf("the restored share Secret was replaced: %v", ev)
	}
	if res := f.sweepAfterGrace(t); res.Deleted != 0 || res.MissingMeta != 0 {
		t.Fatalf("the sweep after the link was Ready again = %+v, want nothing deleted", res)
	}

	f.clock.SetTime(exp.Add(-time.Second))
	f.reconcile(t, key)
	if !f.exists(t, blobKey) || blobs.count(blobKey) != 0 {
		t.Fatal("the restored link deleted its blob before its original expiry")
	}
	f.clock.SetTime(exp)
	f.reconcile(t, key)
	if l = get(t, key); l.Status.Phase != v1alpha1.LinkExpired || l.Status.BlobDeletedAt == nil || f.exists(t, blobKey) {
		t.Fatalf("at the original expiry: phase %s, blobDeletedAt %v, blob there %v", l.Status.Phase, l.Status.BlobDeletedAt, f.exists(t, blobKey))
	}
	f.sweepAfterGrace(t)
	if n := blobs.count(blobKey); n != 1 {
		t.Errorf("the blob was deleted %d times, want once", n)
	}
}

// A live link whose expiry passed while the cluster was down was live: the
// restore expires it at once and deletes its blob, once.
func TestALinkThatExpiredDuringTheOutageDeletesItsBlobOnce(t *testing.T) {
	blobs := &countingBlobs{Blobs: s3.Blob}
	f := newFixture(t, func(r *receivelink.Reconciler) { r.Blobs = blobs })
	blobKey := f.upload(t, "late.zip")
	key := f.link(t, "late", blobKey, nil)
	f.reconcile(t, key)
	short := string(f.share(t, key)[linktoken.ShareShortToken])
	exp := get(t, key).Status.ExpiresAt.Time
	f.restore(t, key, short)

	f.clock.SetTime(exp.Add(time.Minute))
	f.reconcile(t, key)
	l := get(t, key)
	if l.Status.Phase != v1alpha1.LinkExpired || condition(l, v1alpha1.ReadyCondition).Reason != v1alpha1.ExpiredReason || f.exists(t, blobKey) {
		t.Fatalf("restored after its expiry: phase %s, Ready %+v, blob there %v; want Expired and the blob deleted",
			l.Status.Phase, condition(l, v1alpha1.ReadyCondition), f.exists(t, blobKey))
	}
	if obj, ok := f.tokenObject(t, short); !ok || obj.Labels[linktoken.LinkUIDLabel] != string(l.UID) || string(obj.Data[linktoken.DataBlobDeleted]) != "true" {
		t.Fatal("the restored short-token object is not the link's tombstone")
	}
	if res := f.sweepAfterGrace(t); res.Deleted != 0 {
		t.Errorf("the sweep deleted %d blobs", res.Deleted)
	}
	if n := blobs.count(blobKey); n != 1 {
		t.Errorf("the blob was deleted %d times, want once", n)
	}
}

// A labelled Secret of the share Secret's name whose content is not the
// link's — garbage, or another link's real tokens — is claimed but not
// adopted: the link mints a short link of its own and says so.
func TestAPlantedShareSecretIsNotAdopted(t *testing.T) {
	f := newFixture(t, nil)
	other := f.link(t, "other", f.upload(t, "other.zip"), nil)
	f.reconcile(t, other)
	stolen := f.share(t, other)
	for name, data := range map[string]map[string][]byte{
		"garbage": {linktoken.ShareShortToken: []byte("AAAAAAAAAA"), linktoken.ShareLongToken: []byte("v1.AAAA.BBBB"), linktoken.ShareCreatedAt: []byte("2000-01-01T00:00:00Z")},
		"stolen":  stolen,
	} {
		t.Run(name, func(t *testing.T) {
			f.rec.Reset()
			planted := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name + "-share",
				Labels: map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue}}, Data: data}
			if err := env.Client.Create(context.Background(), planted); err != nil {
				t.Fatal(err)
			}
			key := f.link(t, name, f.upload(t, name+".zip"), nil)
			f.reconcile(t, key)
			l := get(t, key)
			share := f.share(t, key)
			if !status.IsTrue(l, v1alpha1.ReadyCondition) || string(share[linktoken.ShareShortToken]) == string(data[linktoken.ShareShortToken]) {
				t.Fatalf("Ready %+v; the link adopted the planted short token", condition(l, v1alpha1.ReadyCondition))
			}
			if !l.Status.ExpiresAt.Time.Equal(l.CreationTimestamp.Add(time.Hour)) {
				t.Errorf("expiresAt %s, want creation + ttl: a planted created_at moves nothing", l.Status.ExpiresAt)
			}
			if len(f.rec.With(receivelink.ShareReplacedReason)) != 1 {
				t.Errorf("Events %v, want one %s", f.rec.All(), receivelink.ShareReplacedReason)
			}
		})
	}
	obj, ok := f.tokenObject(t, string(stolen[linktoken.ShareShortToken]))
	if o := get(t, other); !ok || obj.Labels[linktoken.LinkUIDLabel] != string(o.UID) {
		t.Error("the other link's short-token object was taken")
	}
}
