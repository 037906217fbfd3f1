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

package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// Error codes of the common error body (seed 000 §6.3). Every error the
// webhook server answers uses one of them, in
//
//	{"error": {"code": "...", "message": "...", "details": {...}}}
//
// The last seven are Switchboard's additions for statuses the seeds use
// elsewhere (409 in seed 004, 410 in seed 002) or that HTTP requires (405,
// 413, 415, 431, 501); they keep the same shape.
const (
	CodeInvalidRequest       = "INVALID_REQUEST"        // 400
	CodeUnauthorized         = "UNAUTHORIZED"           // 401
	CodeForbidden            = "FORBIDDEN"              // 403
	CodeNotFound             = "NOT_FOUND"              // 404
	CodeRateLimitExceeded    = "RATE_LIMIT_EXCEEDED"    // 429
	CodeInternal             = "INTERNAL_ERROR"         // 500
	CodeBadGateway           = "BAD_GATEWAY"            // 502
	CodeServiceUnavailable   = "SERVICE_UNAVAILABLE"    // 503
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"     // 405
	CodeConflict             = "CONFLICT"               // 409
	CodeGone                 = "GONE"                   // 410
	CodePayloadTooLarge      = "PAYLOAD_TOO_LARGE"      // 413
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE" // 415
	// CodeRequestHeadersTooLarge and CodeNotImplemented answer requests
	// net/http refuses before a handler runs (rawerrors.go).
	CodeRequestHeadersTooLarge = "REQUEST_HEADERS_TOO_LARGE" // 431
	CodeNotImplemented         = "NOT_IMPLEMENTED"           // 501
)

// codes maps each status the server answers to its code.
var codes = map[int]string{
	http.StatusBadRequest:                  CodeInvalidRequest,
	http.StatusUnauthorized:                CodeUnauthorized,
	http.StatusForbidden:                   CodeForbidden,
	http.StatusNotFound:                    CodeNotFound,
	http.StatusMethodNotAllowed:            CodeMethodNotAllowed,
	http.StatusConflict:                    CodeConflict,
	http.StatusGone:                        CodeGone,
	http.StatusRequestEntityTooLarge:       CodePayloadTooLarge,
	http.StatusUnsupportedMediaType:        CodeUnsupportedMediaType,
	http.StatusRequestHeaderFieldsTooLarge: CodeRequestHeadersTooLarge,
	http.StatusNotImplemented:              CodeNotImplemented,
	http.StatusTooManyRequests:             CodeRateLimitExceeded,
	http.StatusInternalServerError:         CodeInternal,
	http.StatusBadGateway:                  CodeBadGateway,
	http.StatusServiceUnavailable:          CodeServiceUnavailable,
}

// CodeFor returns the code for an HTTP status (INTERNAL_ERROR for a status
// the table does not list).
func CodeFor(status int) string {
	if c, ok := codes[status]; ok {
		return c
	}
	return CodeInternal
}

// Error is an answer in the common error format. Handlers return it; the
// server writes it. Message and Details are shown to the caller, so they
// must never hold a token or an internal detail.
type Error struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
	// RetryAfter, when positive, is sent as the Retry-After header (seconds).
	RetryAfter int
	// Cause is logged, never sent.
	Cause error
	// Headers are sent with the answer (WWW-Authenticate).
	Headers map[string]string
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%d %s: %s: %v", e.Status, e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// Errorf builds an Error for a status, with the code from the table.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Code: CodeFor(status), Message: fmt.Sprintf(format, args...)}
}

// WithDetails adds details shown to the caller.
func (e *Error) WithDetails(details map[string]any) *Error {
	e.Details = details
	return e
}

// WithHeader sends a header with the answer.
func (e *Error) WithHeader(name, value string) *Error {
	if e.Headers == nil {
		e.Headers = map[string]string{}
	}
	e.Headers[name] = value
	return e
}

// WithCause records the underlying error for the log only.
func (e *Error) WithCause(err error) *Error {
	e.Cause = err
	return e
}

type errorBody struct {
	Error errorPayload `json:"error"`
}

// errorPayload always carries details, an empty object when there are
// none: the README documents the field, so clients may read error.details
// without checking that it exists.
type errorPayload struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// WriteError writes e in the common format.
func WriteError(w http.ResponseWriter, e *Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	// The request's URL may carry a connect token, a code or a short
	// link: no answer lets a browser pass it on as a Referer (issue 17 §3).
	h.Set("Referrer-Policy", "no-referrer")
	if retryAfter := e.retryAfter(); retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	for k, v := range e.Headers {
		h.Set(k, v)
	}
	code := e.Code
	if code == "" {
		code = CodeFor(e.Status)
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(errorBody{Error: errorPayload{Code: code, Message: e.Message, Details: details}})
}

// retryAfter is the Retry-After e is answered with, in seconds: its own,
// else the default for a 503 (every 503 tells the sender when to come
// back, issue 7 §1.6), else none (0).
func (e *Error) retryAfter() int {
	if e.RetryAfter <= 0 && e.Status == http.StatusServiceUnavailable {
		return retryAfterSeconds(DefaultRetryAfter)
	}
	return max(e.RetryAfter, 0)
}

// asError turns any handler error into an *Error; anything that is not one
// already is an internal error whose text stays in the log.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Errorf(http.StatusInternalServerError, "internal error").WithCause(err)
}

// WriteJSON writes a JSON success answer.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// DecodeJSON reads a JSON request body into v. A body over the server's
// limit is 413, anything unparsable 400, a non-JSON content type 415.
func DecodeJSON(r *http.Request, v any) *Error {
	if e := requireJSON(r); e != nil {
		return e
	}
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		return bodyError(err, "request body is not valid JSON")
	}
	if dec.More() {
		return Errorf(http.StatusBadRequest, "request body must hold a single JSON value")
	}
	return nil
}

// requireJSON refuses a body declared as anything but JSON (415).
func requireJSON(r *http.Request) *Error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !isJSON(ct) {
		return Errorf(http.StatusUnsupportedMediaType, "request body must be application/json, not %s", ct)
	}
	return nil
}

// bodyError is a failed read of a request body: over the server's limit
// 413, anything else 400 with message.
func bodyError(err error, message string) *Error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return tooLargeError(tooLarge.Limit)
	}
	return Errorf(http.StatusBadRequest, "%s", message).WithCause(err)
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

func tooLargeError(limit int64) *Error {
	return Errorf(http.StatusRequestEntityTooLarge, "request body is larger than %d bytes", limit).
		WithDetails(map[string]any{"limitBytes": limit})
}
