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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/controller/receivelink"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// These tests drive Reconcile by hand with a fake clock, on a real API
// server, against a real S3 server (versitygw): the blob is really there
// before, and really gone after.

var (
	env *testenv.Env
	s3  *testenv.S3
)

const bucket = "user-prize"

func TestMain(m *testing.M) {
	testenv.Main(m, &env, testenv.WithS3(&s3), func(*testenv.Env) (func(), error) {
		return func() {}, s3.CreateBucket(context.Background(), bucket)
	})
}

type fixture struct {
	ns    string
	opns  string
	clock *clocktesting.FakeClock
	rec   *testenv.Recorder
	r     *receivelink.Reconciler
	run   *runner.Runner[*v1alpha1.ReceiveLink]
}

func newFixture(t *testing.T, change func(*receivelink.Reconciler)) *fixture {
	t.Helper()
	ns, err := env.Namespace("rlink")
	if err != nil {
		t.Fatal(err)
	}
	opns, err := env.Namespace("rlink-op")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{ns: ns, opns: opns, clock: clocktesting.NewFakeClock(time.Now().Truncate(time.Second)), rec: &testenv.Recorder{}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blob-credentials"}, Data: s3.Credentials.SecretData()}
	if err := env.Client.Create(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
	f.r = &receivelink.Reconciler{Client: env.Client, APIReader: env.Client, Blobs: s3.Blob, Recorder: f.rec, Clock: f.clock,
		Namespace: opns, DefaultKeys: types.NamespacedName{Namespace: opns, Name: "link-keys"}, PublicURL: "https://hooks.example.com"}
	if change != nil {
		change(f.r)
	}
	f.run = f.r.Runner()
	return f
}

// upload puts a blob and returns its key.
func (f *fixture) upload(t *testing.T, name string) string {
	t.Helper()
	key := "user_prize/" + f.ns + "/" + name
	if err := s3.Blob.Put(context.Background(), s3.Object(bucket, key), []byte("prize bytes of "+name), "application/zip"); err != nil {
		t.Fatal(err)
	}
	return key
}

func (f *fixture) exists(t *testing.T, key string) bool {
	t.Helper()
	_, err := s3.Blob.Head(context.Background(), s3.Object(bucket, key))
	if err != nil && !errors.Is(err, blob.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// link creates a ReceiveLink for key that expires after ttl (of the API
// server's clock; the fake clock starts at the same second).
func (f *fixture) link(t *testing.T, name, key string, change func(*v1alpha1.ReceiveLink)) types.NamespacedName {
	t.Helper()
	l := &v1alpha1.ReceiveLink{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}
	l.Spec.Blob = v1alpha1.BlobLocation{Bucket: bucket, Key: key, CredentialsSecretRef: v1alpha1.SecretReference{Name: "blob-credentials"}}
	l.Spec.TTL = &metav1.Duration{Duration: time.Hour}
	if change != nil {
		change(l)
	}
	if err := env.Client.Create(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	// The fake clock starts at the link's creation second.
	f.clock.SetTime(l.CreationTimestamp.Time)
	return client.ObjectKeyFromObject(l)
}

func (f *fixture) reconcile(t *testing.T, key types.NamespacedName) ctrl.Result {
	t.Helper()
	res, err := f.run.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	return res
}

func get(t *testing.T, key types.NamespacedName) *v1alpha1.ReceiveLink {
	t.Helper()
	l := &v1alpha1.ReceiveLink{}
	if err := env.Client.Get(context.Background(), key, l); err != nil {
		t.Fatal(err)
	}
	return l
}

func condition(l *v1alpha1.ReceiveLink, typ string) metav1.Condition {
	for _, c := range l.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

func (f *fixture) share(t *testing.T, key types.NamespacedName) map[string][]byte {
	t.Helper()
	var sec corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: key.Namespace, Name: key.Name + "-share"}, &sec); err != nil {
		t.Fatal(err)
	}
	return sec.Data
}

// mirror is the mirror of the key Secret name of f.ns, or nil.
func (f *fixture) mirror(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	var sec corev1.Secret
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.opns, Name: linktoken.KeysMirrorName(f.ns, name)}, &sec)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if sec.Labels[v1alpha1.ManagedByLabel] != v1alpha1.ManagedByValue || sec.Labels[linktoken.KeysMirrorLabel] != "true" ||
		sec.Annotations[linktoken.KeysSourceAnnotation] != f.ns+"/"+name {
		t.Fatalf("mirror %s is not labelled for the webhook's cache or does not name its source: %v %v", sec.Name, sec.Labels, sec.Annotations)
	}
	return &sec
}

func (f *fixture) tokenObject(t *testing.T, short string) (*corev1.Secret, bool) {
	t.Helper()
	var sec corev1.Secret
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.opns, Name: linktoken.ObjectName(short)}, &sec)
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return &sec, true
}

