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

// Package oauth is the one OAuth 2.0 engine every integration shares:
// provider configurations, the token store in Secrets, and the refresh
// engine (one refresh in flight per Secret, the new pair persisted in one
// optimistic update, invalid_grant explained by a re-read, 401 → re-auth,
// 429 → short backoff, 5xx → next timer). Adding a provider is adding a
// Provider value.
package oauth

import (
	"time"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// Encoding is how a token endpoint wants its request body.
type Encoding int

const (
	// Form is application/x-www-form-urlencoded (RFC 6749; Google, Discord).
	Form Encoding = iota
	// JSON is application/json (Notion, seed 000 §3.1.2 and §3.7.3).
	JSON
)

// Provider describes one OAuth 2.0 provider.
type Provider struct {
	// Name labels the provider in routes, logs and errors.
	Name string
	// AuthorizeURL is where a person's browser is sent to consent. It is not
	// an outbound call of the operator, so it is a full URL; when
	// AuthorizeUpstream is set the URL is built on that upstream instead, so
	// that the sandbox can serve the consent page (Notion's is on its API
	// host, Google's on accounts.google.com, Discord's on discord.com).
	AuthorizeURL      string
	AuthorizeUpstream upstream.Name
	AuthorizePath     string
	// TokenUpstream and TokenPath locate the token endpoint among the
	// configured upstreams, so tests and the demo point it at the sandbox.
	TokenUpstream upstream.Name
	TokenPath     string
	// Encoding of token requests; client credentials always go in a Basic
	// Authorization header (all three providers accept it, and it keeps the
	// secret out of bodies that might be logged).
	Encoding Encoding
	// PKCE sends an S256 code challenge with the authorization request.
	PKCE bool
	// Scopes requested.
	Scopes []string
	// AuthParams are extra authorization parameters (Notion: owner=user;
	// Google: access_type=offline and prompt=consent, so a refresh token is
	// issued).
	AuthParams map[string]string
	// AssumedLifetime applies when the token endpoint states no expires_in
	// (Notion, seed 000 §3.7.4: 7 days).
	AssumedLifetime time.Duration
	// UseOAuth2Library sends the token calls through golang.org/x/oauth2
	// (Google); otherwise the engine's own call is used (Notion's JSON body).
	UseOAuth2Library bool
	// RevokePath is the revocation endpoint on TokenUpstream (RFC 7009);
	// empty when the provider has none. RevokeWithClient sends the client
	// credentials with it (Discord wants them; Google's takes the token
	// alone).
	RevokePath       string
	RevokeWithClient bool
	// RememberRateLimits keeps a 429's wait (Engine.RateLimits) and sends
	// no token call until it has passed, for a provider that punishes
	// requests made into a limit (Discord). Other providers' 429s are left
	// to the callers' requeues.
	RememberRateLimits bool
}

// The providers. Discord shows that a further provider is configuration:
// its token endpoint is form-encoded, rotates refresh tokens, supports
// PKCE, and needs only an upstream name for its host.
var (
	Notion = Provider{
		Name:              "notion",
		AuthorizeURL:      "https://api.notion.com/v1/oauth/authorize",
		AuthorizeUpstream: upstream.Notion,
		AuthorizePath:     "/v1/oauth/authorize",
		TokenUpstream:     upstream.Notion,
		TokenPath:         "/v1/oauth/token",
		Encoding:          JSON,
		AuthParams:        map[string]string{"owner": "user"},
		AssumedLifetime:   7 * 24 * time.Hour,
	}
	Google = Provider{
		Name:              "google",
		AuthorizeURL:      "https://accounts.google.com/o/oauth2/v2/auth",
		AuthorizeUpstream: upstream.GoogleAccounts,
		AuthorizePath:     "/o/oauth2/v2/auth",
		TokenUpstream:     upstream.GoogleOAuth,
		TokenPath:         "/token",
		Encoding:          Form,
		PKCE:              true,
		AuthParams:        map[string]string{"access_type": "offline", "prompt": "consent"},
		AssumedLifetime:   time.Hour,
		UseOAuth2Library:  true,
		// https://developers.google.com/identity/protocols/oauth2/web-server
		// ("Revoking a token"): POST https://oauth2.googleapis.com/revoke
		// with token= in a form body.
		RevokePath: "/revoke",
	}
	// Discord's URLs: docs/topics/oauth2 ("OAuth2 URLs") in
	// discord/discord-api-docs.
	Discord = Provider{
		Name:              "discord",
		AuthorizeURL:      "https://discord.com/oauth2/authorize",
		AuthorizeUpstream: upstream.Discord,
		AuthorizePath:     "/oauth2/authorize",
		TokenUpstream:     upstream.Discord,
		TokenPath:         "/api/oauth2/token",
		Encoding:          Form,
		PKCE:              true,
		Scopes:            []string{"identify"},
		AssumedLifetime:   7 * 24 * time.Hour,
		// docs/topics/oauth2 ("Token Revocation Example"): form body with
		// token and token_type_hint, client credentials by Basic auth.
		RevokePath:       "/api/oauth2/token/revoke",
		RevokeWithClient: true,
		// https://discord.com/developers/docs/topics/rate-limits: "not
		// making requests on exhausted buckets until after they have
		// reset"; repeated 429s get the client banned.
		RememberRateLimits: true,
	}
)

// WithAssumedLifetime is p with the access-token lifetime assumed when the
// token endpoint states none (a NotionIntegration's
// spec.tokenRefresh.assumedLifetime, seed 000 §3.7.4); d <= 0 keeps p's.
func (p Provider) WithAssumedLifetime(d time.Duration) Provider {
	if d > 0 {
		p.AssumedLifetime = d
	}
	return p
}

// WithScopes is p asking for the given scopes.
func (p Provider) WithScopes(scopes ...string) Provider {
	p.Scopes = scopes
	return p
}
