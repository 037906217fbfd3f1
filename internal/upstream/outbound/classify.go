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

package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// Class says whether retrying can help.
type Class int

const (
	// Transient failures may succeed later: 5xx, 429, timeouts, broken
	// connections (seed 001 §7.2).
	Transient Class = iota + 1
	// Permanent failures will not: 404, 403, other 4xx (unless the
	// upstream's Classifier says otherwise), bodies that are too large or
	// cannot be parsed, hosts that are not upstreams.
	Permanent
)

func (c Class) String() string {
	if c == Transient {
		return "transient"
	}
	return "permanent"
}

// Classifier is an upstream's own reading of a non-2xx answer, for the
// statuses whose meaning the upstream bends: Google answers a rate limit
// with 403 rateLimitExceeded (gapi.Classifier), Notion a collision with
// another edit with 409 conflict_error (notion.Classifier). It returns
// ok=false to leave an answer to the default rule (DefaultClass). Each
// upstream defines one, next to its client, and uses it both on the
// requests it sends through Client.Do (Request.Classify) and on the errors
// its client library returns (ClassOf), so that there is one rule per
// upstream. body is at most the first 4 KiB of the answer.
type Classifier func(status int, header http.Header, body []byte) (Class, bool)

// DefaultClass is the rule for an answer no Classifier claims: 429 and
// 5xx are transient; 404, 403, every other 4xx, and 1xx/3xx that were not
// followed are permanent (seed 001 §7.2).
func DefaultClass(status int) Class {
	if status == http.StatusTooManyRequests || status >= 500 {
		return Transient
	}
	return Permanent
}

// ClassOf is the class of a non-2xx answer: c's, when c is not nil and
// claims it, else DefaultClass.
func ClassOf(c Classifier, status int, header http.Header, body []byte) Class {
	if c != nil {
		if class, ok := c(status, header, body); ok {
			return class
		}
	}
	return DefaultClass(status)
}

// Error is a classified outbound failure.
type Error struct {
	Upstream upstream.Name
	Class    Class
	// Status is the HTTP status, 0 when there was no answer.
	Status int
	// RetryAfter is what the upstream asked for (Retry-After), if anything.
	RetryAfter time.Duration
	// Reason is short and safe to show a person: it never holds a token.
	Reason string
	// Body is the start of a non-2xx answer, for callers that parse error
	// bodies (at most 4 KiB).
	Body []byte
	// Header is the answer's header, for callers that read a provider's
	// own rate-limit headers (Discord's X-RateLimit-Bucket). Nil when
	// there was no answer.
	Header http.Header
	Err    error
}

func (e *Error) Error() string { return string(e.Upstream) + ": " + e.Reason }

func (e *Error) Unwrap() error { return e.Err }

// Classify returns the classification of err, or ok=false when err is not
// an outbound error.
func Classify(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// IsTransient reports whether err is worth retrying.
func IsTransient(err error) bool {
	e, ok := Classify(err)
	return ok && e.Class == Transient
}

// IsPermanent reports whether err is a permanent upstream failure.
func IsPermanent(err error) bool {
	e, ok := Classify(err)
	return ok && e.Class == Permanent
}

// PermanentError builds the error a caller returns when an answer arrived
// but is unusable (unparsable JSON, a wrong type, a missing field).
func PermanentError(u upstream.Name, reason string, err error) *Error {
	return &Error{Upstream: u, Class: Permanent, Reason: reason, Err: err}
}
func transportError(u upstream.Name, err error, timeout time.Duration) *Error {
	switch {
	case errors.Is(err, upstream.ErrHostNotAllowed):
		return &Error{Upstream: u, Class: Permanent, Reason: "refused: " + upstream.ErrHostNotAllowed.Error(), Err: err}
	case errors.Is(err, ErrSinkAddressRefused):
		return sinkRefused(err)
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return &Error{Upstream: u, Class: Transient, Reason: fmt.Sprintf("no answer within %s", timeout), Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Upstream: u, Class: Transient, Reason: "request cancelled", Err: err}
	default:
		return &Error{Upstream: u, Class: Transient, Reason: "connection failed: " + shortTransportReason(err), Err: err}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// shortTransportReason keeps the innermost cause, without the request URL
// (which could carry a query a person should not see in a status).
func shortTransportReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

func statusError(u upstream.Name, c Classifier, resp *http.Response, body []byte) *Error {
	return &Error{Upstream: u, Status: resp.StatusCode, Body: body, Header: resp.Header,
		Class:      ClassOf(c, resp.StatusCode, resp.Header, body),
		RetryAfter: ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
		Reason:     fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))}
}

// ParseRetryAfter reads a Retry-After header: delay-seconds or an
// HTTP-date. Zero when absent or unreadable.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
