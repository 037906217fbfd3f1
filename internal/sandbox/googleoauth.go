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

package sandbox

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// GoogleOAuth emulates Google's OAuth 2.0 endpoints as the real ones
// answer: the consent page (auto-approved; on accounts.google.com, so
// served under the googleaccounts upstream's prefix) and the token endpoint
// (oauth2.googleapis.com, the googleoauth upstream) with the
// authorization_code and refresh_token grants, PKCE (S256), and Google's
// error bodies (400 invalid_grant "Bad Request" for a bad code, 400
// invalid_grant "Token has been expired or revoked." for a dead refresh
// token, 401 invalid_client). Like Google, a refresh answers a new access
// token and no new refresh token. Every grant belongs to a Google account
// (its subject, "sub"); a grant with the openid scope also answers an ID
// token, and the revocation endpoint kills grants.
type GoogleOAuth struct {
	ConsentPrompt

	// AccessTokenLifetime is the expires_in of new access tokens (Google: 3599 s).
	AccessTokenLifetime time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// DefaultSubject is the Google account of grants made without naming
	// one: IssueRefreshToken, IssueCode and the consent page. Google's
	// subject is "An identifier for the user, unique among all Google
	// accounts and never reused", a decimal string such as the
	// "110169484474386276334" of the example ID token in
	// https://developers.google.com/identity/openid-connect/openid-connect.
	DefaultSubject string

	mu      sync.Mutex
	clients map[string]string // client_id → client_secret
	codes   map[string]authCode
	refresh map[string]grant
	access  map[string]accessToken

	keyOnce sync.Once
	key     *rsa.PrivateKey
	keyID   string
}

type authCode struct {
	clientID, redirectURI, scope, challenge, sub string
}

type grant struct {
	clientID, scope, sub string
	revoked              bool
}

type accessToken struct {
	clientID, scope, sub string
	refresh              string // the grant it was issued from
	expires              time.Time
}

// NewGoogleOAuth returns an emulator with no registered clients.
func NewGoogleOAuth() *GoogleOAuth {
	return &GoogleOAuth{
		AccessTokenLifetime: 3599 * time.Second,
		DefaultSubject:      "110169484474386276334",
		clients:             map[string]string{},
		codes:               map[string]authCode{},
		refresh:             map[string]grant{},
		access:              map[string]accessToken{},
	}
}

// Upstream implements Emulator.
func (g *GoogleOAuth) Upstream() upstream.Name { return upstream.GoogleOAuth }

// Route names.
const (
	GoogleOAuthAuthorize = "googleoauth.authorize"
	GoogleOAuthToken     = "googleoauth.token"  //nolint:gosec // a route name, not a credential
	GoogleOAuthRevoke    = "googleoauth.revoke" //nolint:gosec // a route name, not a credential
)

// Register implements Emulator. Google's consent page is on another host
// than its token endpoint (https://developers.google.com/identity/
// protocols/oauth2/web-server: authorization at
// https://accounts.google.com/o/oauth2/v2/auth, tokens at
// https://oauth2.googleapis.com/token), so the one emulator answers under
// both upstreams' prefixes, and the routes build the consent URL on the
// googleaccounts upstream as they would on the real host.
func (g *GoogleOAuth) Register(s *Server) {
	s.Handle(GoogleOAuthAuthorize, "GET /"+string(upstream.GoogleAccounts)+"/o/oauth2/v2/auth", g.authorize)
	s.Handle(GoogleOAuthAuthorize, "POST /"+string(upstream.GoogleAccounts)+"/o/oauth2/v2/auth", g.authorize)
	s.Handle(GoogleOAuthToken, "POST /googleoauth/token", g.token)
	// "Revoking a token": POST https://oauth2.googleapis.com/revoke
	// (https://developers.google.com/identity/protocols/oauth2/web-server#tokenrevoke).
	s.Handle(GoogleOAuthRevoke, "POST /googleoauth/revoke", g.revoke)
}

