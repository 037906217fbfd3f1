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
	"crypto/subtle"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// Route names of the Discord emulator.
const (
	DiscordAuthorize = "discord.authorize"
	DiscordToken     = "discord.token" //nolint:gosec // a route name, not a credential
	DiscordUsersMe   = "discord.users.me"
)

// DiscordUser is the account a Discord grant is for.
type DiscordUser struct {
	// ID is the user's snowflake, a decimal string.
	ID, Username, GlobalName string
	// Avatar is the avatar hash; "" is the default avatar, which Discord
	// answers as null (docs/resources/user, "User Object": avatar ?string).
	Avatar string
}

// Discord emulates Discord's OAuth2 (the authorization code grant of
// docs/topics/oauth2 in discord/discord-api-docs) and the one API call a
// receiver needs, GET /api/users/@me:
//
//   - The consent page (/oauth2/authorize) approves at once for the consent
//     user (or asks, with ConsentPrompt on), or answers
//     error=access_denied when none is set or the person cancels (RFC 6749
//     §4.1.2.1).
//   - The token endpoint (/api/oauth2/token) accepts only
//     application/x-www-form-urlencoded ("JSON content is not permitted",
//     docs/topics/oauth2), with the client in HTTP Basic authentication or
//     in the form. Codes are usable once and expire 100 s after they are
//     issued (a Discord engineer in discord/discord-api-docs#2526); a bad
//     one is 400 {"error": "invalid_grant", "error_description": "Invalid
//     \"code\" in request."} (discord/discord-api-docs#5579). PKCE (S256) is
//     checked when the authorization carried a challenge (Discord accepts
//     PKCE: discord/discord-api-docs#5531).
//   - Every refresh answers a new refresh token and kills the old one
//     (discord/discord-api-docs#5942: reusing it is invalid_grant;
//     member-gentei/member-gentei#18 quotes the description).
//   - Tokens live 604800 s (the documented access token response).
//   - Rate limits (Throttle): a throttled route answers 429 until its
//     bucket resets, with the JSON body {"message", "retry_after" (float
//     seconds), "global"} and Retry-After in whole seconds; GET
//     /users/@me also sends X-RateLimit-Limit, -Remaining, -Reset,
//     -Reset-After, -Bucket and -Scope, or X-RateLimit-Global with the
//     global limit (https://discord.com/developers/docs/topics/rate-limits,
//     "Exceeding A Rate Limit"). The token endpoint sends no X-RateLimit-*
//     headers ("Discord doesn't include the rate limit information headers
//     on the /oauth2/token route", breqdev/flask-discord-interactions#91).
//     Every request during the limit is answered 429 again, and counted
//     (RateLimited): Discord bans clients that keep making them ("Invalid
//     Request Limit", same page).
type Discord struct {
	ConsentPrompt

	// AccessTokenLifetime is the expires_in of new tokens (Discord: 7 days).
	AccessTokenLifetime time.Duration
	// CodeLifetime is how long an authorization code is accepted (100 s).
	CodeLifetime time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	mu      sync.Mutex
	clients map[string]string // client_id → client_secret
	codes   map[string]discordCode
	refresh map[string]discordGrant
	access  map[string]discordAccess
	consent DiscordUser
	limits  map[string]discordLimit // route name → its limit
	limited int                     // 429s answered
}

// discordLimit is a throttled route's bucket.
type discordLimit struct {
	bucket string
	until  time.Time
	global bool
}

// Throttle makes a route (DiscordToken, DiscordUsersMe) answer 429 for
// the next d, as its bucket would once exhausted; global says it is the
// global limit.
func (d *Discord) Throttle(route string, wait time.Duration, global bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.limits[route] = discordLimit{bucket: "b" + randomToken(8), until: d.now().Add(wait), global: global}
}

// RateLimited is how many requests were answered 429.
func (d *Discord) RateLimited() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.limited
}

