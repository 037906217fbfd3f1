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

// Package gsheets is the operator's narrow client of the Google Sheets API:
// spreadsheets.get (the sheets and the time zone), values.get of one row
// or one column, and values.append of rows, through the real
// google.golang.org/api/sheets/v4 library under the one outbound policy
// (internal/upstream/gapi). Errors come back as *outbound.Error, with
// ErrUnauthorized and ErrNotFound for the failures a controller turns into
// a status a person must act on. It also holds the A1-notation and
// date-serial helpers the sheet controllers need.
package gsheets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/sheets/v4"

	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/gapi"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Errors a controller acts on; both are the shared gapi sentinels, so
// errors.Is answers alike whichever package's name is used.
var (
	// ErrUnauthorized is a 401 (the access token was refused) or a 403
	// that is not a rate limit: the grant's user may not open the
	// spreadsheet, so it must be shared with them or re-authorised.
	ErrUnauthorized = gapi.ErrUnauthorized
	// ErrNotFound is a 404 (the spreadsheet is gone or invisible to the
	// user) or a 400 "Unable to parse range" (the sheet is gone).
	ErrNotFound = gapi.ErrNotFound
)

// DefaultEndpoint is where the Sheets API lives
// (https://developers.google.com/sheets/api/reference/rest/v4/spreadsheets/get:
// "GET https://sheets.googleapis.com/v4/spreadsheets/{spreadsheetId}"),
// the library's default base path.
const DefaultEndpoint = "https://sheets.googleapis.com/"

// traceBytes bounds the JSON traces of an append kept in AppendResult.
const traceBytes = 2 << 10

// Sheet is one tab of a spreadsheet.
type Sheet struct {
	ID    int64
	Title string
}

// Spreadsheet is what spreadsheets.get tells the operator.
type Spreadsheet struct {
	ID, TimeZone string
	Sheets       []Sheet
}

// Sheet returns the sheet titled title, if any.
func (s Spreadsheet) Sheet(title string) (Sheet, bool) {
	for _, sh := range s.Sheets {
		if sh.Title == title {
			return sh, true
		}
	}
	return Sheet{}, false
}

// AppendResult is where an append landed.
type AppendResult struct {
	// UpdatedRange is Google's updates.updatedRange, such as
	// "'Log'!A5:I6".
	UpdatedRange string
	// FirstRow and LastRow are the 1-based rows written.
	FirstRow, LastRow int64
	// Request and Response are the call's JSON, each cut to a few KiB,
	// for a status or an event a person reads. Neither holds the token.
	Request, Response string
}

// Client calls the Sheets API.
type Client struct {
	svc *sheets.Service
}

// New builds a client on the googleapis upstream of out. Sheets has its
// own host: while the googleapis upstream has its default URL the client
// uses DefaultEndpoint (the upstream allows sheets.googleapis.com as an
// extra host); once it is overridden (the sandbox, the demo) every
// Google API is under that URL and Sheets' paths (v4/spreadsheets/...)
// follow it directly.
func New(ctx context.Context, out *outbound.Client) (*Client, error) {
	endpoint := out.Endpoint(upstream.GoogleAPIs, "/")
	if endpoint == upstream.NewSet().Endpoint(upstream.GoogleAPIs, "/") {
		endpoint = DefaultEndpoint
	}
	svc, err := sheets.NewService(ctx, gapi.Options(out, endpoint)...)
	if err != nil {
		return nil, fmt.Errorf("sheets client: %w", err)
	}
	return &Client{svc: svc}, nil
}

