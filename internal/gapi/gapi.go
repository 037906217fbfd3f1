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

// Package gapi is the plumbing the operator's Google API clients
// (internal/gcalendar, internal/gsheets) share, so that it exists once: a
// client library service built on the one outbound HTTP policy with the
// call's access token added by a RoundTripper, and the classification of
// the library's *googleapi.Error into *outbound.Error. Each client wraps
// Classify with the special cases of its own API.
package gapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// ErrUnauthorized wraps Google's 401: the access token was refused, so the
// grant needs a refresh or a person's re-authorisation. The Sheets client
// also uses it for a 403 that is not a rate limit (the grant's user cannot
// open the spreadsheet).
var ErrUnauthorized = errors.New("google refused the access token")

// ErrNotFound wraps Google's 404: the resource named in the call does not
// exist (or is not visible to the token's user).
var ErrNotFound = errors.New("google does not know the resource")

type tokenKey struct{}

// WithToken returns a context whose calls carry token as their Bearer
// access token. The token travels in the context, not in the client, so
// that one client (one connection pool) serves every grant.
func WithToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// bearer adds the access token a call carries in its context.
type bearer struct{ next http.RoundTripper }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, _ := req.Context().Value(tokenKey{}).(string)
	if tok == "" {
		// Refuse rather than send an anonymous request: Google would
		// answer 401/403 and the failure would be blamed on the grant.
		return nil, errors.New("gapi: no access token in the call's context")
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	return b.next.RoundTrip(r)
}

// HTTPClient is out's HTTP client (upstream allowlist, redirect rule) with
// the bearer RoundTripper on top and the policy's per-request timeout.
func HTTPClient(out *outbound.Client) *http.Client {
	hc := out.HTTPClient()
	return &http.Client{Transport: bearer{next: hc.Transport}, CheckRedirect: hc.CheckRedirect, Timeout: outbound.DefaultTimeout}
}

// Options are the client options of a google.golang.org/api service sent
// under the outbound policy to endpoint (a base URL ending in "/").
func Options(out *outbound.Client, endpoint string) []option.ClientOption {
	return []option.ClientOption{
		option.WithEndpoint(endpoint),
		option.WithHTTPClient(HTTPClient(out)),
		option.WithUserAgent(outbound.DefaultUserAgent),
	}
}

// rateLimitReasons are the reasons that mean "slow down", not "no". The
// legacy errors[].reason values are the Calendar API's 403s
// (https://developers.google.com/calendar/api/guides/errors: 403
// usageLimits, rateLimitExceeded, userRateLimitExceeded, quotaExceeded);
// RATE_LIMIT_EXCEEDED is the google.rpc.ErrorInfo reason the v4 APIs such
// as Sheets put in error.details with their 429 RESOURCE_EXHAUSTED
// (reported verbatim in
// https://github.com/Sage-Bionetworks/data_curator/issues/110).
var rateLimitReasons = map[string]bool{
	"usageLimits": true, "rateLimitExceeded": true, "userRateLimitExceeded": true,
	"quotaExceeded": true, "dailyLimitExceeded": true, "RATE_LIMIT_EXCEEDED": true,
}

// Reason is the machine-readable reason of a Google error: the first
// errors[].reason (the v1-style body the Calendar API sends) or else the
// reason of a google.rpc.ErrorInfo in error.details (the v4-style body);
// "" when there is neither or err is not a *googleapi.Error.
func Reason(err error) string {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return ""
	}
	for _, it := range ge.Errors {
		if it.Reason != "" {
			return it.Reason
		}
	}
	for _, d := range ge.Details {
		m, _ := d.(map[string]any)
		if t, _ := m["@type"].(string); strings.HasSuffix(t, "google.rpc.ErrorInfo") {
			if r, _ := m["reason"].(string); r != "" {
				return r
			}
		}
	}
	return ""
}

// Status is the canonical status name of a Google error body
// ({"error": {"status": "PERMISSION_DENIED", ...}}), which the library
// does not parse into *googleapi.Error; "" when absent.
func Status(err error) string {
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Body == "" {
		return ""
	}
	var body struct {
		Error struct {
			Status string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(ge.Body), &body) != nil {
		return ""
	}
	return body.Error.Status
}

// Classify turns a library error from call (a method name such as
// "events.list", used in the reason) into an *outbound.Error of upstream
// u: network errors, 5xx, 429 and rate-limit 403s are transient, with
// Retry-After when sent; 401 wraps ErrUnauthorized; 404 wraps
// ErrNotFound; other 4xx are permanent. err must not be nil. Callers
// adjust the result for their API's own cases.
func Classify(call string, err error, u upstream.Name) *outbound.Error {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return &outbound.Error{Upstream: u, Class: outbound.Transient, Reason: call + ": " + err.Error(), Err: err}
	}
	msg := ge.Message
	if msg == "" {
		msg = http.StatusText(ge.Code)
	}
	e := &outbound.Error{Upstream: u, Status: ge.Code, Class: outbound.Permanent,
		Reason: fmt.Sprintf("%s: %d %s", call, ge.Code, strings.TrimSpace(msg)), Err: err}
	reason, status := Reason(err), Status(err)
	switch {
	case reason != "" && status != "":
		e.Reason += " (" + reason + ", " + status + ")"
	case reason != "" || status != "":
		e.Reason += " (" + reason + status + ")"
	}
	e.RetryAfter = outbound.ParseRetryAfter(ge.Header.Get("Retry-After"), time.Now())
	switch {
	case ge.Code == http.StatusUnauthorized:
		e.Err = errors.Join(ErrUnauthorized, err)
	case ge.Code == http.StatusNotFound:
		e.Err = errors.Join(ErrNotFound, err)
	case ge.Code == http.StatusTooManyRequests || ge.Code >= 500,
		ge.Code == http.StatusForbidden && (rateLimitReasons[reason] || status == "RESOURCE_EXHAUSTED"):
		e.Class = outbound.Transient
	}
	return e
}
