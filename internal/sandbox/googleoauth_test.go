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
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// These tests prove the sandbox framework through a real client library:
// golang.org/x/oauth2, as the Google integrations use it.

const scope = "https://www.googleapis.com/auth/spreadsheets"

func newOAuth(t *testing.T) (*sandbox.Server, *sandbox.GoogleOAuth, *oauth2.Config, string) {
	t.Helper()
	g := sandbox.NewGoogleOAuth()
	g.AddClient("client-1", "secret-1")
	s := sandbox.New(g)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := &oauth2.Config{
		ClientID: "client-1", ClientSecret: "secret-1",
		Endpoint: oauth2.Endpoint{
			AuthURL:  srv.URL + "/googleaccounts/o/oauth2/v2/auth",
			TokenURL: srv.URL + "/googleoauth/token",
			// Google accepts both styles; naming one stops the library's
			// auto-detection from retrying every failure with the other.
			AuthStyle: oauth2.AuthStyleInHeader,
		},
		RedirectURL: "http://127.0.0.1/callback",
		Scopes:      []string{scope},
	}
	return s, g, cfg, srv.URL
}

func retrieveError(t *testing.T, err error) *oauth2.RetrieveError {
	t.Helper()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		t.Fatalf("got %v (%T), want *oauth2.RetrieveError", err, err)
	}
	return re
}

func TestConsentExchangeAndRefreshWithPKCE(t *testing.T) {
	s, g, cfg, _ := newOAuth(t)
	ctx := context.Background()
	verifier := oauth2.GenerateVerifier()

	// The consent page approves and redirects back with code and state.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(cfg.AuthCodeURL("state-xyz", oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("consent: %d %v", resp.StatusCode, err)
	}
	if loc.Query().Get("state") != "state-xyz" || !strings.HasPrefix(loc.String(), "http://127.0.0.1/callback?") {
		t.Fatalf("redirect = %s", loc)
	}
	code := loc.Query().Get("code")

	if _, err := cfg.Exchange(ctx, code, oauth2.VerifierOption("wrong-verifier")); retrieveError(t, err).ErrorCode != "invalid_grant" {
		t.Fatalf("wrong verifier: %v", err)
	}
	// The failed attempt used the code up, as Google does.
	resp, _ = noFollow.Get(cfg.AuthCodeURL("s2", oauth2.S256ChallengeOption(verifier)))
	resp.Body.Close()
	loc, _ = url.Parse(resp.Header.Get("Location"))
	tok, err := cfg.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok.AccessToken, "ya29.") || !strings.HasPrefix(tok.RefreshToken, "1//") || tok.TokenType != "Bearer" {
		t.Fatalf("token = %+v", tok)
	}
	if got := time.Until(tok.Expiry); got < 3590*time.Second || got > 3600*time.Second {
		t.Fatalf("expiry in %s, want about 3599 s", got)
	}
	if sc, ok := g.ValidAccessToken(tok.AccessToken); !ok || sc != scope {
		t.Fatalf("access token not live: %q %v", sc, ok)
	}

	// An expired token is refreshed by the library; Google keeps the refresh token.
	tok.Expiry = time.Now().Add(-time.Minute)
	fresh, err := cfg.TokenSource(ctx, tok).Token()
	if err != nil {
		t.Fatal(err)
	}
	if fresh.AccessToken == tok.AccessToken || fresh.RefreshToken != tok.RefreshToken {
		t.Fatalf("refresh: access %q→%q, refresh %q→%q", tok.AccessToken, fresh.AccessToken, tok.RefreshToken, fresh.RefreshToken)
	}
	if n := s.Calls(sandbox.GoogleOAuthToken); n != 3 {
		t.Fatalf("token endpoint calls = %d, want 3 (bad verifier, exchange, refresh)", n)
	}
}