// Spreadsheet reads the spreadsheet's id, time zone and sheets, nothing
// else: a partial response (Fields) keeps the answer small however large
// the sheets are (https://developers.google.com/sheets/api/guides/concepts,
// "Partial responses").
func (c *Client) Spreadsheet(ctx context.Context, token, spreadsheetID string) (Spreadsheet, error) {
	got, err := c.svc.Spreadsheets.Get(spreadsheetID).
		Fields("spreadsheetId,properties.timeZone,sheets.properties(sheetId,title)").
		Context(gapi.WithToken(ctx, token)).Do()
	if err != nil {
		return Spreadsheet{}, classify("spreadsheets.get", err)
	}
	s := Spreadsheet{ID: got.SpreadsheetId}
	if got.Properties != nil {
		s.TimeZone = got.Properties.TimeZone
	}
	for _, sh := range got.Sheets {
		if sh == nil || sh.Properties == nil {
			continue
		}
		s.Sheets = append(s.Sheets, Sheet{ID: sh.Properties.SheetId, Title: sh.Properties.Title})
	}
	return s, nil
}

// Row reads one row ('Title'!row:row) as Sheets shows it
// (FORMATTED_VALUE). Trailing empty cells are not returned: "For output,
// empty trailing rows and columns will not be included"
// (https://developers.google.com/sheets/api/reference/rest/v4/spreadsheets.values#ValueRange).
func (c *Client) Row(ctx context.Context, token, spreadsheetID, sheetTitle string, row int) ([]string, error) {
	if row < 1 {
		return nil, outbound.PermanentError(upstream.GoogleAPIs, fmt.Sprintf("row %d: rows start at 1", row), nil)
	}
	a1 := fmt.Sprintf("%d:%d", row, row)
	rows, err := c.values(ctx, token, spreadsheetID, sheetTitle, a1, formatted)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return strs(rows[0]), nil
}

// Column reads one whole column ('Title'!F:F) as Sheets shows it; index 0
// is row 1, an empty cell is "", and the list stops at the last non-empty
// cell. Crash recovery looks an appended row up by a key written in it.
func (c *Client) Column(ctx context.Context, token, spreadsheetID, sheetTitle, column string) ([]string, error) {
	if _, err := ColumnIndex(column); err != nil {
		return nil, outbound.PermanentError(upstream.GoogleAPIs, err.Error(), err)
	}
	rows, err := c.values(ctx, token, spreadsheetID, sheetTitle, column+":"+column, formatted)
	if err != nil {
		return nil, err
	}
	col := make([]string, len(rows))
	for i, r := range rows {
		// With the default majorDimension ROWS, an empty cell above the
		// last value is an empty row, [].
		if len(r) > 0 {
			col[i] = str(r[0])
		}
	}
	return col, nil
}

// Table reads columns A to lastColumn of every row ('Title'!A:F) as
// stored, not as shown: UNFORMATTED_VALUE answers numbers as JSON numbers
// whatever the column's number format (a date-time serial stays
// 46037.375, not "2026-01-15 9:00"), and text as text
// (https://developers.google.com/sheets/api/reference/rest/v4/ValueRenderOption).
// Index 0 is row 1; a row's trailing empty cells are left out, an empty
// cell before them is "".
func (c *Client) Table(ctx context.Context, token, spreadsheetID, sheetTitle, lastColumn string) ([][]any, error) {
	if _, err := ColumnIndex(lastColumn); err != nil {
		return nil, outbound.PermanentError(upstream.GoogleAPIs, err.Error(), err)
	}
	return c.values(ctx, token, spreadsheetID, sheetTitle, "A:"+lastColumn, "UNFORMATTED_VALUE")
}

// formatted renders cells as Sheets shows them.
const formatted = "FORMATTED_VALUE"

func (c *Client) values(ctx context.Context, token, spreadsheetID, sheetTitle, a1, render string) ([][]any, error) {
	// FORMATTED_VALUE is the default; asked for explicitly where the
	// callers compare what a person sees
	// (https://developers.google.com/sheets/api/reference/rest/v4/spreadsheets.values/get,
	// valueRenderOption).
	vr, err := c.svc.Spreadsheets.Values.Get(spreadsheetID, Range(sheetTitle, a1)).
		ValueRenderOption(render).
		Context(gapi.WithToken(ctx, token)).Do()
	if err != nil {
		return nil, classify("values.get", err)
	}
	return vr.Values, nil
}

