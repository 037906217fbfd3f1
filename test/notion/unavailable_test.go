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
	"context"
	"net/http"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// Like Flux's Receiver, the Automation route refuses events for a
// suspended integration with 503 and Retry-After, and records nothing.
func TestASuspendedIntegrationRefusesEventsWith503(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	edit(t, ni, func(n *v1alpha1.NotionIntegration) { n.Spec.Suspend = true })
	body := `{"workspace_id":"` + f.ws.ID + `","page_id":"1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f","link":"https://arxiv.org/abs/2301.12345"}`
	count := func() int {
		var list v1alpha1.PaperSyncList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}
	send := func() *http.Response {
		r, err := http.Post(hookURL+ni.Status.WebhookPath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r
	}
	// The webhook sees the change through its cache, a moment later (an
	// event accepted before then is recorded, as it should be).
	eventually(t, "a 503 for the suspended integration", func() bool { return send().StatusCode == http.StatusServiceUnavailable })
	before := count()
	for range 5 {
		if r := send(); r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
			t.Fatalf("got %d with Retry-After %q", r.StatusCode, r.Header.Get("Retry-After"))
		}
	}
	if n := count(); n != before {
		t.Fatalf("refused events recorded %d PaperSyncs", n-before)
	}
	// Resumed and Ready, it accepts events again.
	edit(t, f.integration(t), func(n *v1alpha1.NotionIntegration) { n.Spec.Suspend = false })
	eventually(t, "events accepted again", func() bool {
		return post(t, ni.Status.WebhookPath, body).status == http.StatusAccepted
	})
}
