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

package receive_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/controller/receivelink"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// Issue 35 §3 for ReceiveLink: what receivers hold — the short link —
// survives a restore as Velero makes it, until the link's original expiry,
// and no blob is deleted early or twice; a GitOps delete and re-apply
// makes a new link, as docs/receivelink.md says.

// s3Proxy stands between versitygw and the manager (and the sweep these
// tests drive), and counts the DELETE requests of each object key: how
// many times each blob was deleted, by whichever of them.
type s3Proxy struct {
	*httptest.Server
	mu      sync.Mutex
	deletes map[string]int
}

func (p *s3Proxy) count(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.deletes[key]
}

var (
	proxyOnce sync.Once
	proxy     *s3Proxy
	// proxied: the manager running now reaches S3 through proxy.
	proxied bool
)

// s3Counter returns the proxy, started on first use. SigV4 signs the Host
// header, which the reverse proxy passes on unchanged, so versitygw checks
// the signatures as the clients made them.
func s3Counter(t *testing.T) *s3Proxy {
	t.Helper()
	proxyOnce.Do(func() {
		target, err := url.Parse(s3.Endpoint)
		if err != nil {
			panic(err)
		}
		rp := httputil.NewSingleHostReverseProxy(target)
		p := &s3Proxy{deletes: map[string]int{}}
		p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodDelete {
				p.mu.Lock()
				p.deletes[strings.TrimPrefix(r.URL.Path, "/"+bucket+"/")]++
				p.mu.Unlock()
			}
			rp.ServeHTTP(w, r)
		}))
		proxy = p
	})
	return proxy
}

// restartManager stops the manager, runs outage while none runs, and
// starts a new one that reaches S3 through the counting proxy, even when
// outage fails the test (the tests after it need a manager).
func restartManager(t *testing.T, outage func()) *s3Proxy {
	t.Helper()
	p := s3Counter(t)
	stopMgr()
	defer func() {
		if err := startManager(env, p.URL); err != nil {
			t.Fatal(err)
		}
		proxied = true
	}()
	if outage != nil {
		outage()
	}
	return p
}