// AddClient registers an OAuth client.
func (g *GoogleOAuth) AddClient(id, secret string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.clients[id] = secret
}

// IssueRefreshToken creates a grant of the DefaultSubject account, as if a
// person had consented earlier.
func (g *GoogleOAuth) IssueRefreshToken(clientID, scope string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.issueRefreshLocked(clientID, scope, g.DefaultSubject)
}

// IssueRefreshTokenFor creates a grant of the Google account sub, so that
// tests can tell users apart (the Sheets quotas are per user).
func (g *GoogleOAuth) IssueRefreshTokenFor(clientID, scope, sub string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.issueRefreshLocked(clientID, scope, sub)
}

func (g *GoogleOAuth) issueRefreshLocked(clientID, scope, sub string) string {
	tok := "1//" + randomToken(32)
	g.refresh[tok] = grant{clientID: clientID, scope: scope, sub: sub}
	return tok
}

// IssueCode creates an authorization code of the DefaultSubject account, as
// the consent page would.
func (g *GoogleOAuth) IssueCode(clientID, redirectURI, scope string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	code := "4/" + randomToken(24)
	g.codes[code] = authCode{clientID: clientID, redirectURI: redirectURI, scope: scope, sub: g.DefaultSubject}
	return code
}

// Revoke kills a refresh token (a person removed the app's access).
func (g *GoogleOAuth) Revoke(refreshToken string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gr, ok := g.refresh[refreshToken]; ok {
		gr.revoked = true
		g.refresh[refreshToken] = gr
	}
}

// ValidAccessToken reports whether a Bearer token is live, and its scope;
// the Calendar and Sheets emulators use it to authenticate requests.
func (g *GoogleOAuth) ValidAccessToken(tok string) (scope string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	a, ok := g.liveAccessLocked(tok)
	return a.scope, ok
}

// Subject reports the Google account (its "sub") behind a live access
// token; the Sheets emulator counts its per-user quotas by it.
func (g *GoogleOAuth) Subject(accessToken string) (sub string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	a, ok := g.liveAccessLocked(accessToken)
	return a.sub, ok
}

// bearerGrant looks up a request's "Authorization: Bearer" token for the
// API emulators: present is false without an Authorization header, ok false
// unless it is a live Bearer token, whose scope and subject it returns.
func (g *GoogleOAuth) bearerGrant(r *http.Request) (scope, sub string, present, ok bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", "", false, false
	}
	tok, isBearer := strings.CutPrefix(h, "Bearer ")
	if !isBearer {
		return "", "", true, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	a, ok := g.liveAccessLocked(strings.TrimSpace(tok))
	return a.scope, a.sub, true, ok
}

// liveAccessLocked finds a token that has neither expired nor lost its
// grant; g.mu is held.
func (g *GoogleOAuth) liveAccessLocked(tok string) (accessToken, bool) {
	a, ok := g.access[tok]
	if !ok || !g.now().Before(a.expires) {
		return accessToken{}, false
	}
	return a, true
}

func (g *GoogleOAuth) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// authorize approves at once (unless ConsentPrompt is on) and redirects
// back with a code, as a person clicking "Allow" would; a person clicking
// "Cancel" is sent back with error=access_denied.
func (g *GoogleOAuth) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	clientID, redirectURI := q.Get("client_id"), q.Get("redirect_uri")
	g.mu.Lock()
	_, known := g.clients[clientID]
	g.mu.Unlock()
	if !known {
		http.Error(w, "Error 401: invalid_client\nThe OAuth client was not found.", http.StatusUnauthorized)
		return
	}
	target, ok := consentRedirect(w, r, true, "Error 400: invalid_request")
	if !ok || !g.decided(w, r, target, "Google", url.Values{"error": {"access_denied"}}) {
		return
	}
	code := g.IssueCode(clientID, redirectURI, q.Get("scope"))
	if ch := q.Get("code_challenge"); ch != "" {
		if q.Get("code_challenge_method") != "S256" {
			http.Error(w, "Error 400: invalid_request\nUnsupported code_challenge_method", http.StatusBadRequest)
			return
		}
		g.mu.Lock()
		c := g.codes[code]
		c.challenge = ch
		g.codes[code] = c
		g.mu.Unlock()
	}
	back := target.Query()
	back.Set("code", code)
	back.Set("scope", q.Get("scope"))
	redirectToClient(w, r, target, back)
}

func oauthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
	w.WriteHeader(status)
	// Google pretty-prints its token endpoint errors.
	b, _ := json.MarshalIndent(map[string]string{"error": code, "error_description": description}, "", "  ")
	_, _ = w.Write(b)
}

func (g *GoogleOAuth) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "Could not determine client ID from request.")
		return
	}
	clientID, secret := formClient(r)
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.authenticClientLocked(w, clientID, secret) {
		return
	}
	switch gt := r.PostForm.Get("grant_type"); gt {
	case "authorization_code":
		g.exchangeCodeLocked(w, r, clientID)
	case "refresh_token":
		g.refreshLocked(w, r, clientID)
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type: "+gt)
	}
}

// authenticClientLocked checks a token request's client credentials; it
// answers Google's refusal and returns false when they are wrong.
func (g *GoogleOAuth) authenticClientLocked(w http.ResponseWriter, clientID, secret string) bool {
	want, known := g.clients[clientID]
	switch {
	case clientID == "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "Could not determine client ID from request.")
		return false
	case !known:
		oauthError(w, http.StatusUnauthorized, "invalid_client", "The OAuth client was not found.")
		return false
	case subtle.ConstantTimeCompare([]byte(secret), []byte(want)) != 1:
		oauthError(w, http.StatusUnauthorized, "invalid_client", "Unauthorized")
		return false
	}
	return true
}

// exchangeCodeLocked serves the authorization_code grant: a new grant,
// answered with its refresh token.
func (g *GoogleOAuth) exchangeCodeLocked(w http.ResponseWriter, r *http.Request, clientID string) {
	code := r.PostForm.Get("code")
	if code == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "Missing required parameter: code")
		return
	}
	c, ok := g.codes[code]
	// A code is usable once, by the client it was issued to, with the
	// same redirect URI.
	delete(g.codes, code)
	if !ok || c.clientID != clientID {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "Bad Request")
		return
	}
	if c.redirectURI != r.PostForm.Get("redirect_uri") {
		oauthError(w, http.StatusBadRequest, "redirect_uri_mismatch", "Bad Request")
		return
	}
	if c.challenge != "" && !pkceMatches(c.challenge, r.PostForm.Get("code_verifier")) {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "Invalid code verifier.")
		return
	}
	refresh := g.issueRefreshLocked(clientID, c.scope, c.sub)
	g.writeToken(w, g.refresh[refresh], refresh, true)
}

// refreshLocked serves the refresh_token grant: a new access token of a
// live grant, and no new refresh token.
func (g *GoogleOAuth) refreshLocked(w http.ResponseWriter, r *http.Request, clientID string) {
	rt := r.PostForm.Get("refresh_token")
	if rt == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "Missing required parameter: refresh_token")
		return
	}
	gr, ok := g.refresh[rt]
	if !ok || gr.revoked || gr.clientID != clientID {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "Token has been expired or revoked.")
		return
	}
	g.writeToken(w, gr, rt, false)
}

