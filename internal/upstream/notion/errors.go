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

package notion

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jomei/notionapi"

	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// The SDK drops a 429's Retry-After; this transport keeps it for the call
// that asked (through the request context).
type retryAfterKey struct{}

type retryAfterTransport struct{ next http.RoundTripper }

func (t retryAfterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
		if holder, ok := req.Context().Value(retryAfterKey{}).(*time.Duration); ok {
			*holder = outbound.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		}
	}
	return resp, err
}

// withRetryAfter gives a call a place for a 429's Retry-After.
func withRetryAfter(ctx context.Context) (context.Context, *time.Duration) {
	var d time.Duration
	return context.WithValue(ctx, retryAfterKey{}, &d), &d
}

// Classifier is Notion's outbound.Classifier, the one rule for every
// Notion answer, whether it comes through outbound.Client.Do
// (Request.Classify) or from the client library (classify). A 409
// conflict_error is a collision with another edit of the same object:
// "Make sure the parameters are up to date and try again"
// (https://developers.notion.com/reference/status-codes). The operator's
// writes carry no version to bring up to date, so trying again is all it
// takes, on the same schedule as a 5xx: 409 is transient. Every other
// answer is left to outbound.DefaultClass (429 and 5xx transient).
func Classifier(status int, _ http.Header, _ []byte) (outbound.Class, bool) {
	if status == http.StatusConflict {
		return outbound.Transient, true
	}
	return 0, false
}

// classify maps the library's errors onto the outbound classes by
// Classifier: 429, 409 and 5xx (and a broken connection) are transient,
// every other status permanent.
func classify(what string, err error, retryAfter ...*time.Duration) error {
	if err == nil {
		return nil
	}
	var ae *notionapi.Error
	var rl *notionapi.RateLimitedError
	switch {
	case errors.As(err, &rl):
		e := &outbound.Error{Upstream: upstream.Notion, Class: outbound.Transient, Status: http.StatusTooManyRequests,
			Reason: what + ": rate limited (429)", Err: err}
		if len(retryAfter) > 0 && retryAfter[0] != nil {
			e.RetryAfter = *retryAfter[0]
		}
		return e
	case errors.As(err, &ae):
		// The library keeps neither the answer's header nor its body.
		return &outbound.Error{Upstream: upstream.Notion, Class: outbound.ClassOf(Classifier, ae.Status, nil, nil), Status: ae.Status,
			Reason: fmt.Sprintf("%s: HTTP %d %s: %s", what, ae.Status, ae.Code, ae.Message), Err: err}
	case outbound.IsTransient(err) || outbound.IsPermanent(err):
		return err
	}
	var oe *outbound.Error
	if errors.As(err, &oe) {
		return err
	}
	if strings.Contains(err.Error(), upstream.ErrHostNotAllowed.Error()) {
		return &outbound.Error{Upstream: upstream.Notion, Class: outbound.Permanent, Reason: what + ": " + err.Error(), Err: err}
	}
	return &outbound.Error{Upstream: upstream.Notion, Class: outbound.Transient, Reason: what + ": " + err.Error(), Err: err}
}

// IsUnauthorized reports a 401: the token no longer works.
func IsUnauthorized(err error) bool {
	e, ok := outbound.Classify(err)
	return ok && e.Status == http.StatusUnauthorized
}

// IsNotFound reports a 404: the object does not exist, or is not shared
// with the integration (Notion answers both alike).
func IsNotFound(err error) bool {
	e, ok := outbound.Classify(err)
	return ok && e.Status == http.StatusNotFound
}
