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

package sandbox

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// Route names of the Google Sheets emulator, after the methods' ids in the
// sheets/v4 discovery document.
const (
	SheetsGet          = "googleapis.sheets.spreadsheets.get"
	SheetsValuesGet    = "googleapis.sheets.spreadsheets.values.get"
	SheetsValuesAppend = "googleapis.sheets.spreadsheets.values.append"
)

// Scopes of the Sheets methods, as their reference pages list them
// (https://developers.google.com/sheets/api/reference/rest/v4/spreadsheets.values/get
// and …/append): reads take the read-only scopes too, writes do not.
// drive.file is listed by Google as well, but it only reaches files the app
// created or opened, which the emulator cannot know; it is refused, so
// that a client relying on it fails here rather than in production.
var (
	sheetsReadScopes = []string{
		"https://www.googleapis.com/auth/spreadsheets",
		"https://www.googleapis.com/auth/spreadsheets.readonly",
		"https://www.googleapis.com/auth/drive",
		"https://www.googleapis.com/auth/drive.readonly",
	}
	sheetsWriteScopes = []string{
		"https://www.googleapis.com/auth/spreadsheets",
		"https://www.googleapis.com/auth/drive",
	}
)

// Default grid of a new sheet: "rowCount": 1000, "columnCount": 26, as a
// spreadsheet made through the API answers
// (https://docs.autoro.io/actions/google-spreadsheet shows Google's answer).
const (
	defaultSheetRows    = 1000
	defaultSheetColumns = 26
)

// SheetSpec is a sheet (tab) created from a test or the seed. Rows are its
// initial cells, e.g. the header row, entered as a person types them.
type SheetSpec struct {
	ID    int64      `json:"id"`
	Title string     `json:"title"`
	Rows  [][]string `json:"rows,omitempty"`
}

// SheetCell is a stored cell: a string, float64 or bool Value (nil when the
// cell is empty or holds a formula), or a Formula such as
// `=HYPERLINK("https://example.com","x")`.
type SheetCell struct {
	Value   any
	Formula string
}

func (c SheetCell) empty() bool { return c.Value == nil && c.Formula == "" }

// GoogleSheets emulates the parts of the Google Sheets API v4 that an
// appender uses, as Google answers them, so that the real
// google.golang.org/api/sheets/v4 client works against it unchanged:
// spreadsheets.get with partial responses, values.get with A1 ranges and
// render options, and values.append with Google's table detection, value
// input options, per-user write quota and error bodies. Requests are
// authenticated with access tokens of the GoogleOAuth emulator.
type GoogleSheets struct {
	// Now is the clock of the quotas (nil: the GoogleOAuth emulator's, so
	// that one fake clock drives both token expiry and quota minutes).
	Now func() time.Time

	oauth *GoogleOAuth

	mu         sync.Mutex
	books      map[string]*spreadsheet
	writeQuota int
	writes     map[string]quotaWindow // by the user's subject
	// otherWriters: until when another program of the user (by subject)
	// spends the user's whole write quota.
	otherWriters map[string]time.Time
	// failAfterWrite: how many of the next appends write their rows and
	// then answer 503.
	failAfterWrite int
	hold           *appendHold
}

type spreadsheet struct {
	id, title, timeZone string
	access              string // "writer" (default), "reader", "none"
	sheets              []*sheet
}

type sheet struct {
	id                 int64
	title              string
	rowCount, colCount int
	cells              [][]SheetCell // ragged; missing cells are empty
}

type quotaWindow struct {
	start time.Time
	n     int
}

type appendHold struct {
	held, release chan struct{}
	once          sync.Once
}

// NewGoogleSheets returns the emulator with no spreadsheets; oauth
// authenticates the Bearer tokens of requests.
func NewGoogleSheets(oauth *GoogleOAuth) *GoogleSheets {
	return &GoogleSheets{
		oauth: oauth,
		books: map[string]*spreadsheet{},
		// Write requests "Per minute per user per project: 60" ("Usage
		// limits", https://developers.google.com/sheets/api/limits).
		writeQuota:   60,
		writes:       map[string]quotaWindow{},
		otherWriters: map[string]time.Time{},
	}
}

// Upstream implements Emulator.
func (g *GoogleSheets) Upstream() upstream.Name { return upstream.GoogleAPIs }

