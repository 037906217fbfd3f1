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
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// These tests drive the Sheets emulator through the real client,
// google.golang.org/api/sheets/v4, with tokens of the OAuth emulator.

const (
	sheetsScope   = "https://www.googleapis.com/auth/spreadsheets"
	sheetsRead    = "https://www.googleapis.com/auth/spreadsheets.readonly"
	timeLogHeader = "Date,Start,End,Hours,Project,Task,Notes,Link,Billable"
)

type sheetsRig struct {
	s      *sandbox.Server
	sheets *sandbox.GoogleSheets
	g      *sandbox.GoogleOAuth
	url    string

	mu  sync.Mutex
	now time.Time
}

func newSheetsRig(t *testing.T) *sheetsRig {
	t.Helper()
	r := &sheetsRig{now: time.Date(2026, 3, 2, 10, 0, 30, 0, time.UTC)}
	r.g = sandbox.NewGoogleOAuth()
	r.g.AddClient("client-1", "secret-1")
	r.g.Now = r.clock
	r.sheets = sandbox.NewGoogleSheets(r.g)
	r.s = sandbox.New(r.g, r.sheets)
	srv := httptest.NewServer(r.s)
	t.Cleanup(srv.Close)
	r.url = srv.URL
	r.sheets.AddSpreadsheet("book-1", "Asia/Tokyo",
		sandbox.SheetSpec{ID: 0, Title: "Sheet1", Rows: [][]string{strings.Split(timeLogHeader, ",")}},
		sandbox.SheetSpec{ID: 1200, Title: "Time log", Rows: [][]string{{"Date", "Hours"}}},
		sandbox.SheetSpec{ID: 1300, Title: "It's", Rows: [][]string{{"Who", "What"}}},
		sandbox.SheetSpec{ID: 1400, Title: "勤怠記録", Rows: [][]string{{"日付", "時間"}}},
	)
	return r
}

func (r *sheetsRig) clock() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

func (r *sheetsRig) advance(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = r.now.Add(d)
}

// service is a sheets client of the default user whose tokens carry scope.
func (r *sheetsRig) service(t *testing.T, scope string) *sheets.Service {
	t.Helper()
	return r.serviceFor(t, r.g.IssueRefreshToken("client-1", scope))
}

func (r *sheetsRig) serviceFor(t *testing.T, refreshToken string) *sheets.Service {
	t.Helper()
	ctx := context.Background()
	cfg := &oauth2.Config{
		ClientID: "client-1", ClientSecret: "secret-1",
		Endpoint: oauth2.Endpoint{TokenURL: r.url + "/googleoauth/token", AuthStyle: oauth2.AuthStyleInHeader},
	}
	hc := oauth2.NewClient(ctx, cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: refreshToken}))
	return r.serviceWith(t, hc)
}

