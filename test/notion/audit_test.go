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

package notion_test

import (
	"net/http"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/audit/audittest"
)

// A stranger's sign-up is one oauth.connected fact about the integration
// it made, naming the sign-up; a workspace past the bound connects
// nothing and records nothing.
func TestASignUpsGrantIsAuditedOnceAboutTheIntegrationItMade(t *testing.T) {
	facts := audittest.Capture(t)
	f := newSignUp(t, 1)
	if done := f.signUp(t, signUpWorkspace(1)); done.status != http.StatusOK {
		t.Fatalf("the sign-up's page %d:\n%s", done.status, done.body)
	}
	made := f.made(t)
	if len(made) != 1 {
		t.Fatalf("%d integrations made, want 1", len(made))
	}
	audittest.Want(t, facts.One(t, audit.OAuthConnected, f.key.Namespace), map[string]any{"kind": "NotionIntegration", "name": made[0].Name,
		"target": "notion", "provider": "notion", "signUp": "lab", "tokenSecret": made[0].Spec.OAuth.TokenSecretRef.Name})
	if full := f.signUp(t, signUpWorkspace(2)); full.status != http.StatusForbidden {
		t.Fatalf("past the bound: %d\n%s", full.status, full.body)
	}
	if n := len(facts.Of(audit.OAuthConnected, f.key.Namespace)); n != 1 {
		t.Fatalf("%d grants audited, want still 1", n)
	}
}
