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

package gcalendar

import (
	"errors"
	"net/http"
	"testing"

	"google.golang.org/api/googleapi"

	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// TestClassifyKeepsTheCalendarsOwnCases pins what the Calendar wrapper adds
// to the shared gapi.Classify.
func TestClassifyKeepsTheCalendarsOwnCases(t *testing.T) {
	body := func(code int, reason string) error {
		return googleapi.CheckResponseWithBody(&http.Response{StatusCode: code, Header: http.Header{}},
			[]byte(`{"error":{"errors":[{"domain":"global","reason":"`+reason+`","message":"m"}],"code":0,"message":"m"}}`))
	}
	cases := []struct {
		name         string
		err          error
		class        outbound.Class
		gone, unauth bool
	}{
		{"410 sync token", body(410, "fullSyncRequired"), outbound.Permanent, true, false},
		{"401 token", body(401, "authError"), outbound.Permanent, false, true},
		{"401 push address", body(401, "push.webhookUrlUnauthorized"), outbound.Permanent, false, false},
		{"403 rate limit", body(403, "userRateLimitExceeded"), outbound.Transient, false, false},
		{"403 calendar quota", body(403, "quotaExceeded"), outbound.Transient, false, false},
		{"403 scopes", body(403, "insufficientPermissions"), outbound.Permanent, false, false},
		{"500", body(500, "backendError"), outbound.Transient, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := classify("events.list", c.err)
			e, ok := outbound.Classify(err)
			if !ok || e.Class != c.class {
				t.Fatalf("got %v (%+v), want class %s", err, e, c.class)
			}
			if errors.Is(err, ErrSyncTokenGone) != c.gone || errors.Is(err, ErrUnauthorized) != c.unauth {
				t.Fatalf("%v: gone %v unauthorized %v", err, errors.Is(err, ErrSyncTokenGone), errors.Is(err, ErrUnauthorized))
			}
		})
	}
}
