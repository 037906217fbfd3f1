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
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/status"
)

var browser = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type page struct {
	status   int
	location *url.URL
	body     string
}

func get(t *testing.T, u string) page {
	t.Helper()
	resp, err := browser.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	p := page{status: resp.StatusCode, body: string(b)}
	if loc := resp.Header.Get("Location"); loc != "" {
		p.location, _ = url.Parse(loc)
	}
	return p
}

// consent walks a browser through connect → the provider's consent page,
// and returns the callback URL the provider sends it back to.
func consent(t *testing.T, f *fixture) *url.URL {
	t.Helper()
	start := get(t, hookURL+"/oauth/notion/connect?namespace="+f.ns+"&name=research")
	if start.status != http.StatusFound || start.location == nil {
		t.Fatalf("connect answered %d", start.status)
	}
	q := start.location.Query()
	if !strings.HasSuffix(start.location.Path, "/v1/oauth/authorize") || q.Get("client_id") != "notion-client" ||
		q.Get("owner") != "user" || q.Get("response_type") != "code" || q.Get("redirect_uri") != hookURL+"/oauth/notion/callback" || len(q.Get("state")) < 40 {
		t.Fatalf("authorize URL %s", start.location)
	}
	back := get(t, start.location.String())
	if back.status != http.StatusFound || back.location == nil || back.location.Query().Get("state") != q.Get("state") {
		t.Fatalf("consent answered %d %v", back.status, back.location)
	}
	return back.location
}

func TestOAuthConnectWritesTheGrantAndShowsTheNextSteps(t *testing.T) {
	f := newFixture(t, func(sandbox.NotionWorkspace) string { return "" })
	notionEmu.SetConsentWorkspace(f.ws)
	cb := consent(t, f)
	done := get(t, cb.String())
	if done.status != http.StatusOK || !strings.Contains(done.body, "Connected to "+f.ws.Name) ||
		!strings.Contains(done.body, "Send HTTP request") || !strings.Contains(done.body, f.ws.ID) {
		t.Fatalf("success page %d:\n%s", done.status, done.body)
	}
	// Like the seed's page: the database link and the webhook URL.
	if !strings.Contains(done.body, `href="https://www.notion.so/`) || !strings.Contains(done.body, hookURL+"/notion/webhook/") {
		t.Fatalf("success page lacks the database or the webhook URL:\n%s", done.body)
	}
	tok := f.secret(t, "notion-token")
	if !strings.HasPrefix(tok["refresh_token"], "nrt_") || tok["workspace_id"] != f.ws.ID {
		t.Fatalf("token Secret keys %d, workspace %q", len(tok), tok["workspace_id"])
	}
	// The new grant reconciles the integration.
	ni := f.ready(t)
	if ni.Status.WorkspaceID != f.ws.ID {
		t.Fatalf("workspace %q", ni.Status.WorkspaceID)
	}
	// The state was used: the same callback again is refused.
	if again := get(t, cb.String()); again.status != http.StatusForbidden {
		t.Fatalf("reused state answered %d", again.status)
	}
}

// Seed 000 §3.1.2's error rows.
func TestOAuthCallbackRefusals(t *testing.T) {
	f := newFixture(t, nil)
	notionEmu.SetConsentWorkspace(f.ws)
	t.Run("an unknown state is 403", func(t *testing.T) {
		if p := get(t, hookURL+"/oauth/notion/callback?code=x&state=forged"); p.status != http.StatusForbidden || !strings.Contains(p.body, "not valid") {
			t.Fatalf("got %d", p.status)
		}
	})
	t.Run("no state is 403", func(t *testing.T) {
		if p := get(t, hookURL+"/oauth/notion/callback?code=x"); p.status != http.StatusForbidden {
			t.Fatalf("got %d", p.status)
		}
	})
	t.Run("a state for another provider is 403", func(t *testing.T) {
		cb := consent(t, f)
		q := cb.Query()
		if p := get(t, hookURL+"/oauth/google/callback?"+q.Encode()); p.status != http.StatusForbidden {
			t.Fatalf("got %d", p.status)
		}
	})
	t.Run("an expired state is 403", func(t *testing.T) {
		cb := consent(t, f)
		var list corev1.SecretList
		if err := env.Client.List(context.Background(), &list, client.InNamespace("default"), client.HasLabels{"switchboard.dev/oauth-state"}); err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			s := &list.Items[i]
			s.Data["expires"] = []byte(time.Now().Add(-time.Minute).UTC().Format(time.RFC3339))
			if err := env.Client.Update(context.Background(), s); err != nil {
				t.Fatal(err)
			}
		}
		if p := get(t, cb.String()); p.status != http.StatusForbidden {
			t.Fatalf("got %d", p.status)
		}
	})
	t.Run("a code the provider refuses is 401", func(t *testing.T) {
		cb := consent(t, f)
		q := cb.Query()
		q.Set("code", "not-a-code")
		if p := get(t, hookURL+"/oauth/notion/callback?"+q.Encode()); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "refused") {
			t.Fatalf("got %d", p.status)
		}
	})
	t.Run("a person who does not allow access gets 403", func(t *testing.T) {
		notionEmu.SetConsentWorkspace(sandbox.NotionWorkspace{})
		defer notionEmu.SetConsentWorkspace(f.ws)
		cb := consent(t, f)
		if cb.Query().Get("error") != "access_denied" {
			t.Fatalf("callback %s", cb)
		}
		if p := get(t, cb.String()); p.status != http.StatusForbidden {
			t.Fatalf("got %d", p.status)
		}
	})
	t.Run("connecting a resource that does not exist is 404", func(t *testing.T) {
		if p := get(t, hookURL+"/oauth/notion/connect?namespace="+f.ns+"&name=nothing"); p.status != http.StatusNotFound {
			t.Fatalf("got %d", p.status)
		}
	})
	// No refusal touched the grant.
	ni := f.ready(t)
	if !status.IsTrue(ni, v1alpha1.AuthenticatedCondition) {
		t.Fatal("a refused callback broke the grant")
	}
}