// throttled answers 429 when route's bucket is exhausted; d.mu is not
// held.
func (d *Discord) throttled(w http.ResponseWriter, route string) bool {
	d.mu.Lock()
	l, ok := d.limits[route]
	now := d.now()
	if ok && !now.Before(l.until) {
		delete(d.limits, route)
		ok = false
	}
	if ok {
		d.limited++
	}
	d.mu.Unlock()
	if !ok {
		return false
	}
	left := l.until.Sub(now).Seconds()
	h := w.Header()
	h.Set("Retry-After", strconv.Itoa(int(math.Ceil(left))))
	if route != DiscordToken {
		if l.global {
			h.Set("X-RateLimit-Global", "true")
			h.Set("X-RateLimit-Scope", "global")
		} else {
			h.Set("X-RateLimit-Limit", "5")
			h.Set("X-RateLimit-Remaining", "0")
			h.Set("X-RateLimit-Reset", strconv.FormatFloat(float64(l.until.UnixMilli())/1000, 'f', 3, 64))
			h.Set("X-RateLimit-Reset-After", strconv.FormatFloat(left, 'f', 3, 64))
			h.Set("X-RateLimit-Bucket", l.bucket)
			h.Set("X-RateLimit-Scope", "user")
		}
	}
	writeJSON(w, http.StatusTooManyRequests, map[string]any{"message": "You are being rate limited.",
		"retry_after": math.Round(left*1000) / 1000, "global": l.global})
	return true
}

type discordGrant struct {
	clientID, scope string
	user            DiscordUser
}

type discordCode struct {
	discordGrant
	redirectURI, challenge string
	expires                time.Time
}

type discordAccess struct {
	discordGrant
	expires time.Time
}

// NewDiscord returns an emulator with no clients and no consent user.
func NewDiscord() *Discord {
	return &Discord{AccessTokenLifetime: 604800 * time.Second, CodeLifetime: 100 * time.Second,
		clients: map[string]string{}, codes: map[string]discordCode{},
		refresh: map[string]discordGrant{}, access: map[string]discordAccess{}, limits: map[string]discordLimit{}}
}

// Upstream implements Emulator.
func (d *Discord) Upstream() upstream.Name { return upstream.Discord }

// Register implements Emulator.
func (d *Discord) Register(s *Server) {
	s.Handle(DiscordAuthorize, "GET /discord/oauth2/authorize", d.authorize)
	s.Handle(DiscordAuthorize, "POST /discord/oauth2/authorize", d.authorize)
	s.Handle(DiscordToken, "POST /discord/api/oauth2/token", d.token)
	s.Handle(DiscordUsersMe, "GET /discord/api/users/@me", d.usersMe)
}

// AddClient registers an application's OAuth2 client.
func (d *Discord) AddClient(id, secret string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clients[id] = secret
}

// SetConsentUser is the user the consent page authorizes as; the zero user
// denies.
func (d *Discord) SetConsentUser(u DiscordUser) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.consent = u
}

// IssueRefreshToken creates a grant, as if the user had consented earlier.
func (d *Discord) IssueRefreshToken(clientID, scope string, u DiscordUser) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	rt := randomToken(30)
	d.refresh[rt] = discordGrant{clientID: clientID, scope: scope, user: u}
	return rt
}

func (d *Discord) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Discord) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d.mu.Lock()
	_, known := d.clients[q.Get("client_id")]
	user := d.consent
	d.mu.Unlock()
	back, ok := consentRedirect(w, r, known, "Invalid OAuth2 request: unknown client_id, or no redirect_uri or response_type=code.")
	if !ok {
		return
	}
	challenge := q.Get("code_challenge")
	if challenge != "" && q.Get("code_challenge_method") != "S256" {
		http.Error(w, "Invalid OAuth2 request: code_challenge_method must be S256.", http.StatusBadRequest)
		return
	}
	if !d.decided(w, r, back, "Discord", discordDenial()) {
		return
	}
	v := back.Query()
	if user.ID == "" {
		for k, vs := range discordDenial() {
			v[k] = vs
		}
	} else {
		code := randomToken(30)
		d.mu.Lock()
		d.codes[code] = discordCode{discordGrant: discordGrant{clientID: q.Get("client_id"), scope: q.Get("scope"), user: user},
			redirectURI: q.Get("redirect_uri"), challenge: challenge, expires: d.now().Add(d.CodeLifetime)}
		d.mu.Unlock()
		v.Set("code", code)
	}
	redirectToClient(w, r, back, v)
}

