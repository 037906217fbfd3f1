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

package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// The Notion emulator's quirks, read raw over HTTP.

type notionAPI struct {
	t     *testing.T
	base  string
	token string
	n     *sandbox.Notion
	ws    string
}

func newNotionAPI(t *testing.T) *notionAPI {
	t.Helper()
	n := sandbox.NewNotion()
	srv := httptest.NewServer(sandbox.New(n))
	t.Cleanup(srv.Close)
	ws := sandbox.NotionWorkspace{ID: "ws-1"}
	return &notionAPI{t: t, base: srv.URL + "/notion/v1", token: n.IssueAccessToken("c", ws), n: n, ws: ws.ID}
}

func (a *notionAPI) call(method, path, body string) (int, map[string]any) {
	a.t.Helper()
	req, err := http.NewRequest(method, a.base+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Notion-Version", "2022-06-28")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	out := map[string]any{}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		a.t.Fatal(err)
	}
	return resp.StatusCode, out
}

var papersSchema = map[string]sandbox.NotionProperty{"Title": {Type: "title"}, "Summary": {Type: "rich_text"}, "Link": {Type: "url"}}

func TestNotionCountsTextInUTF16CodeUnits(t *testing.T) {
	a := newNotionAPI(t)
	db := a.n.AddDatabase(a.ws, a.n.AddPage(a.ws, "Home"), "ArXiv Papers", papersSchema)
	page := a.n.AddRow(db, nil)
	update := func(content string) (int, map[string]any) {
		b, _ := json.Marshal(map[string]any{"properties": map[string]any{"Summary": map[string]any{"rich_text": []any{
			map[string]any{"type": "text", "text": map[string]any{"content": content}}}}}})
		return a.call(http.MethodPatch, "/pages/"+page, string(b))
	}
	// 2000 code points, one of them an emoji: 2001 UTF-16 units.
	status, body := update(strings.Repeat("a", 1999) + "😀")
	if msg, _ := body["message"].(string); status != 400 || body["code"] != "validation_error" || !strings.Contains(msg, "instead was `2001`") {
		t.Fatalf("got %d %v %q; want 400 validation_error counting 2001 units", status, body["code"], msg)
	}
	if status, body := update(strings.Repeat("𝒪", 1000)); status != 200 {
		t.Fatalf("2000 units refused: %d %v", status, body["message"])
	}
}

func TestNotionAnswersAnUpdateThatCollidesWith409(t *testing.T) {
	a := newNotionAPI(t)
	db := a.n.AddDatabase(a.ws, a.n.AddPage(a.ws, "Home"), "ArXiv Papers", papersSchema)
	page := a.n.AddRow(db, nil)
	a.n.EditConcurrently(page, 1)
	body := `{"properties":{"Link":{"url":"https://arxiv.org/abs/2301.12345"}}}`
	if status, got := a.call(http.MethodPatch, "/pages/"+page, `{"properties":{"Nope":{"url":"x"}}}`); status != 400 {
		t.Fatalf("an invalid update is refused before it collides: %d %v", status, got)
	}
	if status, got := a.call(http.MethodPatch, "/pages/"+page, body); status != 409 || got["code"] != "conflict_error" || got["object"] != "error" {
		t.Fatalf("got %d %v; want 409 conflict_error", status, got)
	}
	if status, got := a.call(http.MethodPatch, "/pages/"+page, body); status != 200 || a.n.Row(page)["Link"] != "https://arxiv.org/abs/2301.12345" {
		t.Fatalf("the next update: %d %v", status, got)
	}
	// Only the update that was saved counts (the exactly-once checks of
	// make e2e read it).
	if n := a.n.Updates(page); n != 1 {
		t.Fatalf("Updates = %d after a refused, a collided and a saved update; want 1", n)
	}
	if n := a.n.Updates("00000000-0000-4000-8000-000000000000"); n != -1 {
		t.Fatalf("Updates of a page that does not exist = %d, want -1", n)
	}
}

func TestNotionSearchServesShortPages(t *testing.T) {
	a := newNotionAPI(t)
	home := a.n.AddPage(a.ws, "Home")
	want := a.n.AddDatabase(a.ws, home, "ArXiv Papers", papersSchema)
	for i := range 30 {
		a.n.AddDatabase(a.ws, home, fmt.Sprintf("Notes %d", i), papersSchema)
	}
	search := `{"query":"ArXiv Papers","filter":{"property":"object","value":"database"},"page_size":10}`
	var found []string
	pages, cursor := 0, ""
	for {
		body := search
		if cursor != "" {
			body = strings.Replace(search, `"page_size"`, `"start_cursor":"`+cursor+`","page_size"`, 1)
		}
		status, got := a.call(http.MethodPost, "/search", body)
		if status != 200 {
			t.Fatalf("page %d: %d %v", pages, status, got)
		}
		pages++
		for _, r := range got["results"].([]any) {
			found = append(found, r.(map[string]any)["id"].(string))
		}
		if pages == 1 && (len(found) != 0 || got["has_more"] != true) {
			t.Fatalf("the first page holds %d results, has_more %v; want an empty page with more to come", len(found), got["has_more"])
		}
		if got["has_more"] != true {
			if got["next_cursor"] != nil {
				t.Fatalf("next_cursor %v on the last page", got["next_cursor"])
			}
			break
		}
		cursor = got["next_cursor"].(string)
	}
	if pages != 4 || len(found) != 1 || found[0] != want {
		t.Fatalf("%d pages found %v; want 4 pages and %s", pages, found, want)
	}
	if status, got := a.call(http.MethodPost, "/search", `{"start_cursor":"not-a-cursor"}`); status != 400 || got["code"] != "validation_error" {
		t.Fatalf("an unknown cursor: %d %v", status, got)
	}
}