func TestTokenEndpointErrorsAreGooglesOwn(t *testing.T) {
	_, g, cfg, _ := newOAuth(t)
	ctx := context.Background()
	revoked := g.IssueRefreshToken("client-1", scope)
	g.Revoke(revoked)
	for _, tc := range []struct {
		name        string
		run         func() error
		status      int
		code, descr string
	}{
		{"a reused or unknown code", func() error { _, err := cfg.Exchange(ctx, "4/unknown"); return err },
			400, "invalid_grant", "Bad Request"},
		{"a revoked refresh token", func() error {
			_, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: revoked}).Token()
			return err
		}, 400, "invalid_grant", "Token has been expired or revoked."},
		{"a wrong client secret", func() error {
			bad := *cfg
			bad.ClientSecret = "nope"
			_, err := bad.TokenSource(ctx, &oauth2.Token{RefreshToken: g.IssueRefreshToken("client-1", scope)}).Token()
			return err
		}, 401, "invalid_client", "Unauthorized"},
		{"an unknown client", func() error {
			bad := *cfg
			bad.ClientID = "who"
			_, err := bad.Exchange(ctx, "4/x")
			return err
		}, 401, "invalid_client", "The OAuth client was not found."},
		{"a code for another redirect URI", func() error {
			code := g.IssueCode("client-1", "https://elsewhere.example/cb", scope)
			_, err := cfg.Exchange(ctx, code)
			return err
		}, 400, "redirect_uri_mismatch", "Bad Request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			re := retrieveError(t, tc.run())
			if re.Response.StatusCode != tc.status || re.ErrorCode != tc.code || re.ErrorDescription != tc.descr {
				t.Fatalf("got %d %s %q, want %d %s %q", re.Response.StatusCode, re.ErrorCode, re.ErrorDescription, tc.status, tc.code, tc.descr)
			}
		})
	}
}

func TestInjectedFaultsReachTheClient(t *testing.T) {
	s, g, cfg, _ := newOAuth(t)
	ctx := context.Background()
	refresh := func(c *oauth2.Config, hc *http.Client) error {
		cctx := ctx
		if hc != nil {
			cctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
		}
		_, err := c.TokenSource(cctx, &oauth2.Token{RefreshToken: g.IssueRefreshToken("client-1", scope)}).Token()
		return err
	}

	t.Run("429 with Retry-After, once", func(t *testing.T) {
		s.ResetCalls()
		s.SetFault(sandbox.GoogleOAuthToken, sandbox.Fault{Status: 429, RetryAfter: "7", Body: `{"error":"rate_limit_exceeded"}`, Times: 1})
		re := retrieveError(t, refresh(cfg, nil))
		if re.Response.StatusCode != 429 || re.Response.Header.Get("Retry-After") != "7" {
			t.Fatalf("got %d Retry-After %q", re.Response.StatusCode, re.Response.Header.Get("Retry-After"))
		}
		if err := refresh(cfg, nil); err != nil {
			t.Fatalf("fault outlived Times=1: %v", err)
		}
		if n := s.Calls(sandbox.GoogleOAuthToken); n != 2 {
			t.Fatalf("calls = %d, want 2", n)
		}
	})
	t.Run("503 until cleared", func(t *testing.T) {
		s.SetFault(sandbox.GoogleOAuthToken, sandbox.Fault{Status: 503})
		for range 2 {
			if re := retrieveError(t, refresh(cfg, nil)); re.Response.StatusCode != 503 {
				t.Fatalf("status %d", re.Response.StatusCode)
			}
		}
		s.ClearFault(sandbox.GoogleOAuthToken)
		if err := refresh(cfg, nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a malformed body", func(t *testing.T) {
		s.SetFault(sandbox.GoogleOAuthToken, sandbox.Fault{Malformed: true, Times: 1})
		err := refresh(cfg, nil)
		if err == nil || !strings.Contains(err.Error(), "cannot parse json") {
			t.Fatalf("got %v, want a JSON parse error", err)
		}
	})
	t.Run("an oversized body that stays well-formed", func(t *testing.T) {
		// Only a size cap can catch this answer: x/oauth2 reads the first
		// MiB and parses it happily, which is why the outbound HTTP policy
		// caps bodies itself.
		s.SetFault(sandbox.GoogleOAuthToken, sandbox.Fault{OversizedBytes: 2 << 20, Times: 1})
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {g.IssueRefreshToken("client-1", scope)}}
		req, _ := http.NewRequest("POST", cfg.Endpoint.TokenURL, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("client-1", "secret-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		if resp.StatusCode != 200 || body.Len() < 2<<20 || !json.Valid(body.Bytes()) {
			t.Fatalf("status %d, %d bytes, valid JSON %v", resp.StatusCode, body.Len(), json.Valid(body.Bytes()))
		}
	})
	t.Run("a delay past the client's timeout", func(t *testing.T) {
		s.SetFault(sandbox.GoogleOAuthToken, sandbox.Fault{Delay: sandbox.Duration(2 * time.Second), Times: 1})
		err := refresh(cfg, &http.Client{Timeout: 200 * time.Millisecond})
		var ne interface{ Timeout() bool }
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("got %v, want a timeout", err)
		}
	})
}