func TestMintsAShortLinkAndKeepsEveryTokenOutOfStatus(t *testing.T) {
	f := newFixture(t, nil)
	key := f.link(t, "prize", f.upload(t, "prize.zip"), nil)
	res := f.reconcile(t, key)
	f.reconcile(t, key) // a second pass mints nothing new

	l := get(t, key)
	if c := condition(l, v1alpha1.ReadyCondition); c.Status != metav1.ConditionTrue || l.Status.Phase != v1alpha1.LinkActive {
		t.Fatalf("Ready = %+v, phase %q", c, l.Status.Phase)
	}
	exp := l.CreationTimestamp.Add(time.Hour)
	if !l.Status.ExpiresAt.Time.Equal(exp) {
		t.Errorf("status.expiresAt = %s, want %s", l.Status.ExpiresAt, exp)
	}
	// The first reconcile asks to come back at the expiry instant.
	if res.RequeueAfter < 54*time.Minute || res.RequeueAfter > 66*time.Minute {
		t.Errorf("requeue after %s, want the expiry (1h, jittered)", res.RequeueAfter)
	}
	data := f.share(t, key)
	short, long := string(data[linktoken.ShareShortToken]), string(data[linktoken.ShareLongToken])
	if !linktoken.ValidShort(short) || !strings.HasPrefix(long, "v1.") {
		t.Fatalf("share Secret holds short %q, long %q", short, long)
	}
	if got := string(data[linktoken.ShareURL]); got != "https://hooks.example.com/r/"+short {
		t.Errorf("share_url = %q", got)
	}
	obj, ok := f.tokenObject(t, short)
	if !ok || string(obj.Data[linktoken.DataLongToken]) != long || obj.Labels[linktoken.LinkUIDLabel] != string(l.UID) {
		t.Fatalf("short-token object = %+v", obj)
	}
	// It carries the credentials the webhook presigns with (the webhook
	// reads no Secret of the link's namespace), labelled for its cache.
	if string(obj.Data[linktoken.DataAccessKeyID]) != s3.Credentials.AccessKeyID || string(obj.Data[linktoken.DataSecretAccessKey]) != s3.Credentials.SecretAccessKey ||
		obj.Labels[v1alpha1.ManagedByLabel] != v1alpha1.ManagedByValue {
		t.Errorf("the short-token object does not carry the link's credentials, labelled managed-by: labels %v", obj.Labels)
	}
	// The long token seals this link, under the key id status shows.
	var keys corev1.Secret
	if err := env.Client.Get(context.Background(), f.r.DefaultKeys, &keys); err != nil {
		t.Fatalf("the default key Secret was not created: %v", err)
	}
	kr, err := linktoken.KeyringFrom(&keys)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := linktoken.Open(kr, l.Status.KeyID, long)
	if err != nil || claims.UID != l.UID || claims.Key != l.Spec.Blob.Key || !claims.ExpiresAt.Equal(exp) {
		t.Fatalf("claims = %+v, %v", claims, err)
	}
	if l.Status.KeyID != kr.Current {
		t.Errorf("status.keyID = %q, want %q", l.Status.KeyID, kr.Current)
	}
	raw, _ := json.Marshal(l)
	for _, secret := range []string{short, long} {
		if strings.Contains(string(raw), secret) {
			t.Fatal("a token is in the link")
		}
	}
	for _, e := range f.rec.All() {
		if strings.Contains(e, short) || strings.Contains(e, long) {
			t.Fatal("a token is in an Event")
		}
	}
}

