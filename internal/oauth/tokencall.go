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

package oauth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// The token call: one POST to a provider's token endpoint, by the
// engine's own request or through golang.org/x/oauth2 (Google), and its
// answer or failure in the engine's terms.

// Internal outcomes of a token call.
var (
	errInvalidGrant = errors.New("invalid_grant")
)

// tokenResponse is the union of the providers' token answers.
type tokenResponse struct {
	AccessToken  string
	RefreshToken string
	TokenType    string
	ExpiresIn    int64
	// Extra are the provider's own string fields (Notion: workspace_id,
	// workspace_name, bot_id, duplicated_template_id).
	Extra map[string]string
}

// extraKeys are the provider fields kept with the grant: Notion's (seed 000
// §3.1.2), and the scope granted (Discord states it, seed 003 sess:{sid}).
var extraKeys = []string{"workspace_id", "workspace_name", "bot_id", "duplicated_template_id", KeyScope}

func (e *Engine) call(ctx context.Context, p Provider, creds ClientCredentials, params map[string]string) (tokenResponse, error) {
	if p.UseOAuth2Library {
		return e.callOAuth2(ctx, p, creds, params)
	}
	var body []byte
	contentType := "application/json"
	if p.Encoding == JSON {
		body, _ = json.Marshal(params)
	} else {
		v := url.Values{}
		for k, s := range params {
			v.Set(k, s)
		}
		body, contentType = []byte(v.Encode()), "application/x-www-form-urlencoded"
	}
	basic := base64.StdEncoding.EncodeToString([]byte(creds.ID + ":" + creds.Secret))
	resp, err := e.Out.Do(ctx, outbound.Request{
		Upstream: p.TokenUpstream, Method: http.MethodPost, Path: p.TokenPath, Body: bytes.NewReader(body),
		Header: http.Header{"Content-Type": {contentType}, "Accept": {"application/json"}, "Authorization": {"Basic " + basic}},
	})
	if oe, ok := outbound.Classify(err); ok && oe.Status == http.StatusTooManyRequests && p.RememberRateLimits {
		wait := e.RateLimits().Observe(p.TokenUpstream, p.TokenPath, oe.Status, oe.Header, oe.Body)
		return tokenResponse{}, RateLimited(p.TokenUpstream, p.TokenPath, wait, true)
	}
	if err != nil {
		return tokenResponse{}, classify(err)
	}
	if p.RememberRateLimits {
		e.RateLimits().Observe(p.TokenUpstream, p.TokenPath, resp.Status, resp.Header, nil)
	}
	var raw map[string]any
	if err := json.Unmarshal(resp.Body, &raw); err != nil {
		return tokenResponse{}, outbound.PermanentError(p.TokenUpstream, "token answer is not JSON", err)
	}
	r := tokenResponse{Extra: map[string]string{}}
	r.AccessToken, _ = raw["access_token"].(string)
	r.RefreshToken, _ = raw["refresh_token"].(string)
	r.TokenType, _ = raw["token_type"].(string)
	if n, ok := raw["expires_in"].(float64); ok {
		r.ExpiresIn = int64(n)
	}
	for _, k := range extraKeys {
		if s, ok := raw[k].(string); ok {
			r.Extra[k] = s
		}
	}
	if r.AccessToken == "" {
		return tokenResponse{}, outbound.PermanentError(p.TokenUpstream, "token answer has no access_token", nil)
	}
	return r, nil
}

// classify turns a token endpoint failure into the engine's outcomes.
func classify(err error) error {
	oe, ok := outbound.Classify(err)
	if !ok {
		return err
	}
	switch code := tokenErrorCode(oe.Body); {
	case oe.Status == http.StatusUnauthorized || code == "invalid_client":
		return fmt.Errorf("%w (%s)", ErrReauthRequired, oe.Reason)
	case code == "invalid_grant":
		return errInvalidGrant
	}
	return err
}