// Register implements Emulator. The API lives at
// https://sheets.googleapis.com/v4/ (rootUrl "https://sheets.googleapis.com/"
// and empty servicePath in the discovery document), served under the
// googleapis upstream's prefix like every Google API here. values.append's
// path is "{range}:append", a custom method after the last path segment,
// which a ServeMux wildcard cannot split, so the handler takes the suffix
// off itself.
func (g *GoogleSheets) Register(s *Server) {
	base := "/" + string(upstream.GoogleAPIs) + "/v4/spreadsheets/{spreadsheetId}"
	s.Handle(SheetsGet, "GET "+base, g.get)
	s.Handle(SheetsValuesGet, "GET "+base+"/values/{range}", g.valuesGet)
	s.Handle(SheetsValuesAppend, "POST "+base+"/values/{range}", g.valuesAppend)
	g.registerAdmin(s)
}

func (g *GoogleSheets) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	if g.oauth != nil {
		return g.oauth.now()
	}
	return time.Now()
}

// AddSpreadsheet creates (or replaces) a spreadsheet with its sheets, in
// order; without sheets it has one "Sheet1" with id 0, as a new spreadsheet
// does. Rows are entered as USER_ENTERED values: "=…" is a formula, "12" a
// number.
func (g *GoogleSheets) AddSpreadsheet(id, timeZone string, sheets ...SheetSpec) {
	if len(sheets) == 0 {
		sheets = []SheetSpec{{ID: 0, Title: "Sheet1"}}
	}
	b := &spreadsheet{id: id, title: "Untitled spreadsheet", timeZone: timeZone, access: "writer"}
	for _, spec := range sheets {
		sh := &sheet{id: spec.ID, title: spec.Title, rowCount: defaultSheetRows, colCount: defaultSheetColumns}
		for r, row := range spec.Rows {
			for c, v := range row {
				sh.set(r, c, userEntered(v))
			}
		}
		b.sheets = append(b.sheets, sh)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.books[id] = b
}

// ErrSheetNotFound is returned for an unknown spreadsheet or sheet.
var ErrSheetNotFound = errors.New("sandbox: no such spreadsheet or sheet")

func (g *GoogleSheets) sheetLocked(spreadsheetID, title string) (*sheet, error) {
	b, ok := g.books[spreadsheetID]
	if !ok {
		return nil, fmt.Errorf("%w: spreadsheet %q", ErrSheetNotFound, spreadsheetID)
	}
	if sh := b.sheetByTitle(title); sh != nil {
		return sh, nil
	}
	return nil, fmt.Errorf("%w: sheet %q in %q", ErrSheetNotFound, title, spreadsheetID)
}

// Rows returns a sheet's formatted values as values.get would answer them
// for the whole sheet: trailing empty cells and rows left out, empty cells
// inside a row as "". It is nil for an unknown sheet.
func (g *GoogleSheets) Rows(spreadsheetID, title string) [][]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	sh, err := g.sheetLocked(spreadsheetID, title)
	if err != nil {
		return nil
	}
	var out [][]string
	for _, row := range sh.grid(gridRange{r1: sh.rowCount, c1: sh.colCount}, false, renderFormatted) {
		line := make([]string, len(row))
		for i, v := range row {
			line[i] = v.(string)
		}
		out = append(out, line)
	}
	return out
}