func (r *sheetsRig) serviceWith(t *testing.T, hc *http.Client) *sheets.Service {
	t.Helper()
	svc, err := sheets.NewService(context.Background(), option.WithEndpoint(r.url+"/googleapis/"), option.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func sheetsErr(t *testing.T, err error, code int) *googleapi.Error {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("got %v (%T), want a *googleapi.Error %d", err, err, code)
	}
	if ge.Code != code {
		t.Fatalf("got %d %q, want %d", ge.Code, ge.Message, code)
	}
	return ge
}

func row(vs ...any) []any { return vs }

func TestSheetsGetWithFieldMasks(t *testing.T) {
	r := newSheetsRig(t)
	svc := r.service(t, sheetsRead)

	got, err := svc.Spreadsheets.Get("book-1").Fields("spreadsheetId,properties.timeZone,sheets.properties(sheetId,title)").Do()
	if err != nil {
		t.Fatal(err)
	}
	if got.SpreadsheetId != "book-1" || got.Properties.TimeZone != "Asia/Tokyo" || got.Properties.Title != "" || got.SpreadsheetUrl != "" {
		t.Fatalf("spreadsheet %+v, properties %+v", got, got.Properties)
	}
	if len(got.Sheets) != 4 || got.Sheets[1].Properties.Title != "Time log" || got.Sheets[1].Properties.SheetId != 1200 ||
		got.Sheets[1].Properties.Index != 0 || got.Sheets[1].Properties.GridProperties != nil {
		t.Fatalf("sheets %+v", got.Sheets[1].Properties)
	}

	got, err = svc.Spreadsheets.Get("book-1").Fields("properties(title,timeZone),sheets(properties(sheetId,title,index))").Do()
	if err != nil {
		t.Fatal(err)
	}
	if got.SpreadsheetId != "" || got.Properties.Title != "Untitled spreadsheet" || got.Properties.Locale != "" || got.Sheets[3].Properties.Index != 3 || got.Sheets[3].Properties.Title != "勤怠記録" {
		t.Fatalf("spreadsheet %+v, sheet %+v", got, got.Sheets[3].Properties)
	}

	// snake_case names and "/" paths select the same fields.
	got, err = svc.Spreadsheets.Get("book-1").Fields("spreadsheet_id,sheets/properties/title").Do()
	if err != nil || got.SpreadsheetId != "book-1" || got.Properties != nil || got.Sheets[2].Properties.Title != "It's" || got.Sheets[2].Properties.SheetId != 0 {
		t.Fatalf("snake_case mask: %v %+v", err, got)
	}

	// Without a mask, the whole resource, as a new spreadsheet has it.
	full, err := svc.Spreadsheets.Get("book-1").Do()
	if err != nil {
		t.Fatal(err)
	}
	if gp := full.Sheets[0].Properties.GridProperties; gp == nil || gp.RowCount != 1000 || gp.ColumnCount != 26 || full.Sheets[0].Properties.SheetType != "GRID" {
		t.Fatalf("grid %+v", full.Sheets[0].Properties)
	}

	_, err = svc.Spreadsheets.Get("no-such-book").Do()
	if ge := sheetsErr(t, err, 404); ge.Message != "Requested entity was not found." || !strings.Contains(ge.Body, `"status": "NOT_FOUND"`) {
		t.Fatalf("404: %+v", ge)
	}
	if n := r.s.Calls(sandbox.SheetsGet); n != 5 {
		t.Fatalf("calls = %d", n)
	}
}

func TestSheetsValuesGetRangesAndTitles(t *testing.T) {
	r := newSheetsRig(t)
	svc := r.service(t, sheetsRead)
	for _, tc := range []struct {
		rng, want string
		values    [][]any
	}{
		{"'Time log'!A1:Z1", "'Time log'!A1:Z1", [][]any{{"Date", "Hours"}}},
		{"'It''s'!A:A", "'It''s'!A1:A1000", [][]any{{"Who"}}},
		{"'勤怠記録'!1:1", "'勤怠記録'!A1:Z1", [][]any{{"日付", "時間"}}},
		{"勤怠記録!A1:B1", "'勤怠記録'!A1:B1", [][]any{{"日付", "時間"}}},
		{"Sheet1", "Sheet1!A1:Z1000", [][]any{{"Date", "Start", "End", "Hours", "Project", "Task", "Notes", "Link", "Billable"}}},
		{"Sheet1!F:F", "Sheet1!F1:F1000", [][]any{{"Task"}}},
		{"A1:B1", "Sheet1!A1:B1", [][]any{{"Date", "Start"}}},
		{"Sheet1!B1", "Sheet1!B1", [][]any{{"Start"}}},
		{"Sheet1!A2:C9", "Sheet1!A2:C9", nil},
	} {
		t.Run(tc.rng, func(t *testing.T) {
			vr, err := svc.Spreadsheets.Values.Get("book-1", tc.rng).Do()
			if err != nil {
				t.Fatal(err)
			}
			if vr.Range != tc.want || vr.MajorDimension != "ROWS" || !reflect.DeepEqual(vr.Values, tc.values) {
				t.Fatalf("got %q %s %v, want %q %v", vr.Range, vr.MajorDimension, vr.Values, tc.want, tc.values)
			}
		})
	}

	cols, err := svc.Spreadsheets.Values.Get("book-1", "'Time log'!A1:B1").MajorDimension("COLUMNS").Do()
	if err != nil || !reflect.DeepEqual(cols.Values, [][]any{{"Date"}, {"Hours"}}) {
		t.Fatalf("COLUMNS: %v %v", err, cols)
	}

	_, err = svc.Spreadsheets.Values.Get("book-1", "Class Data!A2:E").Do()
	if ge := sheetsErr(t, err, 400); ge.Message != "Unable to parse range: Class Data!A2:E" {
		t.Fatalf("unknown sheet: %q", ge.Message)
	}
	_, err = svc.Spreadsheets.Values.Get("book-1", "Sheet1!A1:A2000").Do()
	if ge := sheetsErr(t, err, 400); ge.Message != "Range (Sheet1!A1:A2000) exceeds grid limits. Max rows: 1000, max columns: 26" {
		t.Fatalf("past the grid: %q", ge.Message)
	}
}

func TestSheetsAppendRawKeepsTextUserEnteredParses(t *testing.T) {
	r := newSheetsRig(t)
	svc := r.service(t, sheetsScope)
	vals := &sheets.ValueRange{Values: [][]any{row(`=HYPERLINK("https://example.com/x","x")`, "+1", "@x", "12", 3.5, true)}}

	raw, err := svc.Spreadsheets.Values.Append("book-1", "'Time log'!A:F", vals).ValueInputOption("RAW").Do()
	if err != nil {
		t.Fatal(err)
	}
	if raw.TableRange != "'Time log'!A1:B1" || raw.Updates.UpdatedRange != "'Time log'!A2:F2" || raw.Updates.UpdatedCells != 6 {
		t.Fatalf("RAW: %+v %+v", raw, raw.Updates)
	}
	if c, _ := r.sheets.Cell("book-1", "Time log", "A2"); c.Formula != "" || c.Value != `=HYPERLINK("https://example.com/x","x")` {
		t.Fatalf("RAW A2 = %+v, want the text", c)
	}
	if c, _ := r.sheets.Cell("book-1", "Time log", "B2"); c.Value != "+1" {
		t.Fatalf("RAW B2 = %+v", c)
	}
	if c, _ := r.sheets.Cell("book-1", "Time log", "D2"); c.Value != "12" {
		t.Fatalf("RAW D2 = %+v, want the string", c)
	}
	if c, _ := r.sheets.Cell("book-1", "Time log", "E2"); c.Value != 3.5 {
		t.Fatalf("RAW E2 = %+v, want the number", c)
	}

	ue, err := svc.Spreadsheets.Values.Append("book-1", "'Time log'!A:F", vals).ValueInputOption("USER_ENTERED").Do()
	if err != nil || ue.Updates.UpdatedRange != "'Time log'!A3:F3" {
		t.Fatalf("USER_ENTERED: %v %+v", err, ue)
	}
	if c, _ := r.sheets.Cell("book-1", "Time log", "A3"); c.Formula != `=HYPERLINK("https://example.com/x","x")` || c.Value != nil {
		t.Fatalf("USER_ENTERED A3 = %+v, want a formula", c)
	}
	if c, _ := r.sheets.Cell("book-1", "Time log", "D3"); c.Value != 12.0 {
		t.Fatalf("USER_ENTERED D3 = %+v, want a number", c)
	}

	formatted, err := svc.Spreadsheets.Values.Get("book-1", "'Time log'!A2:F3").Do()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{`=HYPERLINK("https://example.com/x","x")`, "+1", "@x", "12", "3.5", "TRUE"},
		{"x", "1", "@x", "12", "3.5", "TRUE"},
	}
	if !reflect.DeepEqual(formatted.Values, want) {
		t.Fatalf("FORMATTED_VALUE %v", formatted.Values)
	}
	formulas, err := svc.Spreadsheets.Values.Get("book-1", "'Time log'!A3:B3").ValueRenderOption("FORMULA").Do()
	if err != nil || !reflect.DeepEqual(formulas.Values, [][]any{{`=HYPERLINK("https://example.com/x","x")`, 1.0}}) {
		t.Fatalf("FORMULA %v %v", err, formulas)
	}
	unformatted, err := svc.Spreadsheets.Values.Get("book-1", "'Time log'!D2:F3").ValueRenderOption("UNFORMATTED_VALUE").Do()
	if err != nil || !reflect.DeepEqual(unformatted.Values, [][]any{{"12", 3.5, true}, {12.0, 3.5, true}}) {
		t.Fatalf("UNFORMATTED_VALUE %v %v", err, unformatted)
	}

	// valueInputOption is required.
	_, err = svc.Spreadsheets.Values.Append("book-1", "Sheet1", vals).Do()
	if ge := sheetsErr(t, err, 400); ge.Message != "'valueInputOption' is required but not specified" {
		t.Fatalf("missing valueInputOption: %q", ge.Message)
	}
}

