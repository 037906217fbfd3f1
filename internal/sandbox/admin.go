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
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// The emulators' admin endpoints (under /_sandbox/, neither counted nor
// faulted) take and answer JSON; these helpers serve them alike.

// adminDecode reads a JSON body into v, refusing unknown fields; it
// answers 400 and returns false when the body does not fit.
func adminDecode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		adminError(w, http.StatusBadRequest, fmt.Errorf("body: %w", err))
		return false
	}
	return true
}

func adminError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

// adminRefusal is an admin request refused with a status of its own
// rather than adminDone's 404.
type adminRefusal struct {
	status int
	err    error
}

func (e *adminRefusal) Error() string { return e.err.Error() }

// adminBadRequest refuses an admin request with 400.
func adminBadRequest(err error) error {
	return &adminRefusal{status: http.StatusBadRequest, err: err}
}

// errAdminNoID refuses a create request without an id.
var errAdminNoID = adminBadRequest(errors.New("id is required"))

// adminDone answers 204, or err: with its status for an adminRefusal, else
// 404 (the controls' errors are unknown spreadsheets, calendars, events).
func adminDone(w http.ResponseWriter, err error) {
	var refusal *adminRefusal
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.As(err, &refusal):
		adminError(w, refusal.status, refusal.err)
	default:
		adminError(w, http.StatusNotFound, err)
	}
}

// adminBody serves an admin endpoint whose JSON body is a T: apply
// carries it out, and adminDone answers.
func adminBody[T any](apply func(r *http.Request, body T) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body T
		if !adminDecode(w, r, &body) {
			return
		}
		adminDone(w, apply(r, body))
	}
}

// adminList serves an admin endpoint that answers a list: [] rather than
// null when it is empty.
func adminList[T any](list func(r *http.Request) []T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		items := list(r)
		if items == nil {
			items = []T{}
		}
		writeJSON(w, http.StatusOK, items)
	}
}