// tokenErrorCode reads the error code of a token endpoint's refusal in
// either shape a provider answers: RFC 6749 §5.2's {"error":
// "invalid_grant", "error_description": ...}, or Notion's error object
// {"object": "error", "status": 400, "code": "invalid_grant", "message":
// ...}, which https://developers.notion.com/reference/status-codes lists
// for the token endpoint. "" when the body says neither.
func tokenErrorCode(body []byte) string {
	var e struct {
		Error  any    `json:"error"`
		Object string `json:"object"`
		Code   any    `json:"code"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	if s, ok := e.Error.(string); ok && s != "" {
		return s
	}
	// Discord's own errors carry a numeric code ({"message": "401:
	// Unauthorized", "code": 0}); only Notion's error object names the
	// OAuth error in "code".
	if s, ok := e.Code.(string); ok && e.Object == "error" {
		return s
	}
	return ""
}

// callOAuth2 makes the token call through golang.org/x/oauth2 (Google),
// on the outbound policy's allowlisted client.
func (e *Engine) callOAuth2(ctx context.Context, p Provider, creds ClientCredentials, params map[string]string) (tokenResponse, error) {
	cfg := &oauth2.Config{
		ClientID: creds.ID, ClientSecret: creds.Secret, Scopes: p.Scopes,
		Endpoint: oauth2.Endpoint{
			AuthURL:  p.AuthorizeURL,
			TokenURL: e.Out.Endpoint(p.TokenUpstream, p.TokenPath),
			// Named, not auto-detected: auto-detection sends every failed
			// call twice, which burns one-use codes and doubles 429s.
			AuthStyle: oauth2.AuthStyleInHeader,
		},
		RedirectURL: params["redirect_uri"],
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, e.Out.HTTPClient())
	var (
		tok *oauth2.Token
		err error
	)
	if params["grant_type"] == "authorization_code" {
		var opts []oauth2.AuthCodeOption
		if v := params["code_verifier"]; v != "" {
			opts = append(opts, oauth2.VerifierOption(v))
		}
		tok, err = cfg.Exchange(ctx, params["code"], opts...)
	} else {
		tok, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: params["refresh_token"]}).Token()
	}
	if err != nil {
		return tokenResponse{}, e.oauth2Failure(p, err)
	}
	r := tokenResponse{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, TokenType: tok.TokenType, Extra: map[string]string{}}
	if idt, ok := tok.Extra("id_token").(string); ok {
		if sub := subjectOf(idt); sub != "" {
			r.Extra[KeySubject] = sub
		}
	}
	if !tok.Expiry.IsZero() {
		r.ExpiresIn = int64(time.Until(tok.Expiry).Round(time.Second) / time.Second)
	}
	return r, nil
}

// oauth2Failure turns a failed golang.org/x/oauth2 token call into the
// engine's outcomes.
func (e *Engine) oauth2Failure(p Provider, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		switch {
		case re.Response.StatusCode == http.StatusTooManyRequests:
			// Throttled: transient, with the wait the endpoint asked for
			// (remembered for a provider that wants it); the controller
			// requeues on its schedule (no in-place loop).
			wait := outbound.ParseRetryAfter(re.Response.Header.Get("Retry-After"), e.now())
			if p.RememberRateLimits {
				wait = e.RateLimits().Observe(p.TokenUpstream, p.TokenPath, re.Response.StatusCode, re.Response.Header, re.Body)
			}
			return &outbound.Error{Upstream: p.TokenUpstream, Class: outbound.Transient, Status: http.StatusTooManyRequests,
				Reason: "HTTP 429 from the token endpoint", RetryAfter: wait}
		case re.Response.StatusCode == http.StatusUnauthorized || re.ErrorCode == "invalid_client":
			return fmt.Errorf("%w (%s: HTTP %d %s)", ErrReauthRequired, p.Name, re.Response.StatusCode, re.ErrorCode)
		case re.ErrorCode == "invalid_grant":
			return errInvalidGrant
		case re.Response.StatusCode >= 500:
			return &outbound.Error{Upstream: p.TokenUpstream, Class: outbound.Transient, Status: re.Response.StatusCode,
				Reason: fmt.Sprintf("HTTP %d from the token endpoint", re.Response.StatusCode)}
		}
		return &outbound.Error{Upstream: p.TokenUpstream, Class: outbound.Permanent, Status: re.Response.StatusCode,
			Reason: fmt.Sprintf("HTTP %d %s from the token endpoint", re.Response.StatusCode, re.ErrorCode)}
	}
	// Transport failures: the library wraps them; they are transient.
	return &outbound.Error{Upstream: p.TokenUpstream, Class: outbound.Transient, Reason: "token endpoint unreachable", Err: err}
}

// subjectOf reads the sub claim of an id_token. The signature is not
// checked: the token came straight from the provider's token endpoint over
// TLS, which Google's OpenID Connect guide allows ("Obtaining user profile
// information": an ID token received directly from Google over HTTPS need
// not be validated), and sub is shown, never trusted for access.
func subjectOf(idToken string) string {
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Sub string `json:"sub"`
	}
	if json.Unmarshal(payload, &claims) != nil || len(claims.Sub) > 255 {
		return ""
	}
	return claims.Sub
}
