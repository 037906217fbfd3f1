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
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Issue 18 items 1–3: a 409 is retried, search is read to its last page,
// and text is measured as Notion measures it.

func TestAConflictOnPageUpdateIsTransient(t *testing.T) {
	w := newWorld(t)
	db := w.n.AddDatabase(w.wsID, w.n.AddPage(w.wsID, "Home"), "ArXiv Papers", fullSchema)
	page := w.n.AddRow(db, map[string]any{"Link": "https://arxiv.org/abs/2301.12345"})
	w.n.EditConcurrently(page, 1)
	paper := notion.Paper{Title: "A Study", Link: "https://arxiv.org/abs/2301.12345", Year: 2023}
	err := w.c.UpdatePaper(context.Background(), w.token, page, paper)
	if e, ok := outbound.Classify(err); !ok || e.Status != 409 || e.Class != outbound.Transient || !strings.Contains(e.Reason, "conflict_error") {
		t.Fatalf("a 409 conflict_error gave %v; want a transient error naming conflict_error", err)
	}
	if err := w.c.UpdatePaper(context.Background(), w.token, page, paper); err != nil || w.n.Row(page)["Title"] != "A Study" {
		t.Fatalf("the update after the collision: %v, row %v", err, w.n.Row(page))
	}
}

// addDecoys adds n databases edited after everything before them, so that
// they come first in a search sorted by last edit.
func (w *world) addDecoys(n int) {
	home := w.n.AddPage(w.wsID, "Decoys")
	for i := range n {
		w.n.AddDatabase(w.wsID, home, fmt.Sprintf("Reading list %d", i), fullSchema)
	}
}

func TestFindsTheDatabaseBeyondTheFirstSearchPage(t *testing.T) {
	t.Run("in the duplicated template", func(t *testing.T) {
		w := newWorld(t)
		template := w.n.AddPage(w.wsID, "ArXiv template")
		inTemplate := w.n.AddDatabase(w.wsID, template, "ArXiv Papers", fullSchema)
		w.addDecoys(150) // the first page of 100 holds no match: results: [], has_more: true
		db, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers", TemplateID: template})
		if err != nil || db.ID != inTemplate || db.Created {
			t.Fatalf("db %+v, %v; want the template's %s", db, err, inTemplate)
		}
		if ids := w.n.Databases(w.wsID, "ArXiv Papers"); len(ids) != 1 {
			t.Fatalf("%d databases named ArXiv Papers, want the template's alone", len(ids))
		}
	})
	t.Run("the template's, even when another of that name is on an earlier page", func(t *testing.T) {
		w := newWorld(t)
		template := w.n.AddPage(w.wsID, "ArXiv template")
		inTemplate := w.n.AddDatabase(w.wsID, template, "ArXiv Papers", fullSchema)
		w.addDecoys(150)
		w.n.AddDatabase(w.wsID, w.n.AddPage(w.wsID, "Elsewhere"), "ArXiv Papers", fullSchema) // on page 1
		db, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers", TemplateID: template})
		if err != nil || db.ID != inTemplate {
			t.Fatalf("db %+v, %v; want the template's %s", db, err, inTemplate)
		}
	})
	t.Run("without a template", func(t *testing.T) {
		w := newWorld(t)
		only := w.n.AddDatabase(w.wsID, w.n.AddPage(w.wsID, "Home"), "ArXiv Papers", fullSchema)
		w.addDecoys(250)
		db, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers"})
		if err != nil || db.ID != only || db.Created {
			t.Fatalf("db %+v, %v; want %s, not a new one", db, err, only)
		}
	})
	t.Run("the first shared page to create under", func(t *testing.T) {
		w := newWorld(t)
		rows := w.n.AddDatabase(w.wsID, "5a5a5a5a-0000-4000-8000-000000000000", "Inbox", fullSchema)
		for i := range 120 { // database rows: no parent for a database
			w.n.AddRow(rows, map[string]any{"Title": fmt.Sprintf("row %d", i)})
		}
		home := w.n.AddPage(w.wsID, "Home") // the first top-level page, on page 2
		db, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers"})
		if err != nil || !db.Created {
			t.Fatalf("db %+v, %v; want one created under %s", db, err, home)
		}
	})
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

func TestUpdatePaperMeasuresTextAsNotionDoes(t *testing.T) {
	w := newWorld(t)
	db := w.n.AddDatabase(w.wsID, w.n.AddPage(w.wsID, "Home"), "ArXiv Papers", fullSchema)
	page := w.n.AddRow(db, map[string]any{"Link": "https://arxiv.org/abs/2301.12345"})
	// Mathematical script letters are outside the BMP: two UTF-16 units
	// each, as arXiv abstracts write 𝒪(n) and 𝔽_q.
	title := "a" + strings.Repeat("𝒪", 1500)                      // 3001 units: the cut falls inside a character
	summary := strings.Repeat("Let 𝔽_q be a field, ε > 0. ", 300) // 9000 runes, 9600 units
	authors := make([]string, 12000)                              // a collaboration's author list
	for i := range authors {
		authors[i] = fmt.Sprintf("Ünïcødé Author %d", i)
	}
	err := w.c.UpdatePaper(context.Background(), w.token, page, notion.Paper{
		Title: title, Summary: summary, Authors: authors, Link: "https://arxiv.org/abs/2301.12345", Year: 2023,
	})
	if err != nil {
		t.Fatalf("Notion refused the paper: %v", err)
	}
	row := w.n.Row(page)
	if got := row["Title"].(string); got != "a"+strings.Repeat("𝒪", 999) {
		t.Fatalf("title of %d units, want the 1999 that fit in 2000 without halving a character", utf16Len(got))
	}
	if row["Summary"] != summary {
		t.Fatal("the summary was not written whole")
	}
	if n := w.n.RichTextChunks(page, "Summary"); n != 5 {
		t.Fatalf("summary in %d text objects, want 5 (9600 units in objects of ≤2000)", n)
	}
	if n := w.n.RichTextChunks(page, "Authors"); n != 100 {
		t.Fatalf("authors in %d text objects, want Notion's most, 100", n)
	}
}

func TestChunksNeverExceedNotionsLimits(t *testing.T) {
	for _, text := range []string{strings.Repeat("😀", 1001), "x" + strings.Repeat("😀", 3000), strings.Repeat("é", 4001), strings.Repeat("∑", 2000)} {
		var joined strings.Builder
		for _, c := range notion.Chunks(text) {
			if n := utf16Len(c.Text.Content); n > notion.MaxText || n == 0 {
				t.Fatalf("a chunk of %d UTF-16 units", n)
			}
			joined.WriteString(c.Text.Content)
		}
		if joined.String() != text {
			t.Fatal("the chunks do not join back into the text")
		}
	}
	if got := notion.Truncate(strings.Repeat("😀", 1001)); got != strings.Repeat("😀", 1000) {
		t.Fatalf("truncated to %d units, want 2000", utf16Len(got))
	}
}
