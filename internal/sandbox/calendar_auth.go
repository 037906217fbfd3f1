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
	"strings"
)

// Authentication and error bodies of the Calendar emulator, as
// "Handle API errors"
// (https://developers.google.com/workspace/calendar/api/guides/errors)
// prints them.

// googleError writes Google's JSON error body: {"error": {"errors": [...],
// "code", "message"}} (guides/errors).
func googleError(w http.ResponseWriter, status int, domain, reason, message string, extra ...string) {
	item := map[string]string{"domain": domain, "reason": reason, "message": message}
	for i := 0; i+1 < len(extra); i += 2 {
		item[extra[i]] = extra[i+1]
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	b, _ := json.MarshalIndent(map[string]any{"error": map[string]any{
		"errors": []map[string]string{item}, "code": status, "message": message,
	}}, "", "  ")
	_, _ = w.Write(b)
}

func calendarNotFound(w http.ResponseWriter) {
	// guides/errors, "404: Not found".
	googleError(w, http.StatusNotFound, "global", "notFound", "Not Found")
}

func badRequest(w http.ResponseWriter, reason, message string, extra ...string) {
	googleError(w, http.StatusBadRequest, "global", reason, message, extra...)
}

// authorize checks the Bearer token and its scope; it answers the error and
// returns false when the request may not proceed.
func (c *GoogleCalendar) authorize(w http.ResponseWriter, r *http.Request, allowed func(scope string) bool) bool {
	h := r.Header.Get("Authorization")
	tok, isBearer := strings.CutPrefix(h, "Bearer ")
	if h == "" {
		// No credentials: Google answers 401 reason "required" ("Login
		// Required."), and a Bearer challenge.
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
		googleError(w, http.StatusUnauthorized, "global", "required", "Login Required.",
			"locationType", "header", "location", "Authorization")
		return false
	}
	scope, ok := "", false
	if isBearer && c.oauth != nil {
		scope, ok = c.oauth.ValidAccessToken(strings.TrimSpace(tok))
	}
	if !ok {
		// guides/errors, "401: Invalid Credentials": "The access token
		// you're using is either expired or invalid."
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="invalid_token"`)
		googleError(w, http.StatusUnauthorized, "global", "authError", "Invalid Credentials",
			"locationType", "header", "location", "Authorization")
		return false
	}
	for _, s := range strings.Fields(scope) {
		if allowed(s) {
			return true
		}
	}
	// A token without a calendar scope: Google's 403 insufficientPermissions
	// ("Request had insufficient authentication scopes.").
	w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="insufficient_scope", scope="`+calendarScopes[0]+`"`)
	googleError(w, http.StatusForbidden, "global", "insufficientPermissions", "Request had insufficient authentication scopes.")
	return false
}

func eventsScope(s string) bool {
	for _, a := range calendarScopes {
		if s == a {
			return true
		}
	}
	return false
}

// anyCalendarScope: channels.stop accepts every Calendar scope (its
// "scopes" in the discovery document).
func anyCalendarScope(s string) bool {
	return s == "https://www.googleapis.com/auth/calendar" || strings.HasPrefix(s, "https://www.googleapis.com/auth/calendar.")
}

// fullSyncRequired is the 410 of guides/errors, "410: Gone": "The
// syncToken parameter is no longer valid" with reason fullSyncRequired.
func fullSyncRequired(w http.ResponseWriter) {
	googleError(w, http.StatusGone, "calendar", "fullSyncRequired", "Sync token is no longer valid, a full sync is required.",
		"locationType", "parameter", "location", "syncToken")
}
