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
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// The Discord emulator, driven through golang.org/x/oauth2 as any client
// of Discord's documented OAuth2 endpoints would.

func newDiscord(t *testing.T) (*sandbox.Server, *sandbox.Discord, *oauth2.Config, string) {
	t.Helper()
	return newDiscordAt(t, nil)
}

func newDiscordAt(t *testing.T, now func() time.Time) (*sandbox.Server, *sandbox.Discord, *oauth2.Config, string) {
	t.Helper()
	d := sandbox.NewDiscord()
	d.Now = now
	d.AddClient("1234567890", "discord-secret")
	d.SetConsentUser(sandbox.DiscordUser{ID: "80351110224678912", Username: "nelly", GlobalName: "Nelly"})
	s := sandbox.New(d)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := &oauth2.Config{
		ClientID: "1234567890", ClientSecret: "discord-secret",
		Endpoint: oauth2.Endpoint{AuthURL: srv.URL + "/discord/oauth2/authorize", TokenURL: srv.URL + "/discord/api/oauth2/token",
			AuthStyle: oauth2.AuthStyleInHeader},
		RedirectURL: "http://127.0.0.1/callback",
		Scopes:      []string{"identify"},
	}
	return s, d, cfg, srv.URL
}

func consentCode(t *testing.T, authURL string) url.Values {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("consent: %d %v", resp.StatusCode, err)
	}
	return loc.Query()
}

func TestDiscordCodeExchangeRotatesRefreshTokensAndServesTheUser(t *testing.T) {
	s, _, cfg, base := newDiscord(t)
	ctx := context.Background()
	verifier := oauth2.GenerateVerifier()
	q := consentCode(t, cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	if q.Get("state") != "st" || q.Get("code") == "" {
		t.Fatalf("redirect query %v", q)
	}
	if _, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption("wrong")); retrieveError(t, err).ErrorCode != "invalid_grant" {
		t.Fatalf("wrong verifier: %v", err)
	}
	q = consentCode(t, cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Until(tok.Expiry); got < 604790*time.Second || got > 604800*time.Second || tok.TokenType != "Bearer" {
		t.Fatalf("token type %q, expiry in %s (want 604800 s)", tok.TokenType, got)
	}
	// A code works once.
	if _, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier)); retrieveError(t, err).ErrorDescription != `Invalid "code" in request.` {
		t.Fatalf("reused code: %v", err)
	}

	// Refresh rotates: the new pair works, the old refresh token is dead.
	old := tok.RefreshToken
	tok.Expiry = time.Now().Add(-time.Minute)
	fresh, err := cfg.TokenSource(ctx, tok).Token()
	if err != nil {
		t.Fatal(err)
	}
	if fresh.RefreshToken == old || fresh.AccessToken == tok.AccessToken {
		t.Fatal("refresh did not rotate the pair")
	}
	if _, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: old}).Token(); retrieveError(t, err).ErrorCode != "invalid_grant" {
		t.Fatalf("old refresh token: %v", err)
	}

	// GET /users/@me with the new access token.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/discord/api/users/@me", nil)
	req.Header.Set("Authorization", "Bearer "+fresh.AccessToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var me struct{ ID, Username string }
	_ = json.NewDecoder(resp.Body).Decode(&me)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || me.ID != "80351110224678912" || me.Username != "nelly" {
		t.Fatalf("users/@me %d %+v", resp.StatusCode, me)
	}
	if n := s.Calls(sandbox.DiscordToken); n != 5 {
		t.Fatalf("token calls = %d, want 5", n)
	}
}