func TestSheetsAppendAfterTheTable(t *testing.T) {
	r := newSheetsRig(t)
	svc := r.service(t, sheetsScope)
	entry := func(day string) []any {
		return row(day, "09:00", "10:00", "1", "switchboard", "review", "", "https://example.com", "TRUE")
	}
	// Three rows under the header: A2:I4.
	resp, err := svc.Spreadsheets.Values.Append("book-1", "Sheet1!A1:I1",
		&sheets.ValueRange{Values: [][]any{entry("2026-03-01"), entry("2026-03-02"), entry("2026-03-03")}}).ValueInputOption("RAW").Do()
	if err != nil {
		t.Fatal(err)
	}
	u := resp.Updates
	if resp.TableRange != "Sheet1!A1:I1" || u.UpdatedRange != "Sheet1!A2:I4" || u.UpdatedRows != 3 || u.UpdatedColumns != 9 || u.UpdatedCells != 27 || u.SpreadsheetId != "book-1" {
		t.Fatalf("first append %+v %+v", resp, u)
	}
	// The table is found beyond the input range, and the next rows go after it.
	resp, err = svc.Spreadsheets.Values.Append("book-1", "Sheet1",
		&sheets.ValueRange{Values: [][]any{entry("2026-03-04"), entry("2026-03-05"), entry("2026-03-06")}}).ValueInputOption("RAW").
		IncludeValuesInResponse(true).Do()
	if err != nil {
		t.Fatal(err)
	}
	if resp.TableRange != "Sheet1!A1:I4" || resp.Updates.UpdatedRange != "Sheet1!A5:I7" {
		t.Fatalf("second append %+v %+v", resp, resp.Updates)
	}
	if d := resp.Updates.UpdatedData; d == nil || d.Range != "Sheet1!A5:I7" || len(d.Values) != 3 || d.Values[0][0] != "2026-03-04" {
		t.Fatalf("updatedData %+v", d)
	}
	if rows := r.sheets.Rows("book-1", "Sheet1"); len(rows) != 7 || rows[6][0] != "2026-03-06" {
		t.Fatalf("rows %v", rows)
	}

	// A blank row ends the table: with a note further down, OVERWRITE writes
	// into the gap and INSERT_ROWS pushes the note down.
	if err := r.sheets.SetRow("book-1", "Time log", 12, "note"); err != nil {
		t.Fatal(err)
	}
	over, err := svc.Spreadsheets.Values.Append("book-1", "'Time log'!A:J", &sheets.ValueRange{Values: [][]any{row("d1", "1")}}).
		ValueInputOption("RAW").InsertDataOption("OVERWRITE").Do()
	if err != nil || over.Updates.UpdatedRange != "'Time log'!A2:B2" {
		t.Fatalf("OVERWRITE %v %+v", err, over)
	}
	ins, err := svc.Spreadsheets.Values.Append("book-1", "'Time log'!A:J", &sheets.ValueRange{Values: [][]any{row("d2", "2"), row("d3", "3")}}).
		ValueInputOption("RAW").InsertDataOption("INSERT_ROWS").Do()
	if err != nil || ins.Updates.UpdatedRange != "'Time log'!A3:B4" || ins.TableRange != "'Time log'!A1:B2" {
		t.Fatalf("INSERT_ROWS %v %+v", err, ins)
	}
	if c, _ := r.sheets.Cell("book-1", "Time log", "A14"); c.Value != "note" {
		t.Fatalf("A14 = %+v; INSERT_ROWS should have moved the note from row 12", c)
	}
	full, err := svc.Spreadsheets.Get("book-1").Do()
	if err != nil || full.Sheets[1].Properties.GridProperties.RowCount != 1002 {
		t.Fatalf("grid after inserting 2 rows: %v %+v", err, full.Sheets[1].Properties.GridProperties)
	}

	// An empty sheet has no table: the rows go to the range's first cell.
	r.sheets.AddSpreadsheet("book-2", "UTC")
	empty, err := svc.Spreadsheets.Values.Append("book-2", "Sheet1!C3", &sheets.ValueRange{Values: [][]any{row("a")}}).ValueInputOption("RAW").Do()
	if err != nil || empty.TableRange != "" || empty.Updates.UpdatedRange != "Sheet1!C3" {
		t.Fatalf("empty sheet %v %+v", err, empty)
	}
	if n := r.s.Calls(sandbox.SheetsValuesAppend); n != 5 {
		t.Fatalf("append calls = %d", n)
	}
}

