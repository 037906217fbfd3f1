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

package sandbox_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// With ConsentPrompt on, each OAuth emulator's consent page asks: GET shows
// a form with #allow and #deny, and only the POSTed decision sends the
// browser back, with a code or with error=access_denied. Off, a POST is
// refused and GET approves at once, as before.
func TestConsentPromptAsksAndHonoursTheDecision(t *testing.T) {
	notion, google, discord := sandbox.NewNotion(), sandbox.NewGoogleOAuth(), sandbox.NewDiscord()
	notion.AddClient("n-client", "n-secret")
	notion.SetConsentWorkspace(sandbox.NotionWorkspace{ID: "11111111-1111-4111-8111-111111111111", Name: "Lab"})
	google.AddClient("g-client", "g-secret")
	discord.AddClient("d-client", "d-secret")
	discord.SetConsentUser(sandbox.DiscordUser{ID: "80351110224678912", Username: "nelly"})
	srv := httptest.NewServer(sandbox.New(notion, google, discord))
	t.Cleanup(srv.Close)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	q := url.Values{"redirect_uri": {"http://127.0.0.1/cb"}, "response_type": {"code"}, "state": {"st"}}
	for _, c := range []struct {
		path   string
		client string
		prompt interface{ SetConsentPrompt(bool) }
	}{
		{"/notion/v1/oauth/authorize", "n-client", notion},
		{"/googleaccounts/o/oauth2/v2/auth", "g-client", google},
		{"/discord/oauth2/authorize", "d-client", discord},
	} {
		q.Set("client_id", c.client)
		u := srv.URL + c.path + "?" + q.Encode()
		decide := func(decision string) *http.Response {
			t.Helper()
			resp, err := noFollow.PostForm(u, url.Values{"decision": {decision}})
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			return resp
		}
		if resp := decide("allow"); resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: a POST with the prompt off = %d, want 405", c.path, resp.StatusCode)
		}
		c.prompt.SetConsentPrompt(true)
		resp, err := noFollow.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `id="allow"`) || !strings.Contains(string(body), `id="deny"`) {
			t.Errorf("%s: the asking page = %d\n%s", c.path, resp.StatusCode, body)
		}
		back := func(resp *http.Response) url.Values {
			t.Helper()
			loc, err := url.Parse(resp.Header.Get("Location"))
			if resp.StatusCode != http.StatusFound || err != nil || !strings.HasPrefix(loc.String(), "http://127.0.0.1/cb?") {
				t.Fatalf("%s: answered %d → %q", c.path, resp.StatusCode, resp.Header.Get("Location"))
			}
			return loc.Query()
		}
		if v := back(decide("allow")); v.Get("code") == "" || v.Get("state") != "st" || v.Get("error") != "" {
			t.Errorf("%s: allow sent back %v", c.path, v)
		}
		if v := back(decide("deny")); v.Get("error") != "access_denied" || v.Get("code") != "" || v.Get("state") != "st" {
			t.Errorf("%s: deny sent back %v", c.path, v)
		}
		if resp := decide("maybe"); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: an unknown decision = %d, want 400", c.path, resp.StatusCode)
		}
		c.prompt.SetConsentPrompt(false)
		if v := back(must(noFollow.Get(u))); v.Get("code") == "" {
			t.Errorf("%s: with the prompt off again, GET sent back %v", c.path, v)
		}
	}
}

func must(resp *http.Response, err error) *http.Response {
	if err != nil {
		panic(err)
	}
	_ = resp.Body.Close()
	return resp
}