// sweepAfterGrace runs the ReceiveLink sweep once, directly (the manager's
// runs every 10 minutes), at a time past its grace for objects a restore
// just created, so that it judges them; it deletes blobs through the
// proxy.
func sweepAfterGrace(t *testing.T, p *s3Proxy) receivelink.SweepResult {
	t.Helper()
	bc, err := blob.New(blob.Options{Endpoint: p.URL, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	sw := &receivelink.Sweeper{Client: env.Client, APIReader: env.Client, Namespace: opns,
		Reconciler: &receivelink.Reconciler{Blobs: bc, Deletes: rate.NewLimiter(rate.Inf, 1), Overdue: make(chan event.GenericEvent, 4096)},
		Clock:      clocktesting.NewFakeClock(time.Now().Add(receivelink.DefaultOrphanGrace + time.Hour))}
	res, err := sw.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// pastCreationSecond waits until the API server's clock has passed the
// second l was created in: a link created again now gets another
// creationTimestamp, so an expiry counted from it would differ.
func pastCreationSecond(t *testing.T, l *v1alpha1.ReceiveLink) {
	t.Helper()
	testenv.EventuallyWithin(t, 10*time.Second, "a second since the link was created", func() bool {
		return time.Since(l.CreationTimestamp.Time) >= 1100*time.Millisecond
	})
}

func secret(ns, name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func shareData(t *testing.T, l *v1alpha1.ReceiveLink) map[string][]byte {
	t.Helper()
	sec := secret(l.Namespace, l.Name+"-share")
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(sec), sec); err != nil {
		t.Fatal(err)
	}
	return sec.Data
}

// resolvesUntil checks, on the webhook's clock, that short resolves a
// millisecond before exp and answers 410 from exp on.
func resolvesUntil(t *testing.T, c *http.Client, short string, exp time.Time) {
	t.Helper()
	clk := clocktesting.NewFakeClock(exp.Add(-time.Millisecond))
	hookNow.Store(clk)
	defer hookNow.Store(nil)
	if resp, body := get(t, c, hookURL+"/r/"+short); resp.StatusCode != http.StatusFound {
		t.Errorf("a millisecond before the original expiry %s: %d %s", exp, resp.StatusCode, body)
	}
	clk.SetTime(exp)
	if resp, body := get(t, c, hookURL+"/r/"+short); resp.StatusCode != http.StatusGone {
		t.Errorf("at the original expiry %s: %d %s, want 410", exp, resp.StatusCode, body)
	}
}

// A restore with work in flight: two live links, the manager stopped, the
// cluster lost and restored as Velero does. Link a's short-token object is
// in the backup (the operator's namespace was backed up too); link b's is
// lost and not restored (only the links' namespace was). Receivers hold
// both short links.
func TestAVeleroRestoreKeepsTheLinksReceiversHoldUntilTheirOriginalExpiry(t *testing.T) {
	ctx := context.Background()
	ns, _ := env.Namespace("rcv")
	c := noRedirects(t)
	la, shortA := share(t, ns, "a", "the bytes of a", nil)
	lb, shortB := share(t, ns, "b", "the bytes of b", nil)
	links := []struct {
		l     *v1alpha1.ReceiveLink
		short string
		body  string
	}{{la, shortA, "the bytes of a"}, {lb, shortB, "the bytes of b"}}
	for _, k := range links {
		if resp := resolveWhenCached(t, c, k.short); resp.StatusCode != http.StatusFound {
			t.Fatalf("%s before the restore: %d", k.l.Name, resp.StatusCode)
		}
	}

	p := restartManager(t, func() {
		pastCreationSecond(t, lb)
		kept, err := testenv.TakeBackup(ctx, env.Client, secret(ns, "a-s3"), secret(ns, "a-share"), secret(opns, linktoken.ObjectName(shortA)), la,
			secret(ns, "b-s3"), secret(ns, "b-share"), lb)
		if err != nil {
			t.Fatal(err)
		}
		lost, err := testenv.TakeBackup(ctx, env.Client, secret(opns, linktoken.ObjectName(shortB)))
		if err != nil {
			t.Fatal(err)
		}
		if err := kept.Lose(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := lost.Lose(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := kept.Restore(ctx); err != nil {
			t.Fatal(err)
		}
		// The first sweep after the restore, before any controller
		// ran: a's object names a's old UID.
		if res := sweepAfterGrace(t, s3Counter(t)); res.Deleted != 0 || res.MissingMeta != 0 {
			t.Errorf("the sweep right after the restore = %+v, want nothing deleted", res)
		}
	})

	for _, k := range links {
		key, exp := client.ObjectKeyFromObject(k.l), k.l.Status.ExpiresAt.Time
		var now v1alpha1.ReceiveLink
		testenv.EventuallyReport(t, time.Minute, k.l.Name+" Ready again, with no one's help", func() (bool, string) {
			if err := env.Client.Get(ctx, key, &now); err != nil {
				return false, err.Error()
			}
			return status.IsTrue(&now, v1alpha1.ReadyCondition) && now.Status.ObservedGeneration == now.Generation, fmt.Sprintf("%+v", now.Status.Conditions)
		})
		if now.UID == k.l.UID || !now.CreationTimestamp.After(k.l.CreationTimestamp.Time) {
			t.Fatalf("%s was not re-created by the restore", k.l.Name)
		}
		if now.Status.ExpiresAt == nil || !now.Status.ExpiresAt.Time.Equal(exp) {
			t.Errorf("%s expires at %v, want the original %s (not the restore + ttl)", k.l.Name, now.Status.ExpiresAt, exp)
		}
		if got := string(shareData(t, &now)[linktoken.ShareShortToken]); got != k.short {
			t.Errorf("%s has a new short token: the link receivers hold is dead", k.l.Name)
		}
		resp := resolveWhenCached(t, c, k.short)
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("%s after the restore: %d", k.l.Name, resp.StatusCode)
		}
		if dl, body := get(t, http.DefaultClient, resp.Header.Get("Location")); dl.StatusCode != http.StatusOK || body != k.body {
			t.Errorf("%s's download after the restore = %d %q", k.l.Name, dl.StatusCode, body)
		}
		resolvesUntil(t, c, k.short, exp)
	}

	if res := sweepAfterGrace(t, p); res.Deleted != 0 || res.MissingMeta != 0 {
		t.Errorf("the sweep once the links were Ready = %+v, want nothing deleted", res)
	}
	for _, k := range links {
		if n := p.count(k.l.Spec.Blob.Key); n != 0 {
			t.Errorf("%s's blob was deleted %d times while the link is live", k.l.Name, n)
		}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: opns, Name: linktoken.ObjectName(k.short)}, &corev1.Secret{}); err != nil {
			t.Errorf("%s's short-token object: %v", k.l.Name, err)
		}
	}
}

// A GitOps delete and re-apply, with the manager running: the delete is a
// delete (the finalizer revokes the link and, under deletionPolicy Delete,
// deletes its blob once); the manifest applied again is a new link, with a
// new short link and an expiry counted from its own creation.
func TestAGitOpsReapplyMakesANewLink(t *testing.T) {
	p := s3Counter(t)
	if !proxied {
		restartManager(t, nil)
	}
	ns, _ := env.Namespace("rcv")
	c := noRedirects(t)
	for _, policy := range []v1alpha1.DeletionPolicy{v1alpha1.DeletionPolicyDelete, v1alpha1.DeletionPolicyRetain} {
		t.Run(string(policy), func(t *testing.T) {
			ctx := context.Background()
			name := strings.ToLower(string(policy))
			old, short := share(t, ns, name, "the bytes of "+name, func(l *v1alpha1.ReceiveLink) { l.Spec.DeletionPolicy = policy })
			resolveWhenCached(t, c, short)
			pastCreationSecond(t, old)
			manifest := &v1alpha1.ReceiveLink{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: *old.Spec.DeepCopy()}
			if err := testenv.Reapply(ctx, env.Client, manifest, time.Minute); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKeyFromObject(manifest)
			want := map[v1alpha1.DeletionPolicy]int{v1alpha1.DeletionPolicyDelete: 1, v1alpha1.DeletionPolicyRetain: 0}[policy]
			if n := p.count(old.Spec.Blob.Key); n != want {
				t.Errorf("the delete deleted the blob %d times, want %d under %s", n, want, policy)
			}
			testenv.EventuallyWithin(t, time.Minute, "the revoked short link answers 404", func() bool {
				resp, _ := get(t, c, hookURL+"/r/"+short)
				return resp.StatusCode == http.StatusNotFound
			})
			if policy == v1alpha1.DeletionPolicyDelete {
				// The file went with the link: the new link waits for it.
				testenv.EventuallyWithin(t, time.Minute, "the re-applied link Stalled on its missing blob", func() bool {
					var l v1alpha1.ReceiveLink
					return env.Client.Get(ctx, key, &l) == nil && status.Get(&l, v1alpha1.StalledCondition) != nil &&
						status.Get(&l, v1alpha1.StalledCondition).Reason == v1alpha1.BlobNotFoundReason
				})
				if err := s3.Blob.Put(ctx, s3.Object(bucket, old.Spec.Blob.Key), []byte("the bytes of "+name), "application/zip"); err != nil {
					t.Fatal(err)
				}
				l := &v1alpha1.ReceiveLink{}
				if err := env.Client.Get(ctx, key, l); err != nil {
					t.Fatal(err)
				}
				patch := client.MergeFrom(l.DeepCopy())
				metav1.SetMetaDataAnnotation(&l.ObjectMeta, v1alpha1.RequestedAtAnnotation, "after-upload")
				if err := env.Client.Patch(ctx, l, patch); err != nil {
					t.Fatal(err)
				}
			}
			var now v1alpha1.ReceiveLink
			testenv.EventuallyWithin(t, time.Minute, "the re-applied link Ready", func() bool {
				return env.Client.Get(ctx, key, &now) == nil && status.IsTrue(&now, v1alpha1.ReadyCondition) && now.Status.ShareSecretName != ""
			})
			newShort := string(shareData(t, &now)[linktoken.ShareShortToken])
			if newShort == short {
				t.Fatal("the re-applied link took the revoked short token back")
			}
			if exp := now.CreationTimestamp.Add(time.Hour); now.Status.ExpiresAt == nil || !now.Status.ExpiresAt.Time.Equal(exp) || exp.Equal(old.Status.ExpiresAt.Time) {
				t.Errorf("the re-applied link expires at %v, want its own creation + ttl %s (the old link's was %s)", now.Status.ExpiresAt, exp, old.Status.ExpiresAt)
			}
			if resp := resolveWhenCached(t, c, newShort); resp.StatusCode != http.StatusFound {
				t.Errorf("the new short link = %d", resp.StatusCode)
			}
			if resp, _ := get(t, c, hookURL+"/r/"+short); resp.StatusCode != http.StatusNotFound {
				t.Errorf("the revoked short link = %d, want 404", resp.StatusCode)
			}
			if n := p.count(old.Spec.Blob.Key); n != want {
				t.Errorf("the blob was deleted %d times in all, want %d", n, want)
			}
		})
	}
}
