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

	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
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
	// The link names its own key Secret: the long token opens with its
	// mirror in the link namespace, and the credentials are the short-token
	// object's copy. No Secret of the link's namespace exists, and the
	// client refuses to read one.
	fx := newLinkFixture(f, true)
	short, now, link, keys := fx.short, fx.now, fx.link, fx.keys
	exp := now.Add(time.Hour)
	long, keyID := string(fx.obj.Data[linktoken.DataLongToken]), string(fx.obj.Data[linktoken.DataKeyID])
	genuineExp := exp.Format(time.RFC3339)

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
		obj := fx.obj.DeepCopy()
		for k, v := range map[string]string{linktoken.DataLongToken: longToken, linktoken.DataKeyID: kid,
			linktoken.DataExpiresAt: expiresAt, linktoken.DataNamespace: linkNS, linktoken.DataName: linkName} {
			obj.Data[k] = []byte(v)
		}
		at := now.Add(time.Duration(offset%(3*3600)) * time.Second)
		h, c := fx.server(t, at, link.DeepCopy(), keys.DeepCopy(), obj)
		req, err := http.NewRequest(http.MethodGet, "http://x"+path, nil)
		if err != nil {
			return
		}
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: SessionCookie, Value: url.QueryEscape(cookie)})
		}
		req.RemoteAddr = "192.0.2.1:1234"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got := c.reads(); len(got) > 0 {
			t.Fatalf("GET %q read Secrets outside the link namespace: %v", path, got)
		}
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
