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
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// These tests run jomei/notionapi, unchanged, against the sandbox's Notion.

type world struct {
	n      *sandbox.Notion
	box    *sandbox.Server
	c      *notion.Client
	token  string
	wsID   string
	others string // another workspace's token
}

func newWorld(t *testing.T) *world {
	t.Helper()
	n := sandbox.NewNotion()
	box := sandbox.New(n)
	srv := httptest.NewServer(box)
	t.Cleanup(srv.Close)
	out := testenv.OutboundTo(t, upstream.Notion, srv.URL+"/notion")
	ws := sandbox.NotionWorkspace{ID: "ws-1", Name: "Research", BotID: "bot-1"}
	return &world{n: n, box: box, c: &notion.Client{Out: out}, wsID: ws.ID,
		token:  n.IssueAccessToken("c", ws),
		others: n.IssueAccessToken("c", sandbox.NotionWorkspace{ID: "ws-2"})}
}

var fullSchema = map[string]sandbox.NotionProperty{
	"Title": {Type: "title"}, "Authors": {Type: "rich_text"}, "Summary": {Type: "rich_text"},
	"Link": {Type: "url"}, "Publication Year": {Type: "number"},
}

func TestFindsTheDatabaseInTheDuplicatedTemplateFirst(t *testing.T) {
	w := newWorld(t)
	other := w.n.AddPage(w.wsID, "Elsewhere")
	template := w.n.AddPage(w.wsID, "ArXiv template")
	inTemplate := w.n.AddDatabase(w.wsID, template, "ArXiv Papers", fullSchema)
	w.n.AddDatabase(w.wsID, other, "ArXiv Papers", fullSchema) // more recently edited
	db, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers", TemplateID: template})
	if err != nil || db.ID != inTemplate || db.Created {
		t.Fatalf("db %+v, %v; want the template's %s", db, err, inTemplate)
	}
	if !strings.HasPrefix(db.URL, "https://www.notion.so/") {
		t.Fatalf("url %q", db.URL)
	}
}

func TestFindsTheMostRecentlyEditedWithoutATemplate(t *testing.T) {
	w := newWorld(t)
	p := w.n.AddPage(w.wsID, "Home")
	w.n.AddDatabase(w.wsID, p, "ArXiv Papers", fullSchema)
	newer := w.n.AddDatabase(w.wsID, p, "ArXiv Papers", fullSchema)
	w.n.AddDatabase(w.wsID, p, "ArXiv Papers (old)", fullSchema)
	db, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers"})
	if err != nil || db.ID != newer {
		t.Fatalf("db %+v %v, want %s", db, err, newer)
	}
}

func TestCreatesTheDatabaseWithTheSeedSchema(t *testing.T) {
	w := newWorld(t)
	first := w.n.AddPage(w.wsID, "First page")
	w.n.AddPage(w.wsID, "Second page")
	db, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers"})
	if err != nil || !db.Created {
		t.Fatalf("db %+v %v", db, err)
	}
	got := w.n.DatabaseProperties(db.ID)
	want := map[string]string{"Title": "title", "Authors": "rich_text", "Summary": "rich_text", "Link": "url", "Publication Year": "number"}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("schema %v, want %v", got, want)
		}
	}
	if ids := w.n.Databases(w.wsID, "ArXiv Papers"); len(ids) != 1 || ids[0] != db.ID {
		t.Fatalf("databases %v", ids)
	}
	_ = first
}

func TestRepairsMissingProperties(t *testing.T) {
	w := newWorld(t)
	p := w.n.AddPage(w.wsID, "Home")
	id := w.n.AddDatabase(w.wsID, p, "ArXiv Papers", map[string]sandbox.NotionProperty{"Title": {Type: "title"}, "Link": {Type: "url"}})
	db, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers"})
	if err != nil || db.ID != id || len(db.Added) != 3 {
		t.Fatalf("db %+v %v", db, err)
	}
	if got := w.n.DatabaseProperties(id); got["Publication Year"] != "number" || got["Authors"] != "rich_text" {
		t.Fatalf("schema %v", got)
	}
}

