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

package webhook

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
)

// linkNamespaceOnly is a client that reads Secrets only in one namespace,
// as the webhook's RBAC allows: any other Secret read fails Forbidden-like
// and is recorded, so a test can say none happened.
type linkNamespaceOnly struct {
	client.Client
	ns string

	mu      sync.Mutex
	outside []string
}

func (c *linkNamespaceOnly) refuse(what string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outside = append(c.outside, what)
	return fmt.Errorf("forbidden: %s is outside the link namespace %s", what, c.ns)
}

func (c *linkNamespaceOnly) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok && key.Namespace != c.ns {
		return c.refuse("get Secret " + key.String())
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *linkNamespaceOnly) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*corev1.SecretList); ok {
		lo := (&client.ListOptions{}).ApplyOptions(opts)
		if lo.Namespace != c.ns {
			return c.refuse("list Secrets in " + lo.Namespace)
		}
	}
	return c.Client.List(ctx, list, opts...)
}

func (c *linkNamespaceOnly) reads() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.outside...)
}

// linkFixture is one sealed link of the namespace "team" and what the
// manager publishes for it in the link namespace.
type linkFixture struct {
	opns, short string
	now         time.Time
	link        *v1alpha1.ReceiveLink
	obj         *corev1.Secret // the short-token object
	keys        *corev1.Secret // the key mirror, or the default keys
	defaultKeys types.NamespacedName
}

func newLinkFixture(t testing.TB, ownKeys bool) *linkFixture {
	t.Helper()
	f := &linkFixture{opns: "switchboard-system", short: "Ab3dE5gH9k", now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	f.defaultKeys = types.NamespacedName{Namespace: f.opns, Name: "link-keys"}
	exp := f.now.Add(time.Hour)
	f.link = &v1alpha1.ReceiveLink{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "prize", UID: "8d3b-uid"}}
	f.link.Spec.Blob = v1alpha1.BlobLocation{Bucket: "user-prize", Key: "a/賞品.zip", CredentialsSecretRef: v1alpha1.SecretReference{Name: "s3"}}
	f.link.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.NewTime(f.now)}}
	keySecret := ""
	f.keys = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.opns, Name: f.defaultKeys.Name}, Data: linktoken.NewKeyData("k1")}
	if ownKeys {
		keySecret = "team-keys"
		f.link.Spec.EncryptionKeySecretRef = &v1alpha1.SecretReference{Name: keySecret}
		f.keys.Name = linktoken.KeysMirrorName("team", keySecret)
	}
	kr, err := linktoken.KeyringFrom(f.keys)
	if err != nil {
		t.Fatal(err)
	}
	long, keyID, err := linktoken.Seal(kr, linktoken.Claims{Namespace: "team", Name: "prize", UID: f.link.UID, Bucket: "user-prize", Key: "a/賞品.zip", ExpiresAt: exp})
	if err != nil {
		t.Fatal(err)
	}
	f.obj = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.opns, Name: linktoken.ObjectName(f.short),
		Labels: map[string]string{linktoken.TokenLabel: "true", linktoken.LinkUIDLabel: string(f.link.UID)}},
		Data: map[string][]byte{linktoken.DataLongToken: []byte(long), linktoken.DataKeyID: []byte(keyID),
			linktoken.DataExpiresAt: []byte(exp.Format(time.RFC3339)), linktoken.DataNamespace: []byte("team"), linktoken.DataName: []byte("prize"),
			linktoken.DataKeySecret: []byte(keySecret), linktoken.DataAccessKeyID: []byte("AKIA"), linktoken.DataSecretAccessKey: []byte("secret")}}
	return f
}

// server serves the receive routes on a fake API holding objs, through a
// client that reads Secrets only in the link namespace.
func (f *linkFixture) server(t testing.TB, at time.Time, objs ...client.Object) (http.Handler, *linkNamespaceOnly) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := &linkNamespaceOnly{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(), ns: f.opns}
	deps := Deps{Client: c, APIReader: c, Log: logr.Discard(), Links: &Links{Namespace: f.opns, Cache: c, Blobs: signNothing{},
		DefaultKeys: f.defaultKeys, Clock: clocktesting.NewFakePassiveClock(at),
		Audit: &Auditor{Client: c, Reader: c, Log: logr.Discard()}}}
	s, err := NewServer(Options{Log: logr.Discard()}, deps, familyNamed("receive"))
	if err != nil {
		t.Fatal(err)
	}
	return s.Handler(), c
}

func TestResolveReadsOnlyTheLinkNamespace(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ownKeys bool
		change  func(f *linkFixture) []client.Object
		want    int
	}{
		{name: "a link with the default keys redirects", want: http.StatusFound},
		{name: "a link naming its own key Secret opens with its mirror", ownKeys: true, want: http.StatusFound},
		{name: "a link minted before the objects named their key Secret opens with the mirror of the link's", ownKeys: true, want: http.StatusFound,
			change: func(f *linkFixture) []client.Object { delete(f.obj.Data, linktoken.DataKeySecret); return nil }},
		{name: "a key mirror that is gone answers 404, like a key that is gone", ownKeys: true, want: http.StatusNotFound,
			change: func(f *linkFixture) []client.Object { f.keys = nil; return nil }},
		{name: "a mirror without the key the token names answers 404", ownKeys: true, want: http.StatusNotFound,
			change: func(f *linkFixture) []client.Object { f.keys.Data = linktoken.NewKeyData("k1"); return nil }},
		{name: "a short-token object without its copy of the credentials answers 503", want: http.StatusServiceUnavailable,
			change: func(f *linkFixture) []client.Object { delete(f.obj.Data, linktoken.DataSecretAccessKey); return nil }},
		{name: "the user's own Secrets are never read, even when they exist", ownKeys: true, want: http.StatusFound,
			change: func(f *linkFixture) []client.Object {
				return []client.Object{
					&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "team-keys"}, Data: linktoken.NewKeyData("k9")},
					&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "s3"}},
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newLinkFixture(t, tc.ownKeys)
			var extra []client.Object
			if tc.change != nil {
				extra = tc.change(f)
			}
			objs := append([]client.Object{f.link, f.obj}, extra...)
			if f.keys != nil {
				objs = append(objs, f.keys)
			}
			h, c := f.server(t, f.now, objs...)
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "http://x/r/"+f.short, nil)
			req.RemoteAddr = "192.0.2.1:1234"
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("GET /r/{short} = %d %s, want %d", rec.Code, rec.Body, tc.want)
			}
			if tc.want == http.StatusFound && !strings.HasPrefix(rec.Header().Get("Location"), "https://s3.example/user-prize/") {
				t.Errorf("redirected to %q", rec.Header().Get("Location"))
			}
			if got := c.reads(); len(got) > 0 {
				t.Errorf("the resolve read Secrets outside the link namespace: %v", got)
			}
		})
	}
}