// Cell returns one stored cell by its A1 reference ("B7"); false for an
// unknown sheet or a reference that is not a single cell.
func (g *GoogleSheets) Cell(spreadsheetID, title, a1 string) (SheetCell, bool) {
	rg, ok := parseCells(a1)
	if !ok || rg.r1 != rg.r0+1 || rg.c1 != rg.c0+1 {
		return SheetCell{}, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	sh, err := g.sheetLocked(spreadsheetID, title)
	if err != nil {
		return SheetCell{}, false
	}
	return sh.get(rg.r0, rg.c0), true
}

// SetRow replaces row (1-based) of a sheet with values, as a person editing
// it would (renaming a header, say): USER_ENTERED values, and the rest of
// the row cleared.
func (g *GoogleSheets) SetRow(spreadsheetID, title string, row int, values ...string) error {
	if row < 1 {
		return fmt.Errorf("sandbox: row %d: rows start at 1", row)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	sh, err := g.sheetLocked(spreadsheetID, title)
	if err != nil {
		return err
	}
	if row-1 < len(sh.cells) {
		sh.cells[row-1] = nil
	}
	for c, v := range values {
		sh.set(row-1, c, userEntered(v))
	}
	return nil
}

// SetAccess sets what the caller may do with a spreadsheet: "writer" (the
// default; also "owner"), "reader" or "commenter" (reads only: appends
// answer 403), or "none" (every call answers 403, as for a spreadsheet not
// shared with the user).
func (g *GoogleSheets) SetAccess(spreadsheetID, role string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if b, ok := g.books[spreadsheetID]; ok {
		switch role {
		case "owner", "writer", "":
			role = "writer"
		case "commenter":
			role = "reader"
		}
		b.access = role
	}
}

// SetWriteQuota sets the write requests per minute per user (60, Google's
// default); a request beyond it answers 429 until the minute is over.
func (g *GoogleSheets) SetWriteQuota(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writeQuota = n
}

// SpendWriteQuota makes another program of the user sub (an add-on, a
// script, a second integration on the same Google account and Cloud
// project) use the user's whole write quota until until, on the
// emulator's clock: each write request of sub in that time answers 429 as
// an exhausted quota does. Google counts the 60 write requests a minute
// "per user per project" ("Usage limits",
// https://developers.google.com/sheets/api/limits), so what other
// programs of the same user and project write is charged to the same
// minute; a program that writes in a loop keeps every minute spent.
func (g *GoogleSheets) SpendWriteQuota(sub string, until time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.otherWriters[sub] = until
}

// FailAppendsAfterWrite makes the next n values.append calls write their
// rows and then answer 503 UNAVAILABLE "The service is currently
// unavailable.", as Google's front end does when the backend applied a
// write whose answer it then lost: users of append report the duplicate
// rows a plain retry of such a call leaves
// (https://github.com/daniel-hauser/moneyman/issues/496, "Retry caused
// duplication"; https://github.com/jroehl/google-sheet-cli/issues/467:
// values.append "is not idempotent, and a retry after a response that was
// actually delivered would append the rows twice"; the 503 message as
// users recorded it there and in
// https://github.com/AutomaApp/automa/issues/1675).
func (g *GoogleSheets) FailAppendsAfterWrite(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failAfterWrite = n
}

// RenameSheet renames the sheet with id sheetID, as a person renaming the
// tab does; its id stays. Ranges naming the old title then answer 400
// INVALID_ARGUMENT "Unable to parse range: …" like any title the
// spreadsheet does not have: users meet it when a tab was renamed under
// their code (https://github.com/mobizt/ESP-Google-Sheet-Client/issues/6,
// "Sheet was labelled New Sheet … Renamed New Sheet to Sheet1 and all is
// well"; https://github.com/VoltaicHQ/Progress-Sheet-Updater/issues/53;
// https://github.com/bpk68/g-sheets-api/issues/98, "if someone rename the
// sheet then the logic breaks"), and spreadsheets.get shows the new title
// under the same sheetId.
func (g *GoogleSheets) RenameSheet(spreadsheetID string, sheetID int64, title string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, ok := g.books[spreadsheetID]
	if !ok {
		return fmt.Errorf("%w: spreadsheet %q", ErrSheetNotFound, spreadsheetID)
	}
	if other := b.sheetByTitle(title); other != nil && other.id != sheetID {
		return fmt.Errorf("sandbox: a sheet titled %q already exists", title)
	}
	for _, sh := range b.sheets {
		if sh.id == sheetID {
			sh.title = title
			return nil
		}
	}
	return fmt.Errorf("%w: sheet id %d in %q", ErrSheetNotFound, sheetID, spreadsheetID)
}

// HoldAppends makes every values.append, until release is called, write
// its rows, send on held, and then keep its HTTP response back until
// release or until the request's context ends (the client went away): the
// moment where Google has written but the caller has not heard of it.
func (g *GoogleSheets) HoldAppends() (held <-chan struct{}, release func()) {
	h := &appendHold{held: make(chan struct{}), release: make(chan struct{})}
	g.mu.Lock()
	g.hold = h
	g.mu.Unlock()
	return h.held, func() {
		h.once.Do(func() {
			close(h.release)
			g.mu.Lock()
			if g.hold == h {
				g.hold = nil
			}
			g.mu.Unlock()
		})
	}
}
