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
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// A failed delivery pauses a person's Notion automation
// (notion.com/help/webhook-actions), so the Automation route does not
// refuse an event for a suspended integration as Flux's Receiver would:
// it records it, and the PaperSync waits for its integration to resume.
func TestASuspendedIntegrationQueuesEventsThatWaitForIt(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	edit(t, ni, func(n *v1alpha1.NotionIntegration) { n.Spec.Suspend = true })
	eventually(t, "the integration suspended", func() bool {
		c := status.Get(f.integration(t), v1alpha1.ReadyCondition)
		return c != nil && c.Reason == v1alpha1.SuspendedReason
	})
	page := notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": "https://arxiv.org/abs/2301.12345"})
	a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": page, "link": "https://arxiv.org/abs/2301.12345"})
	if a.status != http.StatusAccepted || a.body["status"] != "queued" {
		t.Fatalf("answer %d %v, want 202 queued", a.status, a.body)
	}
	name := a.body["paper_sync"].(string)
	eventually(t, "the sync waiting for its integration", func() bool {
		c := status.Get(f.syncOf(t, name), v1alpha1.ReadyCondition)
		return c != nil && c.Reason == v1alpha1.DependencyNotReadyReason && strings.Contains(c.Message, "suspended")
	})
	if notionEmu.Updates(page) != 0 {
		t.Fatal("a suspended integration's page was written")
	}
	edit(t, f.integration(t), func(n *v1alpha1.NotionIntegration) { n.Spec.Suspend = false })
	f.waitSync(t, name, v1alpha1.SyncSucceeded)
	if n := notionEmu.Updates(page); n != 1 {
		t.Fatalf("the page was written %d times, want once", n)
	}
}
