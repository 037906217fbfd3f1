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
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/gapi"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Google answers some rate limits with 403
// (https://developers.google.com/calendar/api/guides/errors: 403
// rateLimitExceeded, userRateLimitExceeded, quotaExceeded, usageLimits)
// and names RESOURCE_EXHAUSTED a quota or rate limit
// (https://cloud.google.com/apis/design/errors).
const (
	v1UserRateLimit = `{"error":{"errors":[{"domain":"usageLimits","reason":"userRateLimitExceeded","message":"User Rate Limit Exceeded"}],"code":403,"message":"User Rate Limit Exceeded"}}`
	v4Exhausted403  = `{"error":{"code":403,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}`
	arrayRateLimit  = `[{"error":{"errors":[{"reason":"rateLimitExceeded"}],"code":403,"message":"Rate Limit Exceeded"}}]`
)

func TestClassifierOnRawAnswers(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		body   string
		claims bool
		class  outbound.Class // outbound.ClassOf(gapi.Classifier, ...)
	}{
		{"403 rateLimitExceeded", 403, v1RateLimit, true, outbound.Transient},
		{"403 userRateLimitExceeded", 403, v1UserRateLimit, true, outbound.Transient},
		{"403 ErrorInfo RATE_LIMIT_EXCEEDED", 403, v4Quota403, true, outbound.Transient},
		{"403 RESOURCE_EXHAUSTED", 403, v4Exhausted403, true, outbound.Transient},
		{"403 rate limit in a JSON array", 403, arrayRateLimit, true, outbound.Transient},
		{"403 forbidden", 403, v1Forbidden, false, outbound.Permanent},
		{"403 not JSON", 403, "<html>Forbidden</html>", false, outbound.Permanent},
		{"403 empty", 403, "", false, outbound.Permanent},
		{"400 with a rate-limit reason is not a rate limit", 400, `{"error":{"errors":[{"reason":"rateLimitExceeded"}],"code":400}}`, false, outbound.Permanent},
		{"429 is the default's", 429, v4Quota, false, outbound.Transient},
		{"503 is the default's", 503, "unavailable", false, outbound.Transient},
		{"401", 401, v1Invalid, false, outbound.Permanent},
		{"404", 404, v4NotFound, false, outbound.Permanent},
	} {
		t.Run(c.name, func(t *testing.T) {
			class, ok := gapi.Classifier(c.status, nil, []byte(c.body))
			if ok != c.claims || ok && class != c.class {
				t.Errorf("Classifier = %s, %v; want claims=%v", class, ok, c.claims)
			}
			if got := outbound.ClassOf(gapi.Classifier, c.status, nil, []byte(c.body)); got != c.class {
				t.Errorf("ClassOf = %s, want %s", got, c.class)
			}
			// The library path classes the same answer the same way.
			if e := gapi.Classify("x.get", apiError(t, c.status, c.body, nil), upstream.GoogleAPIs); e.Class != c.class {
				t.Errorf("Classify = %s, want %s", e.Class, c.class)
			}
		})
	}
}

// TestClassifierThroughOutbound sends a raw request to a Google answer of
// 403 rateLimitExceeded: with the classifier it is transient and keeps
// Retry-After; without it the policy's default calls it permanent.
func TestClassifierThroughOutbound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "20")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(v1RateLimit))
	}))
	defer srv.Close()
	out := testenv.OutboundTo(t, upstream.GoogleAPIs, srv.URL)
	for _, c := range []struct {
		classify outbound.Classifier
		class    outbound.Class
	}{{gapi.Classifier, outbound.Transient}, {nil, outbound.Permanent}} {
		_, err := out.Do(context.Background(), outbound.Request{Upstream: upstream.GoogleAPIs, Path: "/calendar/v3/x", Classify: c.classify})
		e, ok := outbound.Classify(err)
		if !ok || e.Class != c.class || e.Status != http.StatusForbidden || e.RetryAfter.Seconds() != 20 {
			t.Errorf("classifier %v: got %+v", c.classify != nil, e)
		}
	}
}