func TestAdminEndpoint(t *testing.T) {
	s, g, cfg, base := newOAuth(t)
	do := func(method, path, body string) *http.Response {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := do("PUT", "/_sandbox/faults/googleoauth.token", `{"status":502,"times":1}`); resp.StatusCode != 204 {
		t.Fatalf("set fault: %d", resp.StatusCode)
	}
	_, err := cfg.TokenSource(context.Background(), &oauth2.Token{RefreshToken: g.IssueRefreshToken("client-1", scope)}).Token()
	if re := retrieveError(t, err); re.Response.StatusCode != 502 {
		t.Fatalf("status %d, want 502", re.Response.StatusCode)
	}
	if resp := do("PUT", "/_sandbox/faults/no.such.route", `{"status":500}`); resp.StatusCode != 404 {
		t.Fatalf("unknown route: %d, want 404", resp.StatusCode)
	}
	if resp := do("PUT", "/_sandbox/faults/googleoauth.token", `{"stauts":500}`); resp.StatusCode != 400 {
		t.Fatalf("misspelt field: %d, want 400", resp.StatusCode)
	}
	resp := do("GET", "/_sandbox/calls", "")
	var calls map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&calls); err != nil {
		t.Fatal(err)
	}
	if calls[sandbox.GoogleOAuthToken] != 1 || calls[sandbox.GoogleOAuthAuthorize] != 0 {
		t.Fatalf("calls = %v", calls)
	}
	if do("DELETE", "/_sandbox/calls", "").StatusCode != 204 || s.Calls(sandbox.GoogleOAuthToken) != 0 {
		t.Fatal("calls not reset")
	}
	var buf bytes.Buffer
	resp = do("GET", "/_sandbox/routes", "")
	_, _ = buf.ReadFrom(resp.Body)
	if !strings.Contains(buf.String(), "googleoauth.token") {
		t.Fatalf("routes = %s", buf.String())
	}
}