// Seed 000 §3.2.3 error rows.
func TestCreateFailures(t *testing.T) {
	t.Run("parent page that does not exist (404) is permanent", func(t *testing.T) {
		w := newWorld(t)
		_, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers", ParentPage: "0c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"})
		if e, ok := outbound.Classify(err); !ok || e.Class != outbound.Permanent || e.Status != 404 || !strings.Contains(e.Reason, "object_not_found") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a parent in another workspace is not found either", func(t *testing.T) {
		w := newWorld(t)
		theirs := w.n.AddPage("ws-2", "Theirs")
		_, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers", ParentPage: theirs})
		if e, ok := outbound.Classify(err); !ok || e.Status != 404 {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("403 is permanent", func(t *testing.T) {
		w := newWorld(t)
		p := w.n.AddPage(w.wsID, "Home")
		w.box.SetFault(sandbox.NotionDatabaseCreate, sandbox.Fault{Status: 403, Body: `{"object":"error","status":403,"code":"restricted_resource","message":"Insufficient permissions for this endpoint."}`})
		_, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers", ParentPage: p})
		if e, ok := outbound.Classify(err); !ok || e.Class != outbound.Permanent || e.Status != 403 {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("429 is transient, for the caller's backoff", func(t *testing.T) {
		w := newWorld(t)
		w.box.SetFault(sandbox.NotionSearch, sandbox.Fault{Status: 429, RetryAfter: "1", Body: `{"object":"error","status":429,"code":"rate_limited","message":"You have been rate limited."}`})
		_, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers"})
		if !outbound.IsTransient(err) || w.box.Calls(sandbox.NotionSearch) != 1 {
			t.Fatalf("got %v after %d calls", err, w.box.Calls(sandbox.NotionSearch))
		}
		if e, _ := outbound.Classify(err); e.RetryAfter != time.Second {
			t.Fatalf("Retry-After %s, want 1s (the SDK drops it; the client keeps it)", e.RetryAfter)
		}
	})
	t.Run("no page to create it under", func(t *testing.T) {
		w := newWorld(t)
		_, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers"})
		if !outbound.IsPermanent(err) || !strings.Contains(err.Error(), "no page is shared") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("an invalid token is a 401", func(t *testing.T) {
		w := newWorld(t)
		_, err := w.c.FindOrCreateDatabase(context.Background(), "ntn_bogus", notion.DatabaseSpec{Name: "ArXiv Papers"})
		if !notion.IsUnauthorized(err) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestUpdatePaperRespectsNotionLimits(t *testing.T) {
	w := newWorld(t)
	p := w.n.AddPage(w.wsID, "Home")
	db := w.n.AddDatabase(w.wsID, p, "ArXiv Papers", fullSchema)
	page := w.n.AddRow(db, map[string]any{"Link": "https://arxiv.org/abs/2301.12345"})
	long := strings.Repeat("あ", 2500) // multi-byte, to count characters not bytes
	summary := strings.Repeat("s", 4500)
	err := w.c.UpdatePaper(context.Background(), w.token, page, notion.Paper{
		Title: long, Summary: summary, Link: "https://arxiv.org/abs/2301.12345", Authors: []string{"Ada Lovelace", "Alan Turing"}, Year: 2023,
	})
	if err != nil {
		t.Fatal(err)
	}
	row := w.n.Row(page)
	if got := row["Title"].(string); got != strings.Repeat("あ", 2000) {
		t.Fatalf("title of %d characters, want 2000", len([]rune(got)))
	}
	if row["Summary"] != summary || w.n.RichTextChunks(page, "Summary") != 3 {
		t.Fatalf("summary split into %d chunks, want 3 of ≤2000", w.n.RichTextChunks(page, "Summary"))
	}
	if row["Authors"] != "Ada Lovelace, Alan Turing" || row["Publication Year"] != float64(2023) || row["Link"] != "https://arxiv.org/abs/2301.12345" {
		t.Fatalf("row %v", row)
	}
	// Without truncation the emulator refuses, as Notion does.
	if err := w.c.UpdatePaper(context.Background(), w.token, "0c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", notion.Paper{Title: "x"}); !outbound.IsPermanent(err) {
		t.Fatalf("unknown page: %v", err)
	}
}

func TestPagesMissingMetadata(t *testing.T) {
	w := newWorld(t)
	p := w.n.AddPage(w.wsID, "Home")
	db := w.n.AddDatabase(w.wsID, p, "ArXiv Papers", fullSchema)
	lost := w.n.AddRow(db, map[string]any{"Link": "https://arxiv.org/abs/2301.12345"})
	noYear := w.n.AddRow(db, map[string]any{"Link": "https://arxiv.org/abs/hep-th/9901001", "Title": "Has a title"})
	w.n.AddRow(db, map[string]any{"Link": "https://arxiv.org/abs/2301.00001", "Title": "Done", "Publication Year": 2023})
	w.n.AddRow(db, map[string]any{"Title": "No link yet"})
	got, err := w.c.PagesMissingMetadata(context.Background(), w.token, db, notion.PropLink)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, pl := range got {
		ids[pl.PageID] = pl.Link
	}
	if len(ids) != 2 || ids[lost] != "https://arxiv.org/abs/2301.12345" || ids[noYear] == "" {
		t.Fatalf("pages %v, want %s and %s", got, lost, noYear)
	}
}

func TestChunks(t *testing.T) {
	if c := notion.Chunks(""); len(c) != 0 {
		t.Fatalf("empty text gave %d chunks", len(c))
	}
	c := notion.Chunks(strings.Repeat("é", 4001))
	if len(c) != 3 || len([]rune(c[0].Text.Content)) != 2000 || len([]rune(c[2].Text.Content)) != 1 {
		t.Fatalf("chunks %d", len(c))
	}
}

// Seed 000 §3.1.2 step 6: the database goes under the first page the
// person shared, which need not be a top-level one: a person who picks a
// sub-page at consent ("Select pages") shares only that page, and Notion
// creates a database under any page the integration can reach.
func TestCreatesTheDatabaseUnderASharedSubPage(t *testing.T) {
	w := newWorld(t)
	sub := w.n.AddSubPage(w.wsID, "9c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "Reading notes")
	db, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers"})
	if err != nil || !db.Created || w.n.ParentOf(db.ID) != sub {
		t.Fatalf("db %+v %v under %q, want one created under the sub-page %s", db, err, w.n.ParentOf(db.ID), sub)
	}
	// A top-level page, when one is shared, is still preferred.
	w2 := newWorld(t)
	w2.n.AddSubPage(w2.wsID, "9c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "Reading notes")
	top := w2.n.AddPage(w2.wsID, "Home")
	db, err = w2.c.FindOrCreateDatabase(context.Background(), w2.token, notion.DatabaseSpec{Name: "ArXiv Papers"})
	if err != nil || w2.n.ParentOf(db.ID) != top {
		t.Fatalf("db %+v %v under %q, want the top-level %s", db, err, w2.n.ParentOf(db.ID), top)
	}
}

// The Link property may be a text property, and may have another name
// (spec.database.linkProperty): a found database keeps it; a created one
// gets it as a URL property.
func TestTheLinkPropertyMayBeTextOrRenamed(t *testing.T) {
	w := newWorld(t)
	p := w.n.AddPage(w.wsID, "Home")
	texts := map[string]sandbox.NotionProperty{"Title": {Type: "title"}, "Authors": {Type: "rich_text"}, "Summary": {Type: "rich_text"},
		"Link": {Type: "rich_text"}, "Publication Year": {Type: "number"}}
	id := w.n.AddDatabase(w.wsID, p, "ArXiv Papers", texts)
	db, err := w.c.FindOrCreateDatabase(context.Background(), w.token, notion.DatabaseSpec{Name: "ArXiv Papers"})
	if err != nil || db.ID != id || len(db.Added) != 0 || w.n.DatabaseProperties(id)["Link"] != "rich_text" {
		t.Fatalf("db %+v %v: want the text Link kept", db, err)
	}
	w2 := newWorld(t)
	w2.n.AddPage(w2.wsID, "Home")
	db, err = w2.c.FindOrCreateDatabase(context.Background(), w2.token, notion.DatabaseSpec{Name: "ArXiv Papers", LinkProperty: "Paper"})
	if got := w2.n.DatabaseProperties(db.ID); err != nil || got["Paper"] != "url" || got["Link"] != "" {
		t.Fatalf("db %+v %v with %v: want Paper as the URL property", db, err, got)
	}
}

// ReadPage reads what a connection event's sync decides by: the page's
// database, its Link and that property's id, whether its metadata is
// filled, and who edited it last; a page that is gone is a 404.
func TestReadPage(t *testing.T) {
	w := newWorld(t)
	p := w.n.AddPage(w.wsID, "Home")
	db := w.n.AddDatabase(w.wsID, p, "ArXiv Papers", fullSchema)
	page := w.n.AddRow(db, map[string]any{"Link": " https://arxiv.org/abs/2301.12345 "})
	got, err := w.c.ReadPage(context.Background(), w.token, page, "Link")
	if err != nil || got.DatabaseID != db || got.Link != "https://arxiv.org/abs/2301.12345" || got.LinkPropertyID == "" ||
		got.HasMetadata || got.LastEditedBy != sandbox.NotionPersonID || got.Gone {
		t.Fatalf("page %+v, %v", got, err)
	}
	if err := w.c.UpdatePaper(context.Background(), w.token, page, notion.Paper{Title: "T", Year: 2023}); err != nil {
		t.Fatal(err)
	}
	if got, err = w.c.ReadPage(context.Background(), w.token, page, "Link"); err != nil || !got.HasMetadata || got.LastEditedBy != "bot-1" {
		t.Fatalf("after the update: %+v, %v; want filled, by the bot", got, err)
	}
	if w.n.Row(page)["Link"] != " https://arxiv.org/abs/2301.12345 " {
		t.Fatalf("the update rewrote the Link: %v", w.n.Row(page)["Link"])
	}
	_, err = w.c.ReadPage(context.Background(), w.token, "0c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "Link")
	if !notion.IsNotFound(err) {
		t.Fatalf("a missing page: %v, want a 404", err)
	}
}

// The database found before is kept through a rename in Notion (the
// status holds its id); after a restore the status holds nothing, and the
// template's database is found under its new name. Without a template, a
// renamed database is found again only while its id is known: the spec
// names the database then (docs/notionintegration.md).
func TestARenamedDatabaseIsKeptNotMadeAgain(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	home := w.n.AddPage(w.wsID, "Home")
	template := w.n.AddPage(w.wsID, "ArXiv template")
	inTemplate := w.n.AddDatabase(w.wsID, template, "ArXiv Papers", fullSchema)
	elsewhere := w.n.AddDatabase(w.wsID, home, "ArXiv Papers", fullSchema)
	w.n.RenameDatabase(inTemplate, "Papers I read")
	w.n.RenameDatabase(elsewhere, "Old papers")
	spec := notion.DatabaseSpec{Name: "ArXiv Papers", KnownID: elsewhere}
	if db, err := w.c.FindOrCreateDatabase(ctx, w.token, spec); err != nil || db.ID != elsewhere || db.Created {
		t.Fatalf("known and renamed: %+v %v, want %s kept", db, err, elsewhere)
	}
	spec = notion.DatabaseSpec{Name: "ArXiv Papers", TemplateID: template}
	if db, err := w.c.FindOrCreateDatabase(ctx, w.token, spec); err != nil || db.ID != inTemplate || db.Created {
		t.Fatalf("restored, with a template: %+v %v, want the template's %s", db, err, inTemplate)
	}
	// A known id that is gone (deleted, or no longer shared) is looked
	// for again by name; one named as the spec asks wins over the known.
	named := w.n.AddDatabase(w.wsID, home, "ArXiv Papers", fullSchema)
	for _, known := range []string{"0c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", elsewhere} {
		spec = notion.DatabaseSpec{Name: "ArXiv Papers", KnownID: known}
		if db, err := w.c.FindOrCreateDatabase(ctx, w.token, spec); err != nil || db.ID != named {
			t.Fatalf("known %s: %+v %v, want %s by its name", known, db, err, named)
		}
	}
	if n := w.box.Calls(sandbox.NotionDatabaseCreate); n != 0 {
		t.Fatalf("%d databases created, want none", n)
	}
}