func TestSheetsAuthErrors(t *testing.T) {
	r := newSheetsRig(t)
	vals := &sheets.ValueRange{Values: [][]any{row("x")}}

	// No credential at all: a write needs OAuth (401); a read is refused as
	// one without an API key (403).
	anon := r.serviceWith(t, http.DefaultClient)
	_, err := anon.Spreadsheets.Values.Append("book-1", "Sheet1", vals).ValueInputOption("RAW").Do()
	if ge := sheetsErr(t, err, 401); !strings.HasPrefix(ge.Message, "Request is missing required authentication credential.") ||
		!strings.Contains(ge.Body, "UNAUTHENTICATED") {
		t.Fatalf("anonymous write: %+v", ge)
	}
	_, err = anon.Spreadsheets.Get("book-1").Do()
	if ge := sheetsErr(t, err, 403); ge.Message != "The request is missing a valid API key." {
		t.Fatalf("anonymous read: %q", ge.Message)
	}

	// An invalid token.
	bogus := r.serviceWith(t, oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ya29.bogus"})))
	_, err = bogus.Spreadsheets.Values.Get("book-1", "Sheet1").Do()
	if ge := sheetsErr(t, err, 401); !strings.HasPrefix(ge.Message, "Request had invalid authentication credentials.") ||
		!strings.Contains(ge.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("bogus token: %+v", ge)
	}

	// A read-only scope reads but may not append.
	ro := r.service(t, sheetsRead)
	if _, err := ro.Spreadsheets.Values.Get("book-1", "Sheet1").Do(); err != nil {
		t.Fatal(err)
	}
	_, err = ro.Spreadsheets.Values.Append("book-1", "Sheet1", vals).ValueInputOption("RAW").Do()
	if ge := sheetsErr(t, err, 403); ge.Message != "Request had insufficient authentication scopes." ||
		len(ge.Errors) != 1 || ge.Errors[0].Reason != "insufficientPermissions" {
		t.Fatalf("read-only scope: %+v", ge)
	}

	// A spreadsheet shared read-only.
	rw := r.service(t, sheetsScope)
	r.sheets.SetAccess("book-1", "reader")
	if _, err := rw.Spreadsheets.Values.Get("book-1", "Sheet1").Do(); err != nil {
		t.Fatal(err)
	}
	_, err = rw.Spreadsheets.Values.Append("book-1", "Sheet1", vals).ValueInputOption("RAW").Do()
	if ge := sheetsErr(t, err, 403); ge.Message != "The caller does not have permission" || !strings.Contains(ge.Body, "PERMISSION_DENIED") {
		t.Fatalf("reader: %+v", ge)
	}
	r.sheets.SetAccess("book-1", "none")
	_, err = rw.Spreadsheets.Values.Get("book-1", "Sheet1").Do()
	_ = sheetsErr(t, err, 403)

	// An unknown spreadsheet.
	_, err = rw.Spreadsheets.Values.Append("nope", "Sheet1", vals).ValueInputOption("RAW").Do()
	if ge := sheetsErr(t, err, 404); ge.Message != "Requested entity was not found." {
		t.Fatalf("unknown: %+v", ge)
	}
}

func TestSheetsWriteQuotaPerUserAndMinute(t *testing.T) {
	r := newSheetsRig(t)
	r.sheets.SetWriteQuota(3)
	alice := r.service(t, sheetsScope)
	bob := r.serviceFor(t, r.g.IssueRefreshTokenFor("client-1", sheetsScope, "104427593722881234567"))
	appendOne := func(svc *sheets.Service) error {
		_, err := svc.Spreadsheets.Values.Append("book-1", "Sheet1", &sheets.ValueRange{Values: [][]any{row("x")}}).ValueInputOption("RAW").Do()
		return err
	}
	for i := range 3 {
		if err := appendOne(alice); err != nil {
			t.Fatalf("write %d: %v", i+1, err)
		}
	}
	ge := sheetsErr(t, appendOne(alice), 429)
	if ge.Message != "Quota exceeded for quota metric 'Write requests' and limit 'Write requests per minute per user' of service 'sheets.googleapis.com' for consumer 'project_number:123456789012'." {
		t.Fatalf("429 message %q", ge.Message)
	}
	info, _ := ge.Details[0].(map[string]any)
	md, _ := info["metadata"].(map[string]any)
	if len(ge.Details) != 2 || info["reason"] != "RATE_LIMIT_EXCEEDED" || md["quota_limit"] != "WriteRequestsPerMinutePerUser" || md["quota_limit_value"] != "3" ||
		!strings.Contains(ge.Body, `"status": "RESOURCE_EXHAUSTED"`) {
		t.Fatalf("429 details %+v", ge.Details)
	}
	// Another user has a quota of their own; reads are not writes.
	if err := appendOne(bob); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Spreadsheets.Values.Get("book-1", "Sheet1").Do(); err != nil {
		t.Fatal(err)
	}
	// The next minute of the emulator's clock refills it.
	r.advance(30 * time.Second)
	if err := appendOne(alice); err != nil {
		t.Fatalf("after the minute: %v", err)
	}
	if rows := r.sheets.Rows("book-1", "Sheet1"); len(rows) != 6 {
		t.Fatalf("%d rows, want the header and 5 appended", len(rows))
	}
}

func TestSheetsHoldAppends(t *testing.T) {
	r := newSheetsRig(t)
	svc := r.service(t, sheetsScope)
	appendRow := func(ctx context.Context, v string) (*sheets.AppendValuesResponse, error) {
		return svc.Spreadsheets.Values.Append("book-1", "'Time log'!A:B", &sheets.ValueRange{Values: [][]any{row(v, "1")}}).
			ValueInputOption("RAW").Context(ctx).Do()
	}
	held, release := r.sheets.HoldAppends()

	// Released: the rows are written before the answer comes.
	done := make(chan error, 1)
	go func() { _, err := appendRow(context.Background(), "first"); done <- err }()
	<-held
	if c, _ := r.sheets.Cell("book-1", "Time log", "A2"); c.Value != "first" {
		t.Fatalf("held append did not write: %+v", c)
	}
	select {
	case err := <-done:
		t.Fatalf("answered while held: %v", err)
	case <-time.After(50 * time.Millisecond):
	}

	// A client that gives up ends its own hold; the row stays written.
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { _, err := appendRow(ctx, "second"); gone <- err }()
	<-held
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled client: %v", err)
	}
	if c, _ := r.sheets.Cell("book-1", "Time log", "A3"); c.Value != "second" {
		t.Fatalf("A3 = %+v", c)
	}

	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// After release appends answer at once.
	if resp, err := appendRow(context.Background(), "third"); err != nil || resp.Updates.UpdatedRange != "'Time log'!A4:B4" {
		t.Fatalf("after release: %v %+v", err, resp)
	}
}

