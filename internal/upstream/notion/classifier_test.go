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

package notion_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// conflict is Notion's 409 (https://developers.notion.com/reference/status-codes:
// conflict_error, "Make sure the parameters are up to date and try again").
const conflict = `{"object":"error","status":409,"code":"conflict_error","message":"Conflict occurred while saving. Please try again."}`

func TestClassifierOnRawAnswers(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		claims bool
		class  outbound.Class // outbound.ClassOf(notion.Classifier, ...)
	}{
		{409, conflict, true, outbound.Transient},
		{409, "", true, outbound.Transient},
		{400, `{"object":"error","status":400,"code":"validation_error"}`, false, outbound.Permanent},
		{401, `{"object":"error","status":401,"code":"unauthorized"}`, false, outbound.Permanent},
		{403, `{"object":"error","status":403,"code":"restricted_resource"}`, false, outbound.Permanent},
		{404, `{"object":"error","status":404,"code":"object_not_found"}`, false, outbound.Permanent},
		{429, `{"object":"error","status":429,"code":"rate_limited"}`, false, outbound.Transient},
		{502, "", false, outbound.Transient},
		{503, `{"object":"error","status":503,"code":"service_unavailable"}`, false, outbound.Transient},
	} {
		class, ok := notion.Classifier(c.status, nil, []byte(c.body))
		if ok != c.claims || ok && class != c.class {
			t.Errorf("Classifier(%d) = %s, %v; want claims=%v", c.status, class, ok, c.claims)
		}
		if got := outbound.ClassOf(notion.Classifier, c.status, nil, []byte(c.body)); got != c.class {
			t.Errorf("ClassOf(%d) = %s, want %s", c.status, got, c.class)
		}
	}
}

// TestClassifierThroughOutbound sends a raw request answered 409: with the
// classifier it is transient and keeps Retry-After; without it the
// policy's default calls it permanent.
func TestClassifierThroughOutbound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(conflict))
	}))
	defer srv.Close()
	out := testenv.OutboundTo(t, upstream.Notion, srv.URL)
	for _, c := range []struct {
		classify outbound.Classifier
		class    outbound.Class
	}{{notion.Classifier, outbound.Transient}, {nil, outbound.Permanent}} {
		_, err := out.Do(context.Background(), outbound.Request{Upstream: upstream.Notion, Path: "/v1/pages/x", Method: http.MethodPatch, Classify: c.classify})
		e, ok := outbound.Classify(err)
		if !ok || e.Class != c.class || e.Status != http.StatusConflict || e.RetryAfter != 3*time.Second {
			t.Errorf("classifier %v: got %+v", c.classify != nil, e)
		}
	}
}