func TestAMissingBlobStallsAndIsLookedAtAgainSlowly(t *testing.T) {
	f := newFixture(t, nil)
	key := f.link(t, "nothing", "user_prize/"+f.ns+"/never-uploaded.zip", nil)
	res := f.reconcile(t, key)
	l := get(t, key)
	if c := condition(l, v1alpha1.StalledCondition); c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.BlobNotFoundReason {
		t.Fatalf("Stalled = %+v", c)
	}
	if res.RequeueAfter < 4*time.Minute || res.RequeueAfter > 6*time.Minute {
		t.Errorf("recheck after %s, want about 5m", res.RequeueAfter)
	}
	if l.Status.ShareSecretName != "" {
		t.Error("a link without its blob was minted")
	}
	// Uploaded later: the next look mints it.
	f.upload(t, "never-uploaded.zip")
	f.reconcile(t, key)
	if c := condition(get(t, key), v1alpha1.ReadyCondition); c.Status != metav1.ConditionTrue {
		t.Fatalf("after the upload Ready = %+v", c)
	}
}

func TestFiveCollisionsInARowStall(t *testing.T) {
	taken := linktoken.NewShort()
	f := newFixture(t, func(r *receivelink.Reconciler) { r.NewShort = func() string { return taken } })
	first := f.link(t, "first", f.upload(t, "a.zip"), nil)
	f.reconcile(t, first) // takes the token
	tries := 0
	f.r.NewShort = func() string { tries++; return taken }
	second := f.link(t, "second", f.upload(t, "b.zip"), nil)
	f.reconcile(t, second)
	l := get(t, second)
	if c := condition(l, v1alpha1.StalledCondition); c.Reason != v1alpha1.TokenCollisionReason || tries != receivelink.MintTries {
		t.Fatalf("Stalled = %+v after %d tries", c, tries)
	}
	// The fourth try of the next reconcile is free: minted.
	tries = 0
	f.r.NewShort = func() string {
		tries++
		if tries == 4 {
			return linktoken.NewShort()
		}
		return taken
	}
	f.reconcile(t, second)
	if c := condition(get(t, second), v1alpha1.ReadyCondition); c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v", c)
	}
	if obj, _ := f.tokenObject(t, taken); obj.Labels[linktoken.LinkUIDLabel] != string(get(t, first).UID) {
		t.Error("the taken token was handed to the second link")
	}
}

func TestExpiryDeletesTheBlobAndTokensOnTheSecondThenTheLinkAfterRetention(t *testing.T) {
	f := newFixture(t, nil)
	blobKey := f.upload(t, "prize.zip")
	key := f.link(t, "prize", blobKey, func(l *v1alpha1.ReceiveLink) { l.Spec.Retention = metav1.Duration{Duration: 24 * time.Hour} })
	f.reconcile(t, key)
	short := string(f.share(t, key)[linktoken.ShareShortToken])
	exp := get(t, key).Status.ExpiresAt.Time

	f.clock.SetTime(exp.Add(-time.Millisecond))
	f.reconcile(t, key)
	if !f.exists(t, blobKey) || get(t, key).Status.Phase != v1alpha1.LinkActive {
		t.Fatal("the link expired a millisecond early")
	}

	f.clock.SetTime(exp)
	res := f.reconcile(t, key)
	l := get(t, key)
	if f.exists(t, blobKey) {
		t.Error("versitygw still has the blob after expiry")
	}
	if l.Status.Phase != v1alpha1.LinkExpired || l.Status.BlobDeletedAt == nil || condition(l, v1alpha1.ReadyCondition).Reason != v1alpha1.ExpiredReason {
		t.Fatalf("status = %+v", l.Status)
	}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "prize-share"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("share Secret after expiry: %v", err)
	}
	obj, ok := f.tokenObject(t, short)
	if !ok || len(obj.Data[linktoken.DataLongToken]) != 0 || string(obj.Data[linktoken.DataBlobDeleted]) != "true" {
		t.Fatalf("short-token object after expiry = %+v (want a tombstone without the long token)", obj)
	}
	for _, k := range []string{linktoken.DataAccessKeyID, linktoken.DataSecretAccessKey, linktoken.DataKeyID} {
		if _, held := obj.Data[k]; held {
			t.Errorf("the tombstone still holds %s: no credential of an expired link stays in the link namespace", k)
		}
	}
	if len(f.rec.With(v1alpha1.ExpiredReason)) != 1 {
		t.Errorf("Expired events = %v", f.rec.All())
	}
	if res.RequeueAfter < 21*time.Hour || res.RequeueAfter > 27*time.Hour {
		t.Errorf("requeue after %s, want the retention (24h)", res.RequeueAfter)
	}
	// Expiry again changes nothing and sends no second Event.
	f.reconcile(t, key)
	if len(f.rec.With(v1alpha1.ExpiredReason)) != 1 {
		t.Errorf("a second Expired Event: %v", f.rec.All())
	}

	f.clock.SetTime(exp.Add(24 * time.Hour))
	f.reconcile(t, key) // deletes the link; the finalizer keeps it a moment
	f.reconcile(t, key) // releases the finalizer
	if err := env.Client.Get(context.Background(), key, &v1alpha1.ReceiveLink{}); !apierrors.IsNotFound(err) {
		t.Fatalf("link after retention: %v", err)
	}
	if _, ok := f.tokenObject(t, short); ok {
		t.Error("the tombstone outlived its link")
	}
}

