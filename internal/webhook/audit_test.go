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

package webhook_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/audit/audittest"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// A grant a person connects through a connect link is one oauth.connected
// fact about the resource, written by the manager's receiver before the
// callback answers; the spent link, tried again, connects nothing and
// records nothing. No line holds the grant.
func TestAConnectedGrantIsAuditedOnce(t *testing.T) {
	facts := audittest.Capture(t)
	w := startOAuthWorld(t)
	cm, link := w.resource(t, "test-google", "google-client", "google-secret")
	if _, st, body := connectThrough(t, link); st != http.StatusOK {
		t.Fatalf("callback answered %d:\n%s", st, body)
	}
	audittest.Want(t, facts.One(t, audit.OAuthConnected, cm.Namespace), map[string]any{"kind": "ConfigMap", "name": "res",
		"target": "test-google", "provider": "google", "signUp": "", "tokenSecret": "token"})
	if _, st, _ := connectThrough(t, link); st != http.StatusForbidden {
		t.Fatalf("the spent link answered %d", st)
	}
	if n := len(facts.Of(audit.OAuthConnected, cm.Namespace)); n != 1 {
		t.Fatalf("%d grants audited after the spent link, want 1", n)
	}
	tok := w.token(t, cm)
	text := facts.Text()
	for _, k := range []string{oauth.KeyRefreshToken, oauth.KeyAccessToken} {
		if v := string(tok.Data[k]); len(v) < 10 || strings.Contains(text, v) {
			t.Errorf("the audit record holds the %s (or it is too short to tell: %q)", k, v)
		}
	}
}
