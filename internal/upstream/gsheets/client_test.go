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

package gsheets_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/upstream/gsheets"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// These tests drive the Client against the sandbox's Google Sheets
// emulator over HTTP, with access tokens of its OAuth emulator, as the
// controllers and the demo use it.

type rig struct {
	box    *sandbox.Server
	sheets *sandbox.GoogleSheets
	oauth  *sandbox.GoogleOAuth
	url    string
	client *gsheets.Client
}

func newRig(t *testing.T) *rig {
	t.Helper()
	g := sandbox.NewGoogleOAuth()
	g.AddClient("client-1", "secret-1")
	sh := sandbox.NewGoogleSheets(g)
	box := sandbox.New(g, sh)
	srv := httptest.NewServer(box)
	t.Cleanup(srv.Close)
	out, err := outbound.New(sandbox.Upstreams(srv.URL), outbound.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c, err := gsheets.New(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{box: box, sheets: sh, oauth: g, url: srv.URL, client: c}
}

// token is a live access token of a grant with scope, from the emulator's
// token endpoint as the OAuth engine would get it.
func (r *rig) token(t *testing.T, scope string) string {
	t.Helper()
	cfg := &oauth2.Config{
		ClientID: "client-1", ClientSecret: "secret-1",
		Endpoint: oauth2.Endpoint{TokenURL: r.url + "/googleoauth/token", AuthStyle: oauth2.AuthStyleInHeader},
	}
	tok, err := cfg.TokenSource(context.Background(), &oauth2.Token{RefreshToken: r.oauth.IssueRefreshToken("client-1", scope)}).Token()
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

const (
	sid   = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"
	title = "It's 勤怠 ログ"
)

var header = []string{"Date", "Start", "End", "Summary", "Owner's note", "Id", "勤怠 区分", "With space", "Link"}

func (r *rig) addBook(rows ...[]string) {
	r.sheets.AddSpreadsheet(sid, "Asia/Tokyo",
		sandbox.SheetSpec{ID: 0, Title: "Sheet1"},
		sandbox.SheetSpec{ID: 1234567, Title: title, Rows: append([][]string{header}, rows...)})
}

func TestSpreadsheet(t *testing.T) {
	r := newRig(t)
	r.addBook()
	got, err := r.client.Spreadsheet(context.Background(), r.token(t, targets.SheetsScope), sid)
	if err != nil {
		t.Fatal(err)
	}
	want := []gsheets.Sheet{{ID: 0, Title: "Sheet1"}, {ID: 1234567, Title: title}}
	if got.ID != sid || got.TimeZone != "Asia/Tokyo" || len(got.Sheets) != 2 || got.Sheets[0] != want[0] || got.Sheets[1] != want[1] {
		t.Fatalf("got %+v", got)
	}
	if sh, ok := got.Sheet(title); !ok || sh.ID != 1234567 {
		t.Fatalf("Sheet(%q) = %+v %v", title, sh, ok)
	}
}

func TestHeaderRow(t *testing.T) {
	r := newRig(t)
	r.addBook([]string{"2026-04-01", "09:00"})
	got, err := r.client.Row(context.Background(), r.token(t, targets.SheetsScope), sid, title, 1)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != strings.Join(header, "|") {
		t.Fatalf("header %q, want %q", got, header)
	}
	// A row past the data is empty, not an error.
	if got, err := r.client.Row(context.Background(), r.token(t, targets.SheetsScope), sid, title, 50); err != nil || len(got) != 0 {
		t.Fatalf("row 50: %q %v", got, err)
	}
}

func TestAppendTwoRows(t *testing.T) {
	r := newRig(t)
	r.addBook(
		[]string{"2026-04-01", "", "", "first", "", "id-1"},
		[]string{"2026-04-02", "", "", "second", "", "id-2"},
	)
	ctx, tok := context.Background(), r.token(t, targets.SheetsScope)
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skipf("no time zone data: %v", err)
	}
	start := time.Date(2026, 4, 3, 0, 30, 0, 0, time.UTC) // 09:30 in Tokyo
	rows := [][]any{
		{gsheets.Serial(start, tokyo), gsheets.Serial(start.Add(time.Hour), tokyo), nil, "third", "it's", "id-3"},
		{gsheets.Serial(start, tokyo), nil, nil, "fourth", "", "id-4", "勤務"},
	}
	res, err := r.client.Append(ctx, tok, sid, title, rows)
	if err != nil {
		t.Fatal(err)
	}
	// Header in row 1, two rows of data: the new rows are 4 and 5.
	if res.FirstRow != 4 || res.LastRow != 5 {
		t.Fatalf("rows %d..%d from %q", res.FirstRow, res.LastRow, res.UpdatedRange)
	}
	if gotTitle, _, _, err := gsheets.ParseRange(res.UpdatedRange); err != nil || gotTitle != title {
		t.Fatalf("updated range %q: title %q %v", res.UpdatedRange, gotTitle, err)
	}
	if strings.Contains(res.Request, tok) || strings.Contains(res.Response, tok) || !strings.Contains(res.Response, "updatedRange") {
		t.Fatalf("traces %s / %s", res.Request, res.Response)
	}
	all := r.sheets.Rows(sid, title)
	if len(all) != 5 || all[3][3] != "third" || all[4][6] != "勤務" {
		t.Fatalf("rows %q", all)
	}
	// RAW stores the serial as a number: Sheets shows it as a date-time
	// once the column is formatted so.
	if c, ok := r.sheets.Cell(sid, title, "A4"); !ok || c.Value != gsheets.Serial(start, tokyo) {
		t.Fatalf("A4 %+v %v", c, ok)
	}
	// Crash recovery finds an appended row by its id in column F.
	col, err := r.client.Column(ctx, tok, sid, title, "F")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(col, "|") != "Id|id-1|id-2|id-3|id-4" {
		t.Fatalf("column F %q", col)
	}
	// The next append goes below.
	res, err = r.client.Append(ctx, tok, sid, title, [][]any{{nil, nil, nil, "fifth"}})
	if err != nil || res.FirstRow != 6 || res.LastRow != 6 {
		t.Fatalf("third append %+v %v", res, err)
	}
}

// TestAFormulaTitleStaysText checks that an event title that looks like a
// formula is stored as text (RAW), never run.
func TestAFormulaTitleStaysText(t *testing.T) {
	r := newRig(t)
	r.addBook()
	link := `=HYPERLINK("x","y")`
	res, err := r.client.Append(context.Background(), r.token(t, targets.SheetsScope), sid, title, [][]any{{"2026-04-01", "", "", link}})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := r.sheets.Cell(sid, title, "D2")
	if !ok || res.FirstRow != 2 || c.Formula != "" || c.Value != link {
		t.Fatalf("D2 %+v %v (rows from %q)", c, ok, res.UpdatedRange)
	}
	row, err := r.client.Row(context.Background(), r.token(t, targets.SheetsScope), sid, title, 2)
	if err != nil || len(row) < 4 || row[3] != link {
		t.Fatalf("row 2 %q %v", row, err)
	}
}

func TestErrors(t *testing.T) {
	r := newRig(t)
	r.addBook()
	ctx, tok := context.Background(), r.token(t, targets.SheetsScope)
	rows := [][]any{{"x"}}
	isClass := func(t *testing.T, err error, class outbound.Class, sentinel error) *outbound.Error {
		t.Helper()
		e, ok := outbound.Classify(err)
		if !ok || e.Class != class {
			t.Fatalf("got %v (%+v), want %s", err, e, class)
		}
		if sentinel != nil && !errors.Is(err, sentinel) {
			t.Fatalf("%v is not %v", err, sentinel)
		}
		return e
	}

	t.Run("401 refused token", func(t *testing.T) {
		_, err := r.client.Spreadsheet(ctx, "ya29.not-a-token", sid)
		if e := isClass(t, err, outbound.Permanent, gsheets.ErrUnauthorized); e.Status != 401 {
			t.Fatalf("status %d", e.Status)
		}
	})
	t.Run("403 read-only token", func(t *testing.T) {
		ro := r.token(t, "https://www.googleapis.com/auth/spreadsheets.readonly")
		_, err := r.client.Append(ctx, ro, sid, title, rows)
		if e := isClass(t, err, outbound.Permanent, gsheets.ErrUnauthorized); e.Status != 403 {
			t.Fatalf("status %d", e.Status)
		}
	})
	t.Run("403 shared read-only", func(t *testing.T) {
		r.sheets.SetAccess(sid, "reader")
		defer r.sheets.SetAccess(sid, "writer")
		if _, err := r.client.Row(ctx, tok, sid, title, 1); err != nil {
			t.Fatalf("a reader may read: %v", err)
		}
		_, err := r.client.Append(ctx, tok, sid, title, rows)
		if e := isClass(t, err, outbound.Permanent, gsheets.ErrUnauthorized); e.Status != 403 {
			t.Fatalf("status %d", e.Status)
		}
	})
	t.Run("403 not shared", func(t *testing.T) {
		r.sheets.SetAccess(sid, "none")
		defer r.sheets.SetAccess(sid, "writer")
		_, err := r.client.Spreadsheet(ctx, tok, sid)
		_ = isClass(t, err, outbound.Permanent, gsheets.ErrUnauthorized)
	})
	t.Run("404 spreadsheet gone", func(t *testing.T) {
		_, err := r.client.Spreadsheet(ctx, tok, "no-such-spreadsheet")
		if e := isClass(t, err, outbound.Permanent, gsheets.ErrNotFound); e.Status != 404 {
			t.Fatalf("status %d", e.Status)
		}
		if errors.Is(err, gsheets.ErrUnauthorized) {
			t.Fatal("a missing spreadsheet is not a refused grant")
		}
	})
	t.Run("sheet gone", func(t *testing.T) {
		_, err := r.client.Append(ctx, tok, sid, "Renamed", rows)
		_ = isClass(t, err, outbound.Permanent, gsheets.ErrNotFound)
		_, err = r.client.Row(ctx, tok, sid, "Renamed", 1)
		_ = isClass(t, err, outbound.Permanent, gsheets.ErrNotFound)
	})
	t.Run("429 with Retry-After", func(t *testing.T) {
		r.box.SetFault(sandbox.SheetsValuesAppend, sandbox.Fault{Status: 429, RetryAfter: "17", Times: 1,
			Body: `{"error":{"code":429,"message":"Quota exceeded for quota metric 'Write requests'","status":"RESOURCE_EXHAUSTED"}}`})
		_, err := r.client.Append(ctx, tok, sid, title, rows)
		if e := isClass(t, err, outbound.Transient, nil); e.Status != 429 || e.RetryAfter != 17*time.Second {
			t.Fatalf("status %d, Retry-After %s", e.Status, e.RetryAfter)
		}
		if errors.Is(err, gsheets.ErrUnauthorized) || errors.Is(err, gsheets.ErrNotFound) {
			t.Fatal("a rate limit is neither refused nor gone")
		}
	})
	t.Run("429 write quota", func(t *testing.T) {
		r.sheets.SetWriteQuota(0)
		defer r.sheets.SetWriteQuota(60)
		_, err := r.client.Append(ctx, tok, sid, title, rows)
		if e := isClass(t, err, outbound.Transient, nil); e.Status != 429 || !strings.Contains(e.Reason, "RATE_LIMIT_EXCEEDED") {
			t.Fatalf("status %d, reason %q", e.Status, e.Reason)
		}
	})
	t.Run("503", func(t *testing.T) {
		r.box.SetFault(sandbox.SheetsGet, sandbox.Fault{Status: 503, Times: 1})
		_, err := r.client.Spreadsheet(ctx, tok, sid)
		_ = isClass(t, err, outbound.Transient, nil)
	})
}

// Table reads stored values: numbers as numbers whatever their format,
// text as text, rows cut at their last value.
func TestTableReadsValuesAsStored(t *testing.T) {
	r := newRig(t)
	r.addBook([]string{"2026-04-01", "46037.375", "", "=HYPERLINK(\"https://example.com\",\"x\")"})
	got, err := r.client.Table(context.Background(), r.token(t, targets.SheetsScope), sid, title, "D")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0]) != 4 || got[0][0] != "Date" || len(got[1]) != 4 || got[1][0] != "2026-04-01" || got[1][1] != 46037.375 || got[1][2] != "" {
		t.Fatalf("table %#v", got)
	}
	if _, err := r.client.Table(context.Background(), r.token(t, targets.SheetsScope), sid, title, "a1"); err == nil {
		t.Fatal("a column that is no column was read")
	}
}