func TestSheetsFaultsAndCounters(t *testing.T) {
	r := newSheetsRig(t)
	svc := r.service(t, sheetsScope)
	r.s.SetFault(sandbox.SheetsValuesGet, sandbox.Fault{Status: 503, Times: 1})
	_, err := svc.Spreadsheets.Values.Get("book-1", "Sheet1").Do()
	_ = sheetsErr(t, err, 503)
	if _, err := svc.Spreadsheets.Values.Get("book-1", "Sheet1").Do(); err != nil {
		t.Fatal(err)
	}
	if n := r.s.Calls(sandbox.SheetsValuesGet); n != 2 {
		t.Fatalf("calls = %d", n)
	}
}

func TestSheetsRenamedTabRefusesItsOldTitle(t *testing.T) {
	r := newSheetsRig(t)
	svc := r.service(t, sheetsScope)
	if err := r.sheets.RenameSheet("book-1", 1200, "Hours 2026"); err != nil {
		t.Fatal(err)
	}
	_, err := svc.Spreadsheets.Values.Append("book-1", "'Time log'!A1", &sheets.ValueRange{Values: [][]any{row("x")}}).ValueInputOption("RAW").Do()
	if ge := sheetsErr(t, err, 400); ge.Message != "Unable to parse range: 'Time log'!A1" || !strings.Contains(ge.Body, `"status": "INVALID_ARGUMENT"`) {
		t.Fatalf("old title: %+v", ge)
	}
	got, err := svc.Spreadsheets.Get("book-1").Fields("sheets.properties(sheetId,title)").Do()
	if err != nil {
		t.Fatal(err)
	}
	if p := got.Sheets[1].Properties; p.SheetId != 1200 || p.Title != "Hours 2026" {
		t.Fatalf("after the rename: %+v", p)
	}
	if _, err := svc.Spreadsheets.Values.Append("book-1", "'Hours 2026'!A1", &sheets.ValueRange{Values: [][]any{row("x")}}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatalf("new title: %v", err)
	}
	if err := r.sheets.RenameSheet("book-1", 1200, "Sheet1"); err == nil {
		t.Fatal("renamed onto another sheet's title")
	}
}