func TestDiscordRefusals(t *testing.T) {
	_, d, cfg, base := newDiscord(t)
	ctx := context.Background()
	post := func(contentType, body string, basic bool) (int, map[string]string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/discord/api/oauth2/token", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		if basic {
			req.SetBasicAuth("1234567890", "discord-secret")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&b)
		return resp.StatusCode, b
	}
	rt := d.IssueRefreshToken("1234567890", "identify", sandbox.DiscordUser{ID: "1"})
	t.Run("a JSON body is refused", func(t *testing.T) {
		if st, b := post("application/json", `{"grant_type":"refresh_token","refresh_token":"`+rt+`"}`, true); st != 400 || b["error"] != "unsupported_grant_type" {
			t.Fatalf("%d %v", st, b)
		}
	})
	t.Run("client credentials in the form are accepted", func(t *testing.T) {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {"1234567890"}, "client_secret": {"discord-secret"}}
		if st, b := post("application/x-www-form-urlencoded", form.Encode(), false); st != 200 || b["refresh_token"] == "" {
			t.Fatalf("%d %v", st, b)
		}
	})
	t.Run("a wrong client secret is 401 invalid_client", func(t *testing.T) {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {"1234567890"}, "client_secret": {"nope"}}
		if st, b := post("application/x-www-form-urlencoded", form.Encode(), false); st != 401 || b["error"] != "invalid_client" {
			t.Fatalf("%d %v", st, b)
		}
	})
	t.Run("an expired code is invalid_grant", func(t *testing.T) {
		// A clock the emulator reads under no lock: set before it serves.
		var now atomic.Int64
		now.Store(time.Now().UnixNano())
		_, _, cfg, _ := newDiscordAt(t, func() time.Time { return time.Unix(0, now.Load()) })
		q := consentCode(t, cfg.AuthCodeURL("st"))
		now.Add(int64(101 * time.Second))
		if _, err := cfg.Exchange(ctx, q.Get("code")); retrieveError(t, err).ErrorCode != "invalid_grant" {
			t.Fatalf("expired code: %v", err)
		}
	})
	t.Run("a user who denies is sent back with access_denied", func(t *testing.T) {
		d.SetConsentUser(sandbox.DiscordUser{})
		defer d.SetConsentUser(sandbox.DiscordUser{ID: "80351110224678912", Username: "nelly"})
		if q := consentCode(t, cfg.AuthCodeURL("st")); q.Get("error") != "access_denied" || q.Get("code") != "" || q.Get("state") != "st" {
			t.Fatalf("redirect query %v", q)
		}
	})
	t.Run("users/@me without a live token is 401", func(t *testing.T) {
		resp, err := http.Get(base + "/discord/api/users/@me")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("got %d", resp.StatusCode)
		}
	})
}

// A throttled route answers Discord's 429: retry_after in float seconds,
// Retry-After in whole seconds, the bucket headers on the API route and
// none on the token endpoint; after the reset it answers again.
func TestDiscordRateLimitsAnswer429UntilTheyReset(t *testing.T) {
	now := time.Now()
	_, d, _, base := newDiscordAt(t, func() time.Time { return now })
	d.Throttle(sandbox.DiscordUsersMe, 1500*time.Millisecond, false)
	d.Throttle(sandbox.DiscordToken, 2*time.Second, true)
	for _, c := range []struct {
		method, path string
		bucket       bool
	}{{http.MethodGet, "/discord/api/users/@me", true}, {http.MethodPost, "/discord/api/oauth2/token", false}} {
		req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader("grant_type=refresh_token"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			RetryAfter float64 `json:"retry_after"`
			Global     bool    `json:"global"`
			Message    string  `json:"message"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || body.RetryAfter <= 0 || body.Message == "" || resp.Header.Get("Retry-After") != "2" {
			t.Fatalf("%s: %d %+v Retry-After %q", c.path, resp.StatusCode, body, resp.Header.Get("Retry-After"))
		}
		if got := resp.Header.Get("X-RateLimit-Bucket") != ""; got != c.bucket || (c.bucket && resp.Header.Get("X-RateLimit-Reset-After") != "1.500") {
			t.Fatalf("%s: bucket headers %v", c.path, resp.Header)
		}
	}
	if d.RateLimited() != 2 {
		t.Fatalf("%d 429s counted", d.RateLimited())
	}
	now = now.Add(2 * time.Second)
	resp, err := http.Get(base + "/discord/api/users/@me")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized { // no token: past the limit, the route answers as usual
		t.Fatalf("after the reset: %d", resp.StatusCode)
	}
}