// verifyIDToken checks an ID token's RS256 signature with the emulator's
// key and returns its claims.
func verifyIDToken(t *testing.T, g *sandbox.GoogleOAuth, idToken string) map[string]any {
	t.Helper()
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		t.Fatalf("id_token %q is not a JWS", idToken)
	}
	var header map[string]string
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if err := json.Unmarshal(h, &header); err != nil {
		t.Fatal(err)
	}
	pub, kid := g.IDTokenPublicKey()
	if header["alg"] != "RS256" || header["kid"] != kid {
		t.Fatalf("header %v", header)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("signature: %v", err)
	}
	var claims map[string]any
	c, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if err := json.Unmarshal(c, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

func TestIDTokenOnlyWithOpenIDScope(t *testing.T) {
	_, g, cfg, _ := newOAuth(t)
	ctx := context.Background()

	// The code exchange of a grant with openid answers an ID token of the
	// default account.
	code := g.IssueCode("client-1", cfg.RedirectURL, "openid email "+scope)
	tok, err := cfg.Exchange(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	idt, _ := tok.Extra("id_token").(string)
	claims := verifyIDToken(t, g, idt)
	if claims["iss"] != "https://accounts.google.com" || claims["aud"] != "client-1" || claims["sub"] != g.DefaultSubject {
		t.Fatalf("claims %v", claims)
	}
	iat, _ := claims["iat"].(float64)
	exp, _ := claims["exp"].(float64)
	if exp-iat != 3600 || time.Since(time.Unix(int64(iat), 0)) > time.Minute {
		t.Fatalf("iat %v exp %v", iat, exp)
	}
	if sub, ok := g.Subject(tok.AccessToken); !ok || sub != "110169484474386276334" {
		t.Fatalf("Subject = %q %v", sub, ok)
	}

	// So does a refresh, with the grant's own account.
	rt := g.IssueRefreshTokenFor("client-1", "openid "+scope, "104427593722881234567")
	fresh, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rt}).Token()
	if err != nil {
		t.Fatal(err)
	}
	idt, _ = fresh.Extra("id_token").(string)
	if claims := verifyIDToken(t, g, idt); claims["sub"] != "104427593722881234567" {
		t.Fatalf("refresh claims %v", claims)
	}
	if sub, _ := g.Subject(fresh.AccessToken); sub != "104427593722881234567" {
		t.Fatalf("Subject = %q", sub)
	}

	// Without openid there is none.
	plain, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: g.IssueRefreshToken("client-1", scope)}).Token()
	if err != nil || plain.Extra("id_token") != nil {
		t.Fatalf("id_token without openid: %v %v", err, plain.Extra("id_token"))
	}
	if _, ok := g.Subject("ya29.unknown"); ok {
		t.Fatal("Subject of an unknown token")
	}
}

func TestRevocationEndpoint(t *testing.T) {
	s, g, cfg, base := newOAuth(t)
	ctx := context.Background()
	revoke := func(token string) (int, map[string]string) {
		t.Helper()
		resp, err := http.PostForm(base+"/googleoauth/revoke", url.Values{"token": {token}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]string
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body
	}

	// Revoking the refresh token kills the grant and its access tokens.
	rt := g.IssueRefreshToken("client-1", scope)
	tok, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rt}).Token()
	if err != nil {
		t.Fatal(err)
	}
	if status, body := revoke(rt); status != 200 || len(body) != 0 {
		t.Fatalf("revoke: %d %v", status, body)
	}
	if _, ok := g.ValidAccessToken(tok.AccessToken); ok {
		t.Fatal("access token outlived its revoked grant")
	}
	_, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rt}).Token()
	if re := retrieveError(t, err); re.ErrorCode != "invalid_grant" || re.ErrorDescription != "Token has been expired or revoked." {
		t.Fatalf("refresh after revoke: %v", err)
	}
	// Again, or a token Google never issued: 400 invalid_token.
	for _, dead := range []string{rt, "ya29.never-issued"} {
		if status, body := revoke(dead); status != 400 || body["error"] != "invalid_token" || body["error_description"] != "Token expired or revoked" {
			t.Fatalf("revoke %q: %d %v", dead, status, body)
		}
	}

	// Revoking an access token revokes its refresh token too, as Google
	// documents.
	rt2 := g.IssueRefreshToken("client-1", scope)
	tok2, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rt2}).Token()
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := revoke(tok2.AccessToken); status != 200 {
		t.Fatalf("revoke access token: %d", status)
	}
	if _, ok := g.ValidAccessToken(tok2.AccessToken); ok {
		t.Fatal("revoked access token still valid")
	}
	_, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rt2}).Token()
	if re := retrieveError(t, err); re.ErrorCode != "invalid_grant" {
		t.Fatalf("refresh after revoking its access token: %v", err)
	}
	if n := s.Calls(sandbox.GoogleOAuthRevoke); n != 4 {
		t.Fatalf("revoke calls = %d", n)
	}
}