func TestAnExpiryPastFourteenDaysStalls(t *testing.T) {
	f := newFixture(t, nil)
	key := f.link(t, "far", f.upload(t, "far.zip"), func(l *v1alpha1.ReceiveLink) {
		l.Spec.TTL = nil
		l.Spec.ExpiresAt = &metav1.Time{Time: time.Now().Add(15 * 24 * time.Hour)}
	})
	f.reconcile(t, key)
	if c := condition(get(t, key), v1alpha1.StalledCondition); c.Reason != v1alpha1.ExpiryTooFarReason {
		t.Fatalf("Stalled = %+v", c)
	}
}

func TestRotatedKeysSealNewLinksWhileOldOnesStillOpen(t *testing.T) {
	f := newFixture(t, nil)
	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "my-keys"}, Data: linktoken.NewKeyData("2026-11")}
	if err := env.Client.Create(context.Background(), keys); err != nil {
		t.Fatal(err)
	}
	ref := func(l *v1alpha1.ReceiveLink) {
		l.Spec.EncryptionKeySecretRef = &v1alpha1.SecretReference{Name: "my-keys"}
	}
	old := f.link(t, "old", f.upload(t, "old.zip"), ref)
	f.reconcile(t, old)
	if obj, _ := f.tokenObject(t, string(f.share(t, old)[linktoken.ShareShortToken])); string(obj.Data[linktoken.DataKeySecret]) != "my-keys" {
		t.Errorf("the short-token object names key Secret %q, want my-keys", obj.Data[linktoken.DataKeySecret])
	}
	if m := f.mirror(t, "my-keys"); m == nil || !maps.EqualFunc(m.Data, keys.Data, bytes.Equal) {
		t.Fatal("the key Secret is not mirrored into the link namespace")
	}

	// Rotation: a new key becomes current; the old one is kept. The mint
	// that seals with it mirrors it first (the webhook reads the mirror).
	for k, v := range linktoken.NewKeyData("2026-12") {
		keys.Data[k] = v
	}
	if err := env.Client.Update(context.Background(), keys); err != nil {
		t.Fatal(err)
	}
	fresh := f.link(t, "new", f.upload(t, "new.zip"), ref)
	f.reconcile(t, fresh)
	if a, b := get(t, old).Status.KeyID, get(t, fresh).Status.KeyID; a != "2026-11" || b != "2026-12" {
		t.Fatalf("key ids = %q, %q", a, b)
	}
	kr, err := linktoken.KeyringFrom(f.mirror(t, "my-keys"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []types.NamespacedName{old, fresh} {
		if _, err := linktoken.Open(kr, get(t, key).Status.KeyID, string(f.share(t, key)[linktoken.ShareLongToken])); err != nil {
			t.Errorf("%s does not open with the mirror after the rotation: %v", key.Name, err)
		}
	}
	// A key Secret without its current key stalls a new link.
	keys.Data[linktoken.KeyCurrent] = []byte("gone")
	if err := env.Client.Update(context.Background(), keys); err != nil {
		t.Fatal(err)
	}
	broken := f.link(t, "broken", f.upload(t, "broken.zip"), ref)
	f.reconcile(t, broken)
	if c := condition(get(t, broken), v1alpha1.StalledCondition); c.Reason != v1alpha1.KeysInvalidReason {
		t.Fatalf("Stalled = %+v", c)
	}
}

func TestDeletingALiveLinkFollowsItsDeletionPolicy(t *testing.T) {
	f := newFixture(t, nil)
	for _, policy := range []v1alpha1.DeletionPolicy{v1alpha1.DeletionPolicyDelete, v1alpha1.DeletionPolicyRetain} {
		name := strings.ToLower(string(policy))
		blobKey := f.upload(t, name+".zip")
		key := f.link(t, name, blobKey, func(l *v1alpha1.ReceiveLink) { l.Spec.DeletionPolicy = policy })
		f.reconcile(t, key)
		short := string(f.share(t, key)[linktoken.ShareShortToken])
		if err := env.Client.Delete(context.Background(), get(t, key)); err != nil {
			t.Fatal(err)
		}
		f.reconcile(t, key)
		if err := env.Client.Get(context.Background(), key, &v1alpha1.ReceiveLink{}); !apierrors.IsNotFound(err) {
			t.Fatalf("%s: link after delete: %v", policy, err)
		}
		if kept := f.exists(t, blobKey); kept != (policy == v1alpha1.DeletionPolicyRetain) {
			t.Errorf("%s: blob kept = %v", policy, kept)
		}
		if _, ok := f.tokenObject(t, short); ok {
			t.Errorf("%s: the short-token object outlived its link", policy)
		}
	}
}

func TestBlobDeletesAreRateBounded(t *testing.T) {
	// One delete every 10 s: the second link due at the same instant gives
	// its worker back and comes again, its blob still there.
	f := newFixture(t, func(r *receivelink.Reconciler) { r.Deletes = rate.NewLimiter(0.1, 1) })
	a, b := f.upload(t, "a.zip"), f.upload(t, "b.zip")
	ka := f.link(t, "a", a, func(l *v1alpha1.ReceiveLink) { l.Spec.TTL = &metav1.Duration{Duration: time.Minute} })
	kb := f.link(t, "b", b, func(l *v1alpha1.ReceiveLink) { l.Spec.TTL = &metav1.Duration{Duration: time.Minute} })
	f.reconcile(t, ka)
	f.reconcile(t, kb)
	f.clock.SetTime(get(t, kb).Status.ExpiresAt.Add(time.Second))
	f.reconcile(t, ka)
	res := f.reconcile(t, kb)
	if f.exists(t, a) || !f.exists(t, b) {
		t.Fatalf("blob a exists %v, b exists %v: want a deleted, b waiting", f.exists(t, a), f.exists(t, b))
	}
	if res.RequeueAfter < 8*time.Second || res.RequeueAfter > 12*time.Second {
		t.Errorf("b waits %s, want about 10s", res.RequeueAfter)
	}
}

func TestTheSweepCleansWhatACrashLeftBehind(t *testing.T) {
	f := newFixture(t, nil)
	orphanBlob := f.upload(t, "orphan.zip")
	key := f.link(t, "orphan", orphanBlob, nil)
	f.reconcile(t, key)
	short := string(f.share(t, key)[linktoken.ShareShortToken])
	// The link goes without its finalizer running (a forced deletion).
	l := get(t, key)
	l.Finalizers = nil
	if err := env.Client.Update(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	// A live link past its expiry that the controller has not seen, and
	// one still live.
	live := f.link(t, "live", f.upload(t, "live.zip"), func(l *v1alpha1.ReceiveLink) { l.Spec.TTL = &metav1.Duration{Duration: 5 * time.Hour} })
	f.reconcile(t, live)
	overdue := f.link(t, "overdue", f.upload(t, "overdue.zip"), nil)
	f.reconcile(t, overdue)
	f.clock.Step(2 * time.Hour)

	reg := prometheus.NewRegistry()
	var lines []string
	logger := funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) }, funcr.Options{})
	sw := &receivelink.Sweeper{Client: env.Client, APIReader: env.Client, Reconciler: f.r, Namespace: f.opns, Clock: f.clock, Batch: 1, Registerer: reg}
	res, err := sw.Sweep(log.IntoContext(context.Background(), logger))
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 1 || res.MissingMeta != 1 || res.Errors != 0 || res.Overdue < 1 {
		t.Fatalf("sweep = %+v, want deleted 1, missingMeta 1, overdue ≥ 1 (other tests' links may be overdue too), errors 0", res)
	}
	// The counts are metrics, and the sweep's one log line.
	metrics, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range metrics {
		for _, m := range mf.GetMetric() {
			if mf.GetName() == "switchboard_receivelink_sweep_total" {
				got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	if got["deleted"] != 1 || got["missing_meta"] != 1 || got["errors"] != 0 || got["overdue"] != float64(res.Overdue) {
		t.Errorf("sweep metrics %v, want deleted 1, missing_meta 1, errors 0, overdue %d", got, res.Overdue)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `"msg"="sweep done"`) || !strings.Contains(lines[0], `"missingMeta"=1`) || strings.Contains(lines[0], short) {
		t.Errorf("the sweep logged %q, want one line with its counts and no token", lines)
	}
	if f.exists(t, orphanBlob) {
		t.Error("the orphan's blob is still in versitygw")
	}
	if _, ok := f.tokenObject(t, short); ok {
		t.Error("the orphan's short-token object is still there")
	}
	handed := map[string]bool{}
	for len(f.r.Overdue) > 0 {
		ev := <-f.r.Overdue
		if ev.Object.GetNamespace() == f.ns {
			handed[ev.Object.GetName()] = true
		}
	}
	if !handed["overdue"] || handed["live"] {
		t.Errorf("handed to the controller: %v, want overdue only", handed)
	}
	if !f.exists(t, "user_prize/"+f.ns+"/live.zip") {
		t.Error("the sweep deleted a live link's blob")
	}
}

// shardCache is the cache of a manager whose --watch-label-selector does
// not take the links: it holds none.
type shardCache struct{ client.Client }

func (c shardCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*v1alpha1.ReceiveLink); ok {
		return apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource("receivelinks").GroupResource(), key.Name)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// Every shard sweeps the link namespace, which all links share: a shard
// whose cache lacks a link asks the API server before calling its
// short-token object an orphan, and hands to its controller only its own
// overdue links.
func TestAShardsSweepLeavesAnotherShardsLinks(t *testing.T) {
	f := newFixture(t, nil)
	blob := f.upload(t, "theirs.zip")
	key := f.link(t, "theirs", blob, nil) // unlabelled: the main manager's
	f.reconcile(t, key)
	short := string(f.share(t, key)[linktoken.ShareShortToken])
	f.clock.Step(2 * time.Hour) // past its expiry: overdue
	sw := &receivelink.Sweeper{Client: shardCache{env.Client}, APIReader: env.Client, Reconciler: f.r, Namespace: f.opns, Clock: f.clock,
		Shard: labels.SelectorFromSet(labels.Set{v1alpha1.ShardLabel: "shard1"})}
	if _, err := sw.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !f.exists(t, blob) {
		t.Error("shard1's sweep deleted the main manager's link's blob")
	}
	if _, ok := f.tokenObject(t, short); !ok {
		t.Error("shard1's sweep deleted the main manager's link's short-token object")
	}
	for len(f.r.Overdue) > 0 {
		if ev := <-f.r.Overdue; ev.Object.GetNamespace() == f.ns {
			t.Errorf("shard1's sweep handed %s to its controller", ev.Object.GetName())
		}
	}
}

func TestRefreshFollowsRotatedAndDeletedSources(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "my-keys"}, Data: linktoken.NewKeyData("k1")}
	if err := env.Client.Create(ctx, keys); err != nil {
		t.Fatal(err)
	}
	key := f.link(t, "prize", f.upload(t, "prize.zip"), func(l *v1alpha1.ReceiveLink) {
		l.Spec.EncryptionKeySecretRef = &v1alpha1.SecretReference{Name: "my-keys"}
	})
	f.reconcile(t, key)
	short := string(f.share(t, key)[linktoken.ShareShortToken])
	sw := &receivelink.Sweeper{Client: env.Client, APIReader: env.Client, Reconciler: f.r, Namespace: f.opns, Clock: f.clock}
	if res, err := sw.Refresh(ctx); err != nil || res != (receivelink.MirrorResult{}) {
		t.Fatalf("a refresh with nothing rotated = %+v, %v; want no change", res, err)
	}

	// The credentials and the keys are rotated.
	var creds corev1.Secret
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: f.ns, Name: "blob-credentials"}, &creds); err != nil {
		t.Fatal(err)
	}
	creds.Data[blob.KeySecretAccessKey] = []byte("rotated-secret-key")
	if err := env.Client.Update(ctx, &creds); err != nil {
		t.Fatal(err)
	}
	for k, v := range linktoken.NewKeyData("k2") {
		keys.Data[k] = v
	}
	if err := env.Client.Update(ctx, keys); err != nil {
		t.Fatal(err)
	}
	if res, err := sw.Refresh(ctx); err != nil || res.Updated != 2 || res.Errors != 0 {
		t.Fatalf("refresh = %+v, %v; want the credentials and the mirror updated", res, err)
	}
	if obj, _ := f.tokenObject(t, short); string(obj.Data[linktoken.DataSecretAccessKey]) != "rotated-secret-key" {
		t.Error("the short-token object still holds the old credentials")
	}
	if m := f.mirror(t, "my-keys"); m == nil || string(m.Data[linktoken.KeyCurrent]) != "k2" || len(m.Data["k1"]) == 0 {
		t.Error("the mirror does not hold the rotated keys")
	}

	// The sources are deleted: the copies go with them.
	for _, name := range []string{"blob-credentials", "my-keys"} {
		if err := env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := sw.Refresh(ctx); err != nil || res.Removed != 2 || res.Errors != 0 {
		t.Fatalf("refresh = %+v, %v; want the credentials and the mirror removed", res, err)
	}
	obj, _ := f.tokenObject(t, short)
	if _, held := obj.Data[linktoken.DataSecretAccessKey]; held || len(obj.Data[linktoken.DataLongToken]) == 0 {
		t.Error("the short-token object keeps credentials whose Secret is gone (or lost its long token)")
	}
	if f.mirror(t, "my-keys") != nil {
		t.Error("the mirror of a deleted key Secret is still there")
	}
}

