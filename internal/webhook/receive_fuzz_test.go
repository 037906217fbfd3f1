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
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/blob"
	"github.com/switchboard-dev/switchboard/internal/linktoken"
)

// signNothing presigns without calling anybody: the fuzz looks at what the
// route decides, not at S3.
type signNothing struct{}

func (signNothing) PresignGet(_ context.Context, o blob.Object, ttl time.Duration, _ string) (string, error) {
	return "https://s3.example/" + o.Bucket + "/" + url.PathEscape(o.Key) + "?X-Amz-Expires=" + ttl.String(), nil
}

// FuzzResolve sends GET /r/{short} with whatever path, cookie and
// short-token object contents the fuzzer makes (an edited long token, key
// id, expiry, or link it names) on top of one real, sealed link. The route
// must never panic or answer 5xx, must answer every error in the common
// format, and may redirect to the download only for the link's genuine
// short token with its genuine sealed object, before its expiry. The
// integration tests (test/receive) run the same route on a real API
// server and S3 server; this one is a pure unit test, so it uses
// controller-runtime's fake client.
func FuzzResolve(f *testing.F) {
	const (
		opns  = "switchboard-system"
		short = "Ab3dE5gH9k"
	)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	exp := now.Add(time.Hour)
	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: opns, Name: "link-keys"}, Data: linktoken.NewKeyData("k1")}
	kr, err := linktoken.KeyringFrom(keys)
	if err != nil {
		f.Fatal(err)
	}
	link := &v1alpha1.ReceiveLink{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "prize", UID: "8d3b-uid"}}
	link.Spec.Blob = v1alpha1.BlobLocation{Bucket: "user-prize", Key: "a/賞品.zip", CredentialsSecretRef: v1alpha1.SecretReference{Name: "s3"}}
	link.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.NewTime(now)}}
	long, keyID, err := linktoken.Seal(kr, linktoken.Claims{Namespace: "team", Name: "prize", UID: link.UID, Bucket: "user-prize", Key: "a/賞品.zip", ExpiresAt: exp})
	if err != nil {
		f.Fatal(err)
	}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "s3"},
		Data: blob.Credentials{AccessKeyID: "AKIA", SecretAccessKey: "secret"}.SecretData()}
	genuineExp := exp.Format(time.RFC3339)

	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		f.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		f.Fatal(err)
	}
	var fam Family
	for _, g := range Registered() {
		if g.Name == "receive" {
			fam = g
		}
	}

	f.Add("/r/"+short, long, keyID, genuineExp, "team", "prize", "", int64(0))
	f.Add("/r/"+short, long[:len(long)-2]+"AA", keyID, genuineExp, "team", "prize", "", int64(0))
	f.Add("/r/"+short, long, "k2", genuineExp, "team", "prize", "sid", int64(3600))
	f.Add("/r/"+short, long, keyID, "not a time", "team", "other", "", int64(-5))
	f.Add("/r/AAAAAAAAAA", "v1..", "", "", "", "", "", int64(0))
	f.Add("/r/"+strings.Repeat("a", 4096), "", "", "", "", "", "", int64(0))

	f.Fuzz(func(t *testing.T, path, longToken, kid, expiresAt, linkNS, linkName, cookie string, offset int64) {
		if !strings.HasPrefix(path, "/r/") {
			return // the other routes are not this fuzz's
		}
		obj := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: opns, Name: linktoken.ObjectName(short),
			Labels: map[string]string{linktoken.TokenLabel: "true", linktoken.LinkUIDLabel: string(link.UID)}},
			Data: map[string][]byte{linktoken.DataLongToken: []byte(longToken), linktoken.DataKeyID: []byte(kid),
				linktoken.DataExpiresAt: []byte(expiresAt), linktoken.DataNamespace: []byte(linkNS), linktoken.DataName: []byte(linkName)}}
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(link.DeepCopy(), keys.DeepCopy(), creds.DeepCopy(), obj).Build()
		at := now.Add(time.Duration(offset%(3*3600)) * time.Second)
		deps := Deps{Client: c, APIReader: c, Log: logr.Discard(), Links: &Links{Namespace: opns, Cache: c, Secrets: c, Blobs: signNothing{},
			DefaultKeys: types.NamespacedName{Namespace: opns, Name: "link-keys"}, Clock: clocktesting.NewFakePassiveClock(at),
			Audit: &Auditor{Client: c, Reader: c, Log: logr.Discard()}}}
		s, err := NewServer(Options{Log: logr.Discard()}, deps, fam)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodGet, "http://x"+path, nil)
		if err != nil {
			return
		}
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: SessionCookie, Value: url.QueryEscape(cookie)})
		}
		req.RemoteAddr = "192.0.2.1:1234"
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		genuine := req.URL.Path == "/r/"+short && longToken == long && kid == keyID && linkNS == "team" && linkName == "prize" &&
			expiresAt == genuineExp && at.Before(exp)
		switch {
		case genuine && rec.Code != http.StatusFound:
			t.Fatalf("the genuine link at %s answered %d: %s", at, rec.Code, rec.Body)
		case rec.Code >= 500:
			t.Fatalf("GET %q answered %d: %s", path, rec.Code, rec.Body)
		case rec.Code == http.StatusFound:
			if !genuine || !strings.HasPrefix(rec.Header().Get("Location"), "https://s3.example/user-prize/") {
				t.Fatalf("GET %q (long %q, key %q, expires %q, link %s/%s, at %s) redirected to %q",
					path, longToken, kid, expiresAt, linkNS, linkName, at, rec.Header().Get("Location"))
			}
		case rec.Code >= 400:
			var e errorAnswer
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("%d answer is not the common error format: %q", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("GET %q answered %d", path, rec.Code)
		}
	})
}
