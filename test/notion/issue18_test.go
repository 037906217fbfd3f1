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
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// Issue 18, Notion items 1, 2, 3 and 15, end to end: the controllers on a
// real API server against the sandbox's Notion and arXiv.

// event posts an Automation event for a new row of the integration's
// database and returns the PaperSync's name.
func (f *fixture) event(t *testing.T, ni *v1alpha1.NotionIntegration, link string) (page, name string) {
	t.Helper()
	page = notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": link})
	a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": page, "link": link})
	if a.status != http.StatusAccepted {
		t.Fatalf("answer %d %v", a.status, a.body)
	}
	return page, a.body["paper_sync"].(string)
}

// finished waits until the sync has an outcome and returns it.
func (f *fixture) finished(t *testing.T, name string) *v1alpha1.PaperSync {
	t.Helper()
	var ps *v1alpha1.PaperSync
	eventually(t, "PaperSync "+name+" finished", func() bool {
		ps = f.syncOf(t, name)
		return ps.Status.CompletedAt != nil
	})
	return ps
}

// Item 1: Notion's 409 conflict_error ("make sure the parameters are up to
// date and try again") is retried like a 5xx, not a final refusal.
func TestAPageUpdateThatCollidesWithAnEditIsRetried(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	link := "https://arxiv.org/abs/2301.12345"
	page := notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": link})
	notionEmu.EditConcurrently(page, 2)
	a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": page, "link": link})
	ps := f.finished(t, a.body["paper_sync"].(string))
	if ps.Status.Phase != v1alpha1.SyncSucceeded || ps.Status.Attempts != 3 {
		t.Fatalf("phase %s after %d attempts (%s); want Succeeded on the third, after two 409s", ps.Status.Phase, ps.Status.Attempts, ps.Status.LastError)
	}
	if notionEmu.Row(page)["Title"] != "A Study of Examples in Practice" {
		t.Fatalf("page %v", notionEmu.Row(page))
	}
}

// Item 2: the template's "ArXiv Papers" is found on the second page of a
// search whose first page is empty, and no duplicate is created.
func TestTheTemplatesDatabaseIsFoundBeyondTheFirstSearchPage(t *testing.T) {
	var template, inTemplate string
	f := newFixture(t, func(ws sandbox.NotionWorkspace) string {
		template = notionEmu.AddPage(ws.ID, "ArXiv template")
		inTemplate = notionEmu.AddDatabase(ws.ID, template, "ArXiv Papers", map[string]sandbox.NotionProperty{
			"Title": {Type: "title"}, "Authors": {Type: "rich_text"}, "Summary": {Type: "rich_text"},
			"Link": {Type: "url"}, "Publication Year": {Type: "number"},
		})
		// The user's other databases, all edited since: the search's first
		// page (most recently edited first) holds none named ArXiv Papers.
		home := notionEmu.AddPage(ws.ID, "Projects")
		for i := range 150 {
			notionEmu.AddDatabase(ws.ID, home, fmt.Sprintf("Project %d", i), map[string]sandbox.NotionProperty{"Name": {Type: "title"}})
		}
		ws.DuplicatedTemplateID = template
		return notionEmu.IssueRefreshToken("notion-client", ws)
	})
	ni := f.ready(t)
	if ni.Status.DuplicatedTemplateID != template || ni.Status.DatabaseID != inTemplate {
		t.Fatalf("template %s, database %s; want the template %s's database %s", ni.Status.DuplicatedTemplateID, ni.Status.DatabaseID, template, inTemplate)
	}
	if dbs := notionEmu.Databases(f.ws.ID, "ArXiv Papers"); len(dbs) != 1 {
		t.Fatalf("the workspace has %d databases named ArXiv Papers, want the template's alone", len(dbs))
	}
}

// Item 3: a paper whose title and abstract are full of characters beyond
// the Basic Multilingual Plane (two UTF-16 units each, as Notion counts)
// is written, cut and split where Notion measures 2000.
func TestAPaperFullOfMathematicalLettersIsWritten(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	// 2205 units: cut at 1999, as the next 𝔽 does not fit in the last one.
	title := "On 𝒪" + strings.Repeat("𝔽", 1100)
	// 3600 runes, 3960 units: two text objects.
	summary := strings.TrimSpace(strings.Repeat("Over 𝔽_q the bound is 𝒪(n log n). ", 90))
	arxivEmu.AddPaper(sandbox.ArxivPaper{ID: "2402.18181", Title: title, Summary: summary,
		Authors: []string{"Émilie du Châtelet"}, Published: time.Date(2024, 2, 28, 0, 0, 0, 0, time.UTC)})
	page, name := f.event(t, ni, "https://arxiv.org/abs/2402.18181")
	ps := f.finished(t, name)
	if ps.Status.Phase != v1alpha1.SyncSucceeded {
		t.Fatalf("phase %s: %s", ps.Status.Phase, ps.Status.LastError)
	}
	row := notionEmu.Row(page)
	if row["Title"] != "On 𝒪"+strings.Repeat("𝔽", 997) || row["Summary"] != summary {
		t.Fatalf("title of %d runes, summary whole %v", len([]rune(row["Title"].(string))), row["Summary"] == summary)
	}
	if n := notionEmu.RichTextChunks(page, "Summary"); n != 2 {
		t.Fatalf("summary in %d text objects, want 2", n)
	}
}

// Item 15: syncs whose retries ran out during an arXiv outage are
// rechecked, and their pages fill once arXiv is back, not a retention
// later.
func TestPagesFillAfterAnArxivOutageLongerThanTheRetries(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	box.SetFault(sandbox.ArxivQuery, sandbox.Fault{Status: 503, ContentType: "text/plain", Body: "Service Unavailable"})
	defer box.ClearFaults()
	pages := map[string]string{}
	for _, link := range []string{"https://arxiv.org/abs/2301.12345", "https://arxiv.org/abs/hep-th/9901001"} {
		page, name := f.event(t, ni, link)
		pages[name] = page
	}
	for name := range pages {
		ps := f.finished(t, name)
		if c := status.Get(ps, v1alpha1.StalledCondition); ps.Status.Phase != v1alpha1.SyncFailed || c == nil || c.Reason != v1alpha1.RetriesExhaustedReason {
			t.Fatalf("%s: phase %s, stalled %+v; want Failed with RetriesExhausted", name, ps.Status.Phase, c)
		}
	}
	// Still down: a recheck fails and the sync stays Failed.
	for name := range pages {
		eventually(t, "a recheck of "+name+" while arXiv is down", func() bool {
			ps := f.syncOf(t, name)
			c := status.Get(ps, v1alpha1.StalledCondition)
			return ps.Status.Attempts > 4 && c != nil && strings.HasPrefix(c.Message, "recheck")
		})
	}
	box.ClearFaults()
	for name, page := range pages {
		f.waitSync(t, name, v1alpha1.SyncSucceeded)
		if row := notionEmu.Row(page); row["Title"] == "" || row["Publication Year"] == nil {
			t.Fatalf("page of %s: %v", name, row)
		}
	}
}