// Append adds rows after the sheet's table. The range 'Title'!A1 lets
// Google find the table and append after its last row, starting at its
// first column
// (https://developers.google.com/sheets/api/reference/rest/v4/spreadsheets.values/append).
// RAW stores the values as given: "The values the user has entered will
// not be parsed and will be stored as-is", where USER_ENTERED would turn a
// title such as =HYPERLINK(...) into a formula and "1/2" into a date
// (https://developers.google.com/sheets/api/reference/rest/v4/ValueInputOption).
// A date-time goes in as its Serial number for the same reason. INSERT_ROWS
// inserts new rows rather than overwriting what lies below the table
// (InsertDataOption, same page).
func (c *Client) Append(ctx context.Context, token, spreadsheetID, sheetTitle string, rows [][]any) (AppendResult, error) {
	const (
		valueInput = "RAW"
		insertData = "INSERT_ROWS"
	)
	rng := Range(sheetTitle, "A1")
	body := &sheets.ValueRange{MajorDimension: "ROWS", Values: rows}
	req, _ := json.Marshal(map[string]any{
		"spreadsheetId": spreadsheetID, "range": rng,
		"valueInputOption": valueInput, "insertDataOption": insertData, "values": rows,
	})
	res := AppendResult{Request: bound(string(req))}
	got, err := c.svc.Spreadsheets.Values.Append(spreadsheetID, rng, body).
		ValueInputOption(valueInput).InsertDataOption(insertData).
		Context(gapi.WithToken(ctx, token)).Do()
	if err != nil {
		return res, classify("values.append", err)
	}
	if b, err := json.Marshal(got); err == nil {
		res.Response = bound(string(b))
	}
	if got.Updates == nil || got.Updates.UpdatedRange == "" {
		return res, outbound.PermanentError(upstream.GoogleAPIs, "values.append: the answer names no updated range", nil)
	}
	res.UpdatedRange = got.Updates.UpdatedRange
	_, from, to, err := ParseRange(res.UpdatedRange)
	if err != nil || from.Row == 0 || to.Row < from.Row {
		return res, outbound.PermanentError(upstream.GoogleAPIs,
			fmt.Sprintf("values.append: unexpected updated range %q", res.UpdatedRange), err)
	}
	res.FirstRow, res.LastRow = int64(from.Row), int64(to.Row)
	return res, nil
}

// classify is gapi.Classify with the Sheets API's own cases.
func classify(call string, err error) error {
	e := gapi.Classify(call, err, upstream.GoogleAPIs)
	switch {
	case e.Status == http.StatusForbidden && e.Class == outbound.Permanent:
		// A 403 that is not a rate limit is PERMISSION_DENIED: "The caller
		// does not have permission" when the spreadsheet is not shared with
		// the token's user, or the token lacks the scope
		// (https://github.com/googleapis/google-api-ruby-client/issues/461).
		// Either way a person must act, as for a refused token.
		e.Err = errors.Join(ErrUnauthorized, err)
	case e.Status == http.StatusBadRequest && strings.HasPrefix(message(err), "Unable to parse range"):
		// A range naming a sheet the spreadsheet does not have is not a
		// 404 but 400 INVALID_ARGUMENT "Unable to parse range: ..."
		// (https://github.com/invokable/laravel-google-sheets/issues/13,
		// https://github.com/googleworkspace/php-samples/issues/14). The
		// ranges built here are always quoted, so it means the sheet is gone.
		e.Err = errors.Join(ErrNotFound, err)
	}
	return e
}

// message is the message of a Google error body.
func message(err error) string {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return ""
	}
	return ge.Message
}

// bound cuts s to traceBytes at a rune boundary.
func bound(s string) string {
	if len(s) <= traceBytes {
		return s
	}
	cut := traceBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func strs(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = str(v)
	}
	return out
}

// str is a cell as text: FORMATTED_VALUE answers strings, but a number or
// a bool would read the same way through fmt.
func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}