// discordDenial is what Discord sends back when the person cancels (RFC
// 6749 §4.1.2.1).
func discordDenial() url.Values {
	return url.Values{"error": {"access_denied"}, "error_description": {"The resource owner or authorization server denied the request"}}
}

func discordError(w http.ResponseWriter, status int, code, description string) {
	body := map[string]string{"error": code}
	if description != "" {
		body["error_description"] = description
	}
	writeJSON(w, status, body)
}

func (d *Discord) token(w http.ResponseWriter, r *http.Request) {
	// Throttled before anything is read: a code sent during the limit is
	// not spent.
	if d.throttled(w, DiscordToken) {
		return
	}
	// Without a form body the grant type cannot be read: a JSON body is
	// refused the same way as a missing grant_type.
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		discordError(w, http.StatusBadRequest, "unsupported_grant_type", "Unsupported grant type")
		return
	}
	if err := r.ParseForm(); err != nil {
		discordError(w, http.StatusBadRequest, "invalid_request", "")
		return
	}
	clientID, secret := formClient(r)
	d.mu.Lock()
	defer d.mu.Unlock()
	want, known := d.clients[clientID]
	if !known || subtle.ConstantTimeCompare([]byte(secret), []byte(want)) != 1 {
		discordError(w, http.StatusUnauthorized, "invalid_client", "")
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		code := r.PostForm.Get("code")
		c, ok := d.codes[code]
		delete(d.codes, code) // one use, whatever the outcome
		if !ok || c.clientID != clientID || !d.now().Before(c.expires) {
			discordError(w, http.StatusBadRequest, "invalid_grant", `Invalid "code" in request.`)
			return
		}
		if c.redirectURI != r.PostForm.Get("redirect_uri") {
			discordError(w, http.StatusBadRequest, "invalid_grant", `Invalid "redirect_uri" in request.`)
			return
		}
		if c.challenge != "" && !pkceMatches(c.challenge, r.PostForm.Get("code_verifier")) {
			discordError(w, http.StatusBadRequest, "invalid_grant", `Invalid "code_verifier" in request.`)
			return
		}
		d.issue(w, c.discordGrant)
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		g, ok := d.refresh[rt]
		if !ok || g.clientID != clientID {
			discordError(w, http.StatusBadRequest, "invalid_grant", `Invalid "refresh_token" in request.`)
			return
		}
		delete(d.refresh, rt) // rotated: the old refresh token is dead
		d.issue(w, g)
	default:
		discordError(w, http.StatusBadRequest, "unsupported_grant_type", "Unsupported grant type")
	}
}

// issue answers a new token pair; d.mu is held.
func (d *Discord) issue(w http.ResponseWriter, g discordGrant) {
	access, refresh := randomToken(30), randomToken(30)
	d.access[access] = discordAccess{discordGrant: g, expires: d.now().Add(d.AccessTokenLifetime)}
	d.refresh[refresh] = g
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": access, "token_type": "Bearer", "expires_in": int(d.AccessTokenLifetime / time.Second),
		"refresh_token": refresh, "scope": g.scope,
	})
}

// usersMe is GET /users/@me (docs/resources/user, "Get Current User"): the
// user of a Bearer token. Discord's unauthorized body is
// {"message": "401: Unauthorized", "code": 0}.
func (d *Discord) usersMe(w http.ResponseWriter, r *http.Request) {
	if d.throttled(w, DiscordUsersMe) {
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	d.mu.Lock()
	a, known := d.access[tok]
	d.mu.Unlock()
	if !ok || !known || !d.now().Before(a.expires) {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "401: Unauthorized", "code": 0})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": a.user.ID, "username": a.user.Username, "global_name": nilIfEmpty(a.user.GlobalName),
		"avatar": nilIfEmpty(a.user.Avatar), "discriminator": "0", "public_flags": 0,
	})
}