func TestTheSweepDeletesAMirrorNoLiveLinkUsesInTwoSweeps(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "my-keys"}, Data: linktoken.NewKeyData("k1")}); err != nil {
		t.Fatal(err)
	}
	ref := func(l *v1alpha1.ReceiveLink) {
		l.Spec.EncryptionKeySecretRef = &v1alpha1.SecretReference{Name: "my-keys"}
	}
	key := f.link(t, "prize", f.upload(t, "prize.zip"), ref)
	f.reconcile(t, key)
	sw := &receivelink.Sweeper{Client: env.Client, APIReader: env.Client, Reconciler: f.r, Namespace: f.opns, Clock: f.clock}
	if res, err := sw.Sweep(ctx); err != nil || res.UnusedMirrors != 0 || f.mirror(t, "my-keys").Annotations[linktoken.UnusedSinceAnnotation] != "" {
		t.Fatalf("sweep of a live link's mirror = %+v, %v; want it kept, unmarked", res, err)
	}

	// The link expires: its tombstone needs no key.
	f.clock.SetTime(get(t, key).Status.ExpiresAt.Time)
	f.reconcile(t, key)
	if res, err := sw.Sweep(ctx); err != nil || res.UnusedMirrors != 0 || f.mirror(t, "my-keys").Annotations[linktoken.UnusedSinceAnnotation] == "" {
		t.Fatalf("first sweep after expiry = %+v, %v; want the mirror marked unused, kept", res, err)
	}
	// A new link sealed with the keys between two sweeps keeps the mirror.
	again := f.link(t, "again", f.upload(t, "again.zip"), ref)
	f.reconcile(t, again)
	if res, err := sw.Sweep(ctx); err != nil || res.UnusedMirrors != 0 || f.mirror(t, "my-keys") == nil {
		t.Fatalf("sweep after a new mint = %+v, %v; want the mirror kept", res, err)
	}
	f.clock.SetTime(get(t, again).Status.ExpiresAt.Time)
	f.reconcile(t, again)
	for i, want := range []int{0, 1} {
		if res, err := sw.Sweep(ctx); err != nil || res.UnusedMirrors != want {
			t.Fatalf("sweep %d after the last expiry = %+v, %v; want %d mirrors deleted", i+1, res, err, want)
		}
	}
	if f.mirror(t, "my-keys") != nil {
		t.Error("the unused mirror is still there after two sweeps")
	}
}

