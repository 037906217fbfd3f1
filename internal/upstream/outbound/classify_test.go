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

package outbound

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// slowDown is a classifier in the manner of Google's: a 403 whose body
// names a rate limit is transient; it leaves everything else alone.
func slowDown(status int, _ http.Header, body []byte) (Class, bool) {
	if status == http.StatusForbidden && strings.Contains(string(body), "rateLimitExceeded") {
		return Transient, true
	}
	return 0, false
}

// alwaysPermanent claims every answer, 503 included.
func alwaysPermanent(int, http.Header, []byte) (Class, bool) { return Permanent, true }

func TestRequestClassifierDecidesWhatItClaims(t *testing.T) {
	const rateLimited = `{"error":{"errors":[{"reason":"rateLimitExceeded"}],"code":403}}`
	for _, tc := range []struct {
		name      string
		classify  Classifier
		status    int
		body      string
		class     Class
		wantAfter time.Duration
	}{
		{"403 rate limit with the classifier is transient, Retry-After kept", slowDown, 403, rateLimited, Transient, 12 * time.Second},
		{"403 rate limit without a classifier is permanent", nil, 403, rateLimited, Permanent, 12 * time.Second},
		{"403 the classifier does not claim is permanent", slowDown, 403, `{"error":{"code":403}}`, Permanent, 12 * time.Second},
		{"503 the classifier does not claim stays transient", slowDown, 503, `unavailable`, Transient, 12 * time.Second},
		{"a classifier may also make a 503 permanent", alwaysPermanent, 503, `gone`, Permanent, 12 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "12")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c, _ := newClient(t, srv, Options{})
			_, err := c.Do(context.Background(), Request{Upstream: upstream.Docswell, Path: "/x", Classify: tc.classify})
			e, ok := Classify(err)
			if !ok {
				t.Fatalf("got %v, want a classified error", err)
			}
			if e.Class != tc.class || e.Status != tc.status || e.RetryAfter != tc.wantAfter || string(e.Body) != tc.body {
				t.Fatalf("got class %s status %d retryAfter %s body %q", e.Class, e.Status, e.RetryAfter, e.Body)
			}
			if want := fmt.Sprintf("HTTP %d %s", tc.status, http.StatusText(tc.status)); e.Reason != want {
				t.Fatalf("reason %q, want %q", e.Reason, want)
			}
		})
	}
}

func TestClassifierSeesTheAnswersHeader(t *testing.T) {
	var seen http.Header
	grab := func(_ int, h http.Header, _ []byte) (Class, bool) { seen = h; return 0, false }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Why", "conflict")
		w.WriteHeader(http.StatusConflict)
	}))
	defer srv.Close()
	c, _ := newClient(t, srv, Options{})
	_, err := c.Do(context.Background(), Request{Upstream: upstream.Docswell, Path: "/x", Classify: grab})
	if !IsPermanent(err) || seen.Get("X-Why") != "conflict" {
		t.Fatalf("err %v, header seen %v", err, seen)
	}
}

func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		c      Classifier
		status int
		body   string
		want   Class
	}{
		{nil, 400, "", Permanent},
		{nil, 403, "", Permanent},
		{nil, 409, "", Permanent},
		{nil, 429, "", Transient},
		{nil, 500, "", Transient},
		{nil, 302, "", Permanent},
		{slowDown, 403, "rateLimitExceeded", Transient},
		{slowDown, 403, "forbidden", Permanent},
		{slowDown, 429, "", Transient},
		{alwaysPermanent, 500, "", Permanent},
	} {
		if got := ClassOf(tc.c, tc.status, nil, []byte(tc.body)); got != tc.want {
			t.Errorf("ClassOf(%v, %d, %q) = %s, want %s", tc.c != nil, tc.status, tc.body, got, tc.want)
		}
		if tc.c == nil && DefaultClass(tc.status) != tc.want {
			t.Errorf("DefaultClass(%d) = %s, want %s", tc.status, DefaultClass(tc.status), tc.want)
		}
	}
}