func TestSheetsAppendFailingAfterItsWrite(t *testing.T) {
	r := newSheetsRig(t)
	svc := r.service(t, sheetsScope)
	r.sheets.FailAppendsAfterWrite(1)
	appendOne := func(v string) error {
		_, err := svc.Spreadsheets.Values.Append("book-1", "'Time log'!A1", &sheets.ValueRange{Values: [][]any{row(v)}}).ValueInputOption("RAW").Do()
		return err
	}
	ge := sheetsErr(t, appendOne("lost"), 503)
	if ge.Message != "The service is currently unavailable." || !strings.Contains(ge.Body, `"status": "UNAVAILABLE"`) {
		t.Fatalf("503 %+v", ge)
	}
	if c, _ := r.sheets.Cell("book-1", "Time log", "A2"); c.Value != "lost" {
		t.Fatalf("the refused append did not write: %+v", c)
	}
	if err := appendOne("next"); err != nil {
		t.Fatal(err)
	}
	if c, _ := r.sheets.Cell("book-1", "Time log", "A3"); c.Value != "next" {
		t.Fatalf("A3 = %+v", c)
	}
}

func TestSheetsWriteQuotaSpentByAnotherProgram(t *testing.T) {
	r := newSheetsRig(t)
	const sub = "104427593722881239999"
	svc := r.serviceFor(t, r.g.IssueRefreshTokenFor("client-1", sheetsScope, sub))
	other := r.serviceFor(t, r.g.IssueRefreshTokenFor("client-1", sheetsScope, "104427593722881230000"))
	appendOne := func(svc *sheets.Service) error {
		_, err := svc.Spreadsheets.Values.Append("book-1", "Sheet1", &sheets.ValueRange{Values: [][]any{row("x")}}).ValueInputOption("RAW").Do()
		return err
	}
	r.sheets.SpendWriteQuota(sub, r.clock().Add(90*time.Second))
	for _, step := range []time.Duration{0, 45 * time.Second, 44 * time.Second} {
		r.advance(step)
		_ = sheetsErr(t, appendOne(svc), 429)
	}
	if err := appendOne(other); err != nil {
		t.Fatalf("another user: %v", err)
	}
	r.advance(time.Second)
	if err := appendOne(svc); err != nil {
		t.Fatalf("after the other program stopped: %v", err)
	}
}