// writeToken answers a new access token of the grant gr (whose refresh
// token is refresh, sent back only on the code exchange); g.mu is held.
func (g *GoogleOAuth) writeToken(w http.ResponseWriter, gr grant, refresh string, withRefresh bool) {
	tok := "ya29." + randomToken(48)
	now := g.now()
	g.access[tok] = accessToken{clientID: gr.clientID, scope: gr.scope, sub: gr.sub, refresh: refresh, expires: now.Add(g.AccessTokenLifetime)}
	body := map[string]any{
		"access_token": tok,
		"expires_in":   int(g.AccessTokenLifetime / time.Second),
		"scope":        gr.scope,
		"token_type":   "Bearer",
	}
	if withRefresh {
		body["refresh_token"] = refresh
	}
	// "id_token: A JWT that contains identity information about the user
	// that is digitally signed by Google", answered when the scope includes
	// openid ("Exchange code for access token and ID token",
	// https://developers.google.com/identity/openid-connect/openid-connect).
	// Google answers one on a refresh of such a grant too, which is why
	// golang.org/x/oauth2 users read it from Token.Extra("id_token") after
	// either.
	if hasScope(gr.scope, "openid") {
		body["id_token"] = g.idToken(gr, now)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
	w.Header().Set("Pragma", "no-cache")
	b, _ := json.MarshalIndent(body, "", "  ")
	_, _ = w.Write(b)
}

func hasScope(scopes, want string) bool {
	for _, s := range strings.Fields(scopes) {
		if s == want {
			return true
		}
	}
	return false
}

// idToken signs an ID token for the grant with the emulator's RS256 key,
// which is made on first use. The claims are the ones Google documents as
// always present ("An ID token's payload",
// https://developers.google.com/identity/openid-connect/openid-connect):
// iss https://accounts.google.com, aud the client id, sub, iat and exp
// (an hour, as the access token).
func (g *GoogleOAuth) idToken(gr grant, now time.Time) string {
	key, kid := g.signingKey()
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": kid, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"iss": "https://accounts.google.com",
		"azp": gr.clientID,
		"aud": gr.clientID,
		"sub": gr.sub,
		"iat": now.Unix(),
		"exp": now.Add(time.Hour).Unix(),
	})
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		panic(err) // only a broken crypto/rand fails here
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func (g *GoogleOAuth) signingKey() (*rsa.PrivateKey, string) {
	g.keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err) // only a broken crypto/rand fails here
		}
		g.key, g.keyID = k, randomToken(40)
	})
	return g.key, g.keyID
}

// IDTokenPublicKey is the key that verifies the emulator's ID tokens (what
// Google publishes at https://www.googleapis.com/oauth2/v3/certs), and its
// key id, the "kid" of the tokens' header.
func (g *GoogleOAuth) IDTokenPublicKey() (*rsa.PublicKey, string) {
	k, kid := g.signingKey()
	return &k.PublicKey, kid
}

// revoke is Google's revocation endpoint: "The token can be an access token
// or a refresh token. If the token is an access token and it has a
// corresponding refresh token, the refresh token will also be revoked. If
// the revocation is successfully processed, then the HTTP status code of
// the response is 200. For error conditions, an HTTP status code 400 is
// returned along with an error code."
// (https://developers.google.com/identity/protocols/oauth2/web-server#tokenrevoke).
// The token comes in the form body or, as in Google's curl example, the
// query string; no client authentication is asked for. An unknown or
// already revoked token answers {"error": "invalid_token",
// "error_description": "Token expired or revoked"}, as
// https://github.com/mrdulin/nodejs-googleapis records Google answering.
func (g *GoogleOAuth) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "Bad Request")
		return
	}
	tok := r.Form.Get("token")
	g.mu.Lock()
	defer g.mu.Unlock()
	refresh := ""
	if gr, ok := g.refresh[tok]; ok && !gr.revoked {
		refresh = tok
	} else if a, ok := g.liveAccessLocked(tok); ok {
		refresh = a.refresh
		delete(g.access, tok)
	} else {
		oauthError(w, http.StatusBadRequest, "invalid_token", "Token expired or revoked")
		return
	}
	// The grant dies with every access token issued from it.
	if gr, ok := g.refresh[refresh]; ok {
		gr.revoked = true
		g.refresh[refresh] = gr
	}
	for t, a := range g.access {
		if a.refresh == refresh {
			delete(g.access, t)
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
	_, _ = w.Write([]byte("{}"))
}

// randomToken is n random URL-safe characters, shaped like the providers'
// tokens.
func randomToken(n int) string {
	return capability.Random(n)[:n]
}
