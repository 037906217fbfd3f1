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
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Authentication, access, quotas and error bodies of the Sheets emulator.

// googleStatusError writes the error body of Google's newer APIs, the JSON
// form of google.rpc.Status that Sheets answers: {"error": {"code",
// "message", "status"}}, with "errors" (the older per-item list) and
// "details" (typed google.rpc messages) where Google sends them
// ("Handle errors", https://cloud.google.com/apis/design/errors#http_mapping).
// Calendar's googleError writes the older shape without "status".
func googleStatusError(w http.ResponseWriter, code int, message string, errs []map[string]string, details ...any) {
	body := map[string]any{"code": code, "message": message, "status": rpcStatus(code)}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	if len(details) > 0 {
		body["details"] = details
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	b, _ := json.MarshalIndent(map[string]any{"error": body}, "", "  ")
	_, _ = w.Write(b)
}

// rpcStatus is the canonical status of an HTTP code (the mapping table of
// https://cloud.google.com/apis/design/errors#handling_errors).
func rpcStatus(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	default:
		return "INTERNAL"
	}
}

// sheetsProjectNumber is the Cloud project the emulator's quota errors
// name as their consumer (Google names the OAuth client's project).
const sheetsProjectNumber = "123456789012"

// Google's Sheets error messages.
const (
	// "Requested entity was not found." with status NOT_FOUND
	// (https://github.com/nikaia/translation-sheet/issues/10). That 2017
	// answer also carried an "errors" list, which Google's later answers of
	// the same API no longer do (the 400 and 403 below, from 2023), so the
	// emulator sends none.
	sheetsNotFound = "Requested entity was not found."
	// 403 PERMISSION_DENIED for a spreadsheet the user may not use this way
	// (https://github.com/gglukmann/use-google-sheets/issues/37, 2023).
	sheetsNoPermission = "The caller does not have permission"
)

// authorize checks the Bearer token and its scope for a read or a write
// and returns the user's subject; it answers the error and returns false
// when the request may not proceed.
func (g *GoogleSheets) authorize(w http.ResponseWriter, r *http.Request, write bool) (string, bool) {
	var scope, sub string
	present, ok := r.Header.Get("Authorization") != "", false
	if g.oauth != nil {
		scope, sub, present, ok = g.oauth.bearerGrant(r)
	}
	switch {
	case !present && !write:
		// Reads may use an API key (public spreadsheets), so a read with
		// no credential at all is refused as one without a key: 403
		// "The request is missing a valid API key." PERMISSION_DENIED
		// (https://github.com/theoephraim/node-google-spreadsheet/issues/497).
		googleStatusError(w, http.StatusForbidden, "The request is missing a valid API key.", nil)
		return "", false
	case !present:
		// Writes need OAuth: 401 "Request is missing required
		// authentication credential. …"
		// (https://github.com/googleapis/google-auth-library-nodejs/issues/168).
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
		googleStatusError(w, http.StatusUnauthorized, "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.", nil)
		return "", false
	case !ok:
		// An expired, revoked or unknown token
		// (https://github.com/googleapis/google-api-php-client/issues/1391).
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="invalid_token"`)
		googleStatusError(w, http.StatusUnauthorized, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.", nil)
		return "", false
	}
	allowed := sheetsReadScopes
	if write {
		allowed = sheetsWriteScopes
	}
	for _, s := range allowed {
		if hasScope(scope, s) {
			return sub, true
		}
	}
	// A token without a scope of the method: the challenge lists the
	// scopes that would do
	// (https://github.com/google/googleapis.dart/issues/208), the body is
	// 403 "Request had insufficient authentication scopes." with an
	// insufficientPermissions item
	// (https://github.com/googleworkspace/java-samples/issues/110).
	w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="insufficient_scope", scope="`+strings.Join(allowed, " ")+`"`)
	googleStatusError(w, http.StatusForbidden, "Request had insufficient authentication scopes.",
		[]map[string]string{{"domain": "global", "reason": "insufficientPermissions", "message": "Insufficient Permission"}})
	return "", false
}

// spreadsheetFor finds the spreadsheet of the request and checks the
// user's access to it; g.mu is held. It answers the error and returns nil
// when the request may not proceed.
func (g *GoogleSheets) spreadsheetFor(w http.ResponseWriter, r *http.Request, write bool) *spreadsheet {
	b, ok := g.books[r.PathValue("spreadsheetId")]
	switch {
	case !ok:
		googleStatusError(w, http.StatusNotFound, sheetsNotFound, nil)
		return nil
	case b.access == "none" || (write && b.access != "writer"):
		googleStatusError(w, http.StatusForbidden, sheetsNoPermission, nil)
		return nil
	}
	return b
}

// chargeWrite counts a write request of the user against the per-minute
// quota; g.mu is held. Google's quotas "are refilled every minute"
// ("Usage limits", https://developers.google.com/sheets/api/limits); the
// emulator counts calendar minutes of its clock. Over quota it answers
// Google's 429, as users recorded it
// (https://github.com/Sage-Bionetworks/data_curator/issues/110 and, for the
// metadata's full form,
// https://github.com/n8n-io/n8n/issues/16750), and returns false. The
// quota is charged before the request is looked at, as Google's front end
// does, so a request that then fails still counts.
func (g *GoogleSheets) chargeWrite(w http.ResponseWriter, sub string) bool {
	minute := g.now().Truncate(time.Minute)
	q := g.writes[sub]
	if !q.start.Equal(minute) {
		q = quotaWindow{start: minute}
	}
	if q.n >= g.writeQuota || g.now().Before(g.otherWriters[sub]) {
		const project = sheetsProjectNumber
		googleStatusError(w, http.StatusTooManyRequests,
			"Quota exceeded for quota metric 'Write requests' and limit 'Write requests per minute per user' of service 'sheets.googleapis.com' for consumer 'project_number:"+project+"'.",
			nil,
			map[string]any{
				"@type":  "type.googleapis.com/google.rpc.ErrorInfo",
				"reason": "RATE_LIMIT_EXCEEDED",
				"domain": "googleapis.com",
				"metadata": map[string]string{
					"quota_limit":       "WriteRequestsPerMinutePerUser",
					"quota_unit":        "1/min/{project}/{user}",
					"quota_location":    "global",
					"quota_limit_value": strconv.Itoa(g.writeQuota),
					"consumer":          "projects/" + project,
					"service":           "sheets.googleapis.com",
					"quota_metric":      "sheets.googleapis.com/write_requests",
				},
			},
			map[string]any{
				"@type": "type.googleapis.com/google.rpc.Help",
				"links": []map[string]string{{
					"description": "Request a higher quota limit.",
					"url":         "https://cloud.google.com/docs/quotas/help/request_increase",
				}},
			})
		return false
	}
	q.n++
	g.writes[sub] = q
	return true
}
