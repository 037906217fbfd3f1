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

package gapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/gapi"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// apiError builds the error the library returns for a status and body.
func apiError(t *testing.T, code int, body string, header http.Header) error {
	t.Helper()
	if header == nil {
		header = http.Header{}
	}
	err := googleapi.CheckResponseWithBody(&http.Response{StatusCode: code, Header: header}, []byte(body))
	if err == nil {
		t.Fatalf("no error for %d", code)
	}
	return err
}

const (
	v1Forbidden = `{"error":{"errors":[{"domain":"global","reason":"forbidden","message":"The caller does not have permission"}],"code":403,"message":"The caller does not have permission","status":"PERMISSION_DENIED"}}`
	v1RateLimit = `{"error":{"errors":[{"domain":"usageLimits","reason":"rateLimitExceeded","message":"Rate Limit Exceeded"}],"code":403,"message":"Rate Limit Exceeded"}}`
	v4Quota     = `{"error":{"code":429,"message":"Quota exceeded for quota metric 'Write requests'","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com"}]}}`
	v4Quota403  = `{"error":{"code":403,"message":"Quota exceeded","status":"PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com"}]}}`
	v1Invalid   = `{"error":{"errors":[{"domain":"global","reason":"authError","message":"Invalid Credentials"}],"code":401,"message":"Invalid Credentials"}}`
	v4NotFound  = `{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND"}}`
)

func TestClassify(t *testing.T) {
	cases := []struct {
		name       string
		code       int
		body       string
		retryAfter string
		class      outbound.Class
		is         error
		reason     string
		wait       time.Duration
	}{
		{name: "401", code: 401, body: v1Invalid, class: outbound.Permanent, is: gapi.ErrUnauthorized, reason: "x.get: 401 Invalid Credentials (authError)"},
		{name: "403 forbidden", code: 403, body: v1Forbidden, class: outbound.Permanent, reason: "x.get: 403 The caller does not have permission (forbidden, PERMISSION_DENIED)"},
		{name: "403 rate limit", code: 403, body: v1RateLimit, class: outbound.Transient},
		{name: "403 ErrorInfo rate limit", code: 403, body: v4Quota403, class: outbound.Transient},
		{name: "404", code: 404, body: v4NotFound, class: outbound.Permanent, is: gapi.ErrNotFound, reason: "x.get: 404 Requested entity was not found. (NOT_FOUND)"},
		{name: "429 with Retry-After", code: 429, body: v4Quota, retryAfter: "30", class: outbound.Transient, wait: 30 * time.Second,
			reason: "x.get: 429 Quota exceeded for quota metric 'Write requests' (RATE_LIMIT_EXCEEDED, RESOURCE_EXHAUSTED)"},
		{name: "503 not JSON", code: 503, body: "<html>unavailable</html>", class: outbound.Transient, reason: "x.get: 503 Service Unavailable"},
		{name: "400", code: 400, body: `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`, class: outbound.Permanent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			if c.retryAfter != "" {
				h.Set("Retry-After", c.retryAfter)
			}
			e := gapi.Classify("x.get", apiError(t, c.code, c.body, h), upstream.GoogleAPIs)
			if e.Class != c.class || e.Status != c.code || e.Upstream != upstream.GoogleAPIs {
				t.Fatalf("got %+v", e)
			}
			if c.is != nil && !errors.Is(e, c.is) {
				t.Errorf("%v is not %v", e, c.is)
			}
			for _, s := range []error{gapi.ErrUnauthorized, gapi.ErrNotFound} {
				if !errors.Is(s, c.is) && errors.Is(e, s) {
					t.Errorf("%v is also %v", e, s)
				}
			}
			if c.reason != "" && e.Reason != c.reason {
				t.Errorf("reason %q, want %q", e.Reason, c.reason)
			}
			if e.RetryAfter != c.wait {
				t.Errorf("retry after %s, want %s", e.RetryAfter, c.wait)
			}
			var ge *googleapi.Error
			if !errors.As(e, &ge) {
				t.Error("the library's error is not kept")
			}
			if oe, ok := outbound.Classify(error(e)); !ok || oe != e {
				t.Error("outbound.Classify does not find the error")
			}
		})
	}
}

func TestClassifyTransportFailureIsTransient(t *testing.T) {
	e := gapi.Classify("x.get", errors.New("connection reset"), upstream.GoogleAPIs)
	if e.Class != outbound.Transient || e.Status != 0 || !strings.Contains(e.Reason, "connection reset") {
		t.Fatalf("got %+v", e)
	}
}

func TestReasonAndStatus(t *testing.T) {
	if r, s := gapi.Reason(apiError(t, 429, v4Quota, nil)), gapi.Status(apiError(t, 429, v4Quota, nil)); r != "RATE_LIMIT_EXCEEDED" || s != "RESOURCE_EXHAUSTED" {
		t.Errorf("v4 body: reason %q status %q", r, s)
	}
	if r, s := gapi.Reason(apiError(t, 403, v1RateLimit, nil)), gapi.Status(apiError(t, 403, v1RateLimit, nil)); r != "rateLimitExceeded" || s != "" {
		t.Errorf("v1 body: reason %q status %q", r, s)
	}
	if r, s := gapi.Reason(errors.New("x")), gapi.Status(errors.New("x")); r != "" || s != "" {
		t.Errorf("not a Google error: reason %q status %q", r, s)
	}
}

// TestHTTPClientSendsTheContextsToken checks the bearer transport: the
// token comes from the call's context, and a call without one is not sent.
func TestHTTPClientSendsTheContextsToken(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	out := testenv.OutboundTo(t, upstream.GoogleAPIs, srv.URL)
	hc := gapi.HTTPClient(out)
	for _, tok := range []string{"tok-1", "tok-2"} {
		req, _ := http.NewRequestWithContext(gapi.WithToken(context.Background(), tok), http.MethodGet, srv.URL, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	if resp, err := hc.Do(req); err == nil {
		_ = resp.Body.Close()
		t.Fatal("a call without a token was sent")
	}
	if len(got) != 2 || got[0] != "Bearer tok-1" || got[1] != "Bearer tok-2" {
		t.Fatalf("Authorization headers %q", got)
	}
	// A host that is not an upstream stays refused under the bearer.
	req, _ = http.NewRequestWithContext(gapi.WithToken(context.Background(), "t"), http.MethodGet, "http://elsewhere.invalid/", nil)
	if resp, err := hc.Do(req); err == nil || !errors.Is(err, upstream.ErrHostNotAllowed) {
		if resp != nil {
			_ = resp.Body.Close()
		}
		t.Fatalf("got %v, want the allowlist's refusal", err)
	}
}
