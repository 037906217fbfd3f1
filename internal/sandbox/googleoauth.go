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
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
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
// token and no new refresh token.
type GoogleOAuth struct {
	// AccessTokenLifetime is the expires_in of new access tokens (Google: 3599 s).
	AccessTokenLifetime time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	mu      sync.Mutex
	clients map[string]string // client_id → client_secret
	codes   map[string]authCode
	refresh map[string]grant
	access  map[string]accessToken
}

type authCode struct {
	clientID, redirectURI, scope, challenge string
}

type grant struct {
	clientID, scope string
	revoked         bool
}

type accessToken struct {
	clientID, scope string
	expires         time.Time
}

// NewGoogleOAuth returns an emulator with no registered clients.
func NewGoogleOAuth() *GoogleOAuth {
	return &GoogleOAuth{
		AccessTokenLifetime: 3599 * time.Second,
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
	GoogleOAuthToken     = "googleoauth.token" //nolint:gosec // a route name, not a credential
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
	s.Handle(GoogleOAuthToken, "POST /googleoauth/token", g.token)
}

// AddClient registers an OAuth client.
func (g *GoogleOAuth) AddClient(id, secret string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.clients[id] = secret
}

// IssueRefreshToken creates a grant, as if a person had consented earlier.
func (g *GoogleOAuth) IssueRefreshToken(clientID, scope string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	tok := "1//" + randomToken(32)
	g.refresh[tok] = grant{clientID: clientID, scope: scope}
	return tok
}

// IssueCode creates an authorization code, as the consent page would.
func (g *GoogleOAuth) IssueCode(clientID, redirectURI, scope string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	code := "4/" + randomToken(24)
	g.codes[code] = authCode{clientID: clientID, redirectURI: redirectURI, scope: scope}
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
	a, ok := g.access[tok]
	if !ok || !g.now().Before(a.expires) {
		return "", false
	}
	return a.scope, true
}

func (g *GoogleOAuth) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// authorize approves at once and redirects back with a code, as a person
// clicking "Allow" would.
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
	target, err := url.Parse(redirectURI)
	if err != nil || redirectURI == "" || q.Get("response_type") != "code" {
		http.Error(w, "Error 400: invalid_request", http.StatusBadRequest)
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
	if st := q.Get("state"); st != "" {
		back.Set("state", st)
	}
	target.RawQuery = back.Encode()
	// Redirecting to the client's redirect_uri is what a consent page does;
	// the sandbox serves tests and the demo only.
	http.Redirect(w, r, target.String(), http.StatusFound) //nolint:gosec // G710: by design, see above
}

func oauthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
	w.WriteHeader(status)
	// Google pretty-prints its token endpoint errors.
	b, _ := json.MarshalIndent(map[string]string{"error": code, "error_description": description}, "", "  ")
	_, _ = w.Write(b)
}

// formClient reads a form-encoded token request's client credentials: the
// Basic Authorization header, else client_id and client_secret in the body
// (RFC 6749 §2.3.1; Google and Discord take both). The form must be parsed.
func formClient(r *http.Request) (id, secret string) {
	if id, secret, ok := r.BasicAuth(); ok {
		return id, secret
	}
	return r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
}

func (g *GoogleOAuth) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "Could not determine client ID from request.")
		return
	}
	clientID, secret := formClient(r)
	g.mu.Lock()
	defer g.mu.Unlock()
	want, known := g.clients[clientID]
	switch {
	case clientID == "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "Could not determine client ID from request.")
		return
	case !known:
		oauthError(w, http.StatusUnauthorized, "invalid_client", "The OAuth client was not found.")
		return
	case subtle.ConstantTimeCompare([]byte(secret), []byte(want)) != 1:
		oauthError(w, http.StatusUnauthorized, "invalid_client", "Unauthorized")
		return
	}

	switch gt := r.PostForm.Get("grant_type"); gt {
	case "authorization_code":
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
		refresh := "1//" + randomToken(32)
		g.refresh[refresh] = grant{clientID: clientID, scope: c.scope}
		g.writeToken(w, clientID, c.scope, refresh)
	case "refresh_token":
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
		g.writeToken(w, clientID, gr.scope, "")
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type: "+gt)
	}
}

// writeToken answers a new access token; g.mu is held.
func (g *GoogleOAuth) writeToken(w http.ResponseWriter, clientID, scope, refresh string) {
	tok := "ya29." + randomToken(48)
	g.access[tok] = accessToken{clientID: clientID, scope: scope, expires: g.now().Add(g.AccessTokenLifetime)}
	body := map[string]any{
		"access_token": tok,
		"expires_in":   int(g.AccessTokenLifetime / time.Second),
		"scope":        scope,
		"token_type":   "Bearer",
	}
	if refresh != "" {
		body["refresh_token"] = refresh
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
	w.Header().Set("Pragma", "no-cache")
	b, _ := json.MarshalIndent(body, "", "  ")
	_, _ = w.Write(b)
}

func pkceMatches(challenge, verifier string) bool {
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// randomToken is n random URL-safe characters, shaped like the providers'
// tokens.
func randomToken(n int) string {
	return capability.Random(n)[:n]
}
