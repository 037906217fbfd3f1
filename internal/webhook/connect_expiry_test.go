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
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// TestAConnectLinkStartsNoFlowAfterItExpires: a connect link carries its
// token in the query string (access logs may keep it), so it starts a
// flow only until the expiry its controller publishes; after that its
// holder is told where the new one is, and no state is written.
func TestAConnectLinkStartsNoFlowAfterItExpires(t *testing.T) {
	w := startOAuthWorld(t)
	cm, link := w.resource(t, "test-google", "google-client", "google-secret")

	w.publish(t, cm, "connectExpiresAt", time.Now().Add(time.Minute).UTC().Format(time.RFC3339))
	if st, loc, body := fetch(t, link); st != http.StatusFound || !strings.HasPrefix(loc.String(), w.sandbox) {
		t.Fatalf("a link a minute before its expiry answered %d %s:\n%s", st, loc, body)
	}

	w.publish(t, cm, "connectExpiresAt", time.Now().Add(-time.Second).UTC().Format(time.RFC3339))
	before := w.states(t)
	st, _, body := fetch(t, link)
	if st != http.StatusForbidden || !strings.Contains(body, "expired") ||
		!strings.Contains(body, "kubectl get secret -n "+cm.Namespace+" res-oauth-connect") {
		t.Fatalf("an expired link answered %d:\n%s", st, body)
	}
	if after := w.states(t); after != before {
		t.Fatalf("an expired link wrote a state: %d before, %d after", before, after)
	}
}

// states counts the OAuth states in the webhook's namespace.
func (w *oauthWorld) states(t *testing.T) int {
	t.Helper()
	var list corev1.SecretList
	if err := w.env.Client.List(context.Background(), &list, client.InNamespace(w.stateNS), client.HasLabels{oauth.StateLabel}); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}