// Issue 18 item 14: a typo in spec.expiresAt (already past at creation)
// must not destroy the file. A link that never served it deletes nothing,
// at expiry, after its retention, or when a person deletes it; status says
// why it is expired.
func TestALinkThatWasNeverLiveKeepsItsBlob(t *testing.T) {
	f := newFixture(t, nil)
	t.Run("an expiresAt already past at creation expires the link and keeps the blob", func(t *testing.T) {
		blobKey := f.upload(t, "typo.zip")
		key := f.link(t, "typo", blobKey, func(l *v1alpha1.ReceiveLink) {
			l.Spec.TTL = nil
			l.Spec.ExpiresAt = &metav1.Time{Time: time.Now().Add(-24 * time.Hour).Truncate(time.Second)}
			l.Spec.Retention = metav1.Duration{Duration: time.Hour}
		})
		f.reconcile(t, key)
		l := get(t, key)
		if !f.exists(t, blobKey) {
			t.Fatal("the blob of a link that was never live was deleted")
		}
		ready := condition(l, v1alpha1.ReadyCondition)
		if l.Status.Phase != v1alpha1.LinkExpired || l.Status.BlobDeletedAt != nil || ready.Status != metav1.ConditionFalse ||
			ready.Reason != v1alpha1.NeverLiveReason || !strings.Contains(ready.Message, "already past") || !strings.Contains(ready.Message, "kept") {
			t.Fatalf("status = %+v", l.Status)
		}
		if l.Status.ShareSecretName != "" {
			t.Error("a link that expired before it was live was minted")
		}
		if ev := f.rec.With(v1alpha1.NeverLiveReason); len(ev) != 1 || !strings.HasPrefix(ev[0], corev1.EventTypeWarning) {
			t.Errorf("NeverLive events = %v", f.rec.All())
		}
		// It is kept for its retention, counted from its creation (the
		// expiry was already past then), so a person can read why; then
		// the link goes and the blob stays.
		f.clock.SetTime(l.CreationTimestamp.Add(30 * time.Minute))
		if res := f.reconcile(t, key); res.RequeueAfter < 25*time.Minute || res.RequeueAfter > 35*time.Minute {
			t.Errorf("requeue after %s, want the rest of the retention (30m)", res.RequeueAfter)
		}
		if get(t, key).Status.Phase != v1alpha1.LinkExpired || len(f.rec.With(v1alpha1.NeverLiveReason)) != 1 {
			t.Fatal("a second reconcile changed the Expired status or sent a second Event")
		}
		f.clock.SetTime(l.CreationTimestamp.Add(2 * time.Hour))
		f.reconcile(t, key)
		f.reconcile(t, key)
		if err := env.Client.Get(context.Background(), key, &v1alpha1.ReceiveLink{}); !apierrors.IsNotFound(err) {
			t.Fatalf("link after retention: %v", err)
		}
		if !f.exists(t, blobKey) {
			t.Fatal("deleting the never-live link after its retention deleted the blob")
		}
	})
	t.Run("deleteBlobIfNeverLive deletes it at expiry all the same", func(t *testing.T) {
		blobKey := f.upload(t, "opt-in.zip")
		key := f.link(t, "opt-in", blobKey, func(l *v1alpha1.ReceiveLink) {
			l.Spec.TTL = nil
			l.Spec.ExpiresAt = &metav1.Time{Time: time.Now().Add(-time.Hour).Truncate(time.Second)}
			l.Spec.DeleteBlobIfNeverLive = true
		})
		f.reconcile(t, key)
		l := get(t, key)
		if f.exists(t, blobKey) || l.Status.BlobDeletedAt == nil || condition(l, v1alpha1.ReadyCondition).Reason != v1alpha1.ExpiredReason {
			t.Fatalf("blob exists %v, status %+v", f.exists(t, blobKey), l.Status)
		}
	})
	t.Run("deleting a link that never became live keeps the blob", func(t *testing.T) {
		blobKey := f.upload(t, "stuck.zip")
		key := f.link(t, "stuck", blobKey, func(l *v1alpha1.ReceiveLink) {
			l.Spec.EncryptionKeySecretRef = &v1alpha1.SecretReference{Name: "no-such-keys"}
		})
		f.reconcile(t, key)
		if c := condition(get(t, key), v1alpha1.StalledCondition); c.Reason != v1alpha1.KeysInvalidReason {
			t.Fatalf("Stalled = %+v", c)
		}
		if err := env.Client.Delete(context.Background(), get(t, key)); err != nil {
			t.Fatal(err)
		}
		f.reconcile(t, key)
		if err := env.Client.Get(context.Background(), key, &v1alpha1.ReceiveLink{}); !apierrors.IsNotFound(err) {
			t.Fatalf("link after delete: %v", err)
		}
		if !f.exists(t, blobKey) {
			t.Fatal("deleting a link that was never live deleted its blob")
		}
	})
}
