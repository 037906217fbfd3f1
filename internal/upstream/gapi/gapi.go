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
// (internal/upstream/gcalendar, internal/upstream/gsheets) share, so that it exists once: a
// client library service built on the one outbound HTTP policy with the
// call's access token added by a RoundTripper, and the classification of
// the library's *googleapi.Error into *outbound.Error. Each client wraps
// Classify with the special cases of its own API.
package gapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
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

// Classifier is Google's outbound.Classifier, the one rule for every
// Google API answer, whether it comes through outbound.Client.Do
// (Request.Classify) or from the client library (Classify). Google
// answers some rate limits with 403 instead of 429: a 403 whose body has a
// rate-limit reason (rateLimitReasons) or the canonical status
// RESOURCE_EXHAUSTED ("Either out of resource quota or reaching rate
// limiting", https://cloud.google.com/apis/design/errors) is transient.
// Every other answer is left to outbound.DefaultClass (429 and 5xx
// transient).
func Classifier(status int, _ http.Header, body []byte) (outbound.Class, bool) {
	if status != http.StatusForbidden {
		return 0, false
	}
	reason, canonical := readBody(body)
	if rateLimitReasons[reason] || canonical == "RESOURCE_EXHAUSTED" {
		return outbound.Transient, true
	}
	return 0, false
}

// errorBody is what is read of a Google error body: the v1-style
// errors[].reason the Calendar API sends, the canonical status name, and
// the google.rpc.ErrorInfo in error.details of the v4-style body. The
// lists are read apart, so that one the library would not understand does
// not hide the status.
type errorBody struct {
	Error struct {
		Errors  json.RawMessage `json:"errors"`
		Status  string          `json:"status"`
		Details json.RawMessage `json:"details"`
	} `json:"error"`
}

// readBody is the machine-readable reason of a Google error body (the
// first errors[].reason, or else the reason of a google.rpc.ErrorInfo in
// error.details) and its canonical status ({"error": {"status":
// "PERMISSION_DENIED"}}); "" for what is absent or not JSON. Like the
// client library, it also reads a body that is a JSON array of errors.
func readBody(body []byte) (reason, status string) {
	var eb errorBody
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
		arr := []*errorBody{&eb}
		if json.Unmarshal(trimmed, &arr) != nil {
			return "", ""
		}
	} else if json.Unmarshal(body, &eb) != nil {
		return "", ""
	}
	var items []struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(eb.Error.Errors, &items)
	for _, it := range items {
		if it.Reason != "" {
			return it.Reason, eb.Error.Status
		}
	}
	var details []any
	_ = json.Unmarshal(eb.Error.Details, &details)
	for _, d := range details {
		m, _ := d.(map[string]any)
		if t, _ := m["@type"].(string); strings.HasSuffix(t, "google.rpc.ErrorInfo") {
			if r, _ := m["reason"].(string); r != "" {
				return r, eb.Error.Status
			}
		}
	}
	return "", eb.Error.Status
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
	reason, _ := readBody([]byte(ge.Body))
	return reason
}

// Status is the canonical status name of a Google error body
// ({"error": {"status": "PERMISSION_DENIED", ...}}), which the library
// does not parse into *googleapi.Error; "" when absent.
func Status(err error) string {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return ""
	}
	_, status := readBody([]byte(ge.Body))
	return status
}

// Classify turns a library error from call (a method name such as
// "events.list", used in the reason) into an *outbound.Error of upstream
// u, classed by Classifier: network errors, 5xx, 429 and rate-limit 403s
// are transient, with Retry-After when sent; 401 wraps ErrUnauthorized;
// 404 wraps ErrNotFound; other 4xx are permanent. err must not be nil.
// Callers adjust the result for their API's own cases.
func Classify(call string, err error, u upstream.Name) *outbound.Error {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return &outbound.Error{Upstream: u, Class: outbound.Transient, Reason: call + ": " + err.Error(), Err: err}
	}
	msg := ge.Message
	if msg == "" {
		msg = http.StatusText(ge.Code)
	}
	e := &outbound.Error{Upstream: u, Status: ge.Code, Err: err,
		Class:  outbound.ClassOf(Classifier, ge.Code, ge.Header, []byte(ge.Body)),
		Reason: fmt.Sprintf("%s: %d %s", call, ge.Code, strings.TrimSpace(msg))}
	switch reason, status := readBody([]byte(ge.Body)); {
	case reason != "" && status != "":
		e.Reason += " (" + reason + ", " + status + ")"
	case reason != "" || status != "":
		e.Reason += " (" + reason + status + ")"
	}
	e.RetryAfter = outbound.ParseRetryAfter(ge.Header.Get("Retry-After"), time.Now())
	switch ge.Code {
	case http.StatusUnauthorized:
		e.Err = errors.Join(ErrUnauthorized, err)
	case http.StatusNotFound:
		e.Err = errors.Join(ErrNotFound, err)
	}
	return e
}
