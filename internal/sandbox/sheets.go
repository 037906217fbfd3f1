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
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

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

func (b *spreadsheet) sheetByTitle(title string) *sheet {
	for _, sh := range b.sheets {
		if sh.title == title {
			return sh
		}
	}
	return nil
}

func (sh *sheet) get(r, c int) SheetCell {
	if r < len(sh.cells) && c < len(sh.cells[r]) {
		return sh.cells[r][c]
	}
	return SheetCell{}
}

// set stores a cell, growing the grid as Google does when data is written
// past its end ("adding data to the end of the sheet will still insert new
// rows or columns so the data can be written", InsertDataOption OVERWRITE in
// https://developers.google.com/sheets/api/reference/rest/v4/spreadsheets.values/append).
func (sh *sheet) set(r, c int, v SheetCell) {
	for len(sh.cells) <= r {
		sh.cells = append(sh.cells, nil)
	}
	for len(sh.cells[r]) <= c {
		sh.cells[r] = append(sh.cells[r], SheetCell{})
	}
	sh.cells[r][c] = v
	sh.rowCount = max(sh.rowCount, r+1)
	sh.colCount = max(sh.colCount, c+1)
}

// insertRows inserts n empty rows before row r.
func (sh *sheet) insertRows(r, n int) {
	if r < len(sh.cells) {
		tail := append(make([][]SheetCell, n), sh.cells[r:]...)
		sh.cells = append(sh.cells[:r], tail...)
	}
	sh.rowCount += n
}

func (sh *sheet) rowHasData(r, c0, c1 int) bool {
	for c := c0; c < c1; c++ {
		if !sh.get(r, c).empty() {
			return true
		}
	}
	return false
}

// Render options of values.get (ValueRenderOption,
// https://developers.google.com/sheets/api/reference/rest/v4/ValueRenderOption).
const (
	renderFormatted   = "FORMATTED_VALUE"
	renderUnformatted = "UNFORMATTED_VALUE"
	renderFormula     = "FORMULA"
)

// grid renders a range as values.get answers it: "For output, empty
// trailing rows and columns will not be included" (ValueRange.values,
// https://developers.google.com/sheets/api/reference/rest/v4/spreadsheets.values),
// empty cells before the last value of a line as "", and columns as the
// lines when byColumns.
func (sh *sheet) grid(rg gridRange, byColumns bool, render string) [][]any {
	outer, inner := rg.r1-rg.r0, rg.c1-rg.c0
	if byColumns {
		outer, inner = inner, outer
	}
	var out [][]any
	for i := range outer {
		var line []any
		for j := range inner {
			r, c := rg.r0+i, rg.c0+j
			if byColumns {
				r, c = rg.r0+j, rg.c0+i
			}
			v := sh.get(r, c).render(render)
			if v == nil {
				line = append(line, nil)
				continue
			}
			line = append(line, v)
		}
		for len(line) > 0 && line[len(line)-1] == nil {
			line = line[:len(line)-1]
		}
		for k, v := range line {
			if v == nil {
				line[k] = ""
			}
		}
		out = append(out, line)
	}
	for len(out) > 0 && len(out[len(out)-1]) == 0 {
		out = out[:len(out)-1]
	}
	return out
}

var hyperlinkFormula = regexp.MustCompile(`(?i)^=HYPERLINK\(\s*"((?:[^"]|"")*)"\s*(?:[,;]\s*"((?:[^"]|"")*)"\s*)?\)$`)

// EmulatedFormulaValue is what a formula cell shows when rendered as a
// value: the emulator has no calculation engine, so apart from HYPERLINK
// (whose value is its label, or its URL without one) every formula
// answers this placeholder. FORMULA rendering answers the formula itself.
const EmulatedFormulaValue = "#EMULATED!"

// render is a cell as a value of the render option; nil for an empty cell.
// FORMATTED_VALUE: "Values will be calculated & formatted in the response
// according to the cell's formatting"; UNFORMATTED_VALUE: "calculated, but
// not formatted"; FORMULA: "Values will not be calculated. The reply will
// include the formulas." (ValueRenderOption). Numbers are formatted as the
// default "Automatic" format shows them, booleans as TRUE and FALSE.
func (c SheetCell) render(option string) any {
	if c.Formula != "" {
		if option == renderFormula {
			return c.Formula
		}
		if m := hyperlinkFormula.FindStringSubmatch(c.Formula); m != nil {
			if m[2] != "" {
				return strings.ReplaceAll(m[2], `""`, `"`)
			}
			return strings.ReplaceAll(m[1], `""`, `"`)
		}
		return EmulatedFormulaValue
	}
	if c.Value == nil || option != renderFormatted {
		return c.Value
	}
	switch v := c.Value.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		if v {
			return "TRUE"
		}
		return "FALSE"
	default:
		return fmt.Sprint(v)
	}
}

// rawValue stores a JSON value as given: "The values the user has entered
// will not be parsed and will be stored as-is" (ValueInputOption RAW,
// https://developers.google.com/sheets/api/reference/rest/v4/ValueInputOption),
// so "=HYPERLINK(…)", "+1" and "@x" stay text. "To set a cell to an empty
// value, set the string value to an empty string" (ValueRange.values).
func rawValue(v any) SheetCell {
	switch x := v.(type) {
	case string:
		if x == "" {
			return SheetCell{}
		}
		return SheetCell{Value: x}
	case float64, bool:
		return SheetCell{Value: x}
	default:
		return SheetCell{Value: fmt.Sprint(x)}
	}
}

// userEntered parses a string as the Sheets UI does with what a person
// types: "The values will be parsed as if the user typed them into the UI.
// Numbers will stay as numbers, but strings may be converted to numbers,
// dates, etc." (ValueInputOption USER_ENTERED). The emulator parses
// formulas ("=…"), numbers, percentages, TRUE and FALSE, and a leading
// apostrophe that forces text; dates and currencies stay text.
func userEntered(s string) SheetCell {
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return SheetCell{}
	case strings.HasPrefix(s, "'"):
		return rawValue(s[1:])
	case len(t) > 1 && strings.HasPrefix(t, "="):
		return SheetCell{Formula: t}
	case strings.EqualFold(t, "TRUE"):
		return SheetCell{Value: true}
	case strings.EqualFold(t, "FALSE"):
		return SheetCell{Value: false}
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && !strings.ContainsAny(t, "xXpPnN_") {
		return SheetCell{Value: f}
	}
	if p, ok := strings.CutSuffix(t, "%"); ok {
		if f, err := strconv.ParseFloat(p, 64); err == nil {
			return SheetCell{Value: f / 100}
		}
	}
	return SheetCell{Value: s}
}

// gridRange is a rectangle of cells, 0-based, ends exclusive; an end of -1
// is open (to the end of the grid) until clamped.
type gridRange struct {
	r0, c0, r1, c1 int
}

// parseCells parses the cells part of an A1 range: "A1", "A1:B2", "A:B"
// (whole columns), "1:2" (whole rows) and open ends such as "A5:A"
// ("Sheet1!A5:A refers to all the cells of column A, from row 5 onward",
// A1 notation in https://developers.google.com/sheets/api/guides/concepts).
// "$" markers and lower case letters are accepted.
func parseCells(s string) (gridRange, bool) {
	s = strings.ReplaceAll(s, "$", "")
	a, b, two := strings.Cut(s, ":")
	ca, ra, ok1 := parseRef(a)
	if !two {
		if !ok1 || ca < 0 || ra < 0 {
			return gridRange{}, false
		}
		return gridRange{r0: ra, c0: ca, r1: ra + 1, c1: ca + 1}, true
	}
	cb, rb, ok2 := parseRef(b)
	sameShape := (ca >= 0) == (cb >= 0) && (ra >= 0) == (rb >= 0)
	if !ok1 || !ok2 || (!sameShape && (ca < 0 || ra < 0)) {
		return gridRange{}, false
	}
	rg := gridRange{r0: max(ra, 0), c0: max(ca, 0), r1: -1, c1: -1}
	if rb >= 0 {
		rg.r1 = rb + 1
	}
	if cb >= 0 {
		rg.c1 = cb + 1
	}
	if ca >= 0 && cb >= 0 && cb < ca {
		rg.c0, rg.c1 = cb, ca+1
	}
	if ra >= 0 && rb >= 0 && rb < ra {
		rg.r0, rg.r1 = rb, ra+1
	}
	return rg, true
}

// parseRef parses "AB12" into column and row (0-based); either is -1 when
// absent.
func parseRef(s string) (col, row int, ok bool) {
	i := 0
	col, row = -1, -1
	for i < len(s) && unicode.IsLetter(rune(s[i])) && s[i] < 0x80 {
		i++
	}
	if i > 3 {
		return 0, 0, false
	}
	if i > 0 {
		col = 0
		for _, ch := range strings.ToUpper(s[:i]) {
			col = col*26 + int(ch-'A'+1)
		}
		col--
	}
	if i < len(s) {
		n, err := strconv.Atoi(s[i:])
		if err != nil || n < 1 || strings.HasPrefix(s[i:], "+") {
			return 0, 0, false
		}
		row = n - 1
	}
	return col, row, i > 0 || row >= 0
}

func columnName(c int) string {
	name := ""
	for c++; c > 0; c = (c - 1) / 26 {
		name = string(rune('A'+(c-1)%26)) + name
	}
	return name
}

var (
	plainSheetTitle = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	cellLikeTitle   = regexp.MustCompile(`^(?i:[A-Z]{1,3}[0-9]+|R[0-9]*C[0-9]*)$`)
)

// quoteSheetTitle writes a title as Google writes it in the ranges it
// answers: bare when it is a plain ASCII identifier that cannot be read as
// a cell, else in single quotes with inner quotes doubled: "'My Sheet'",
// "'Jon”s Data'!A1:Z1000"
// (https://github.com/googleapis/google-api-python-client/issues/2702), and
// non-ASCII titles quoted too ("'Лист1'!A1:Z1000" in answers recorded by
// users' tests). "Single quotes are required for sheet names with spaces,
// special characters, or an alphanumeric combination" (A1 notation,
// https://developers.google.com/sheets/api/guides/concepts).
func quoteSheetTitle(title string) string {
	if plainSheetTitle.MatchString(title) && !cellLikeTitle.MatchString(title) {
		return title
	}
	return "'" + strings.ReplaceAll(title, "'", "''") + "'"
}

// a1 writes a range in Google's normalised form: quoted title as needed,
// bounded, "Sheet1!A1" for a single cell and "Sheet1!A1:Z1000" otherwise.
func a1(title string, rg gridRange) string {
	s := quoteSheetTitle(title) + "!" + columnName(rg.c0) + strconv.Itoa(rg.r0+1)
	if rg.r1-rg.r0 == 1 && rg.c1-rg.c0 == 1 {
		return s
	}
	return s + ":" + columnName(rg.c1-1) + strconv.Itoa(rg.r1)
}

// badRequest400 is a request Google refuses with 400, with Google's message
// as it is (capitalised, which Go error strings usually are not).
type badRequest400 struct{ msg string }

func (e *badRequest400) Error() string { return e.msg }

// resolveRange finds the sheet and the bounded rectangle of an A1 range:
// "'Title'!cells", "Title!cells", a bare title (the whole sheet), or bare
// cells (the first sheet). A bare string is cells when it reads as cells
// and a title otherwise, so a sheet named like a cell must be quoted
// (https://github.com/robin900/gspread-dataframe/issues/54). A quoted title
// ends at the last "'!" or at the end, so that the undoubled "'Jon's
// Data'" Google accepts works too (google-api-python-client#2702). An
// unknown sheet or malformed cells answer "Unable to parse range: " and
// the range as given (e.g.
// https://github.com/invokable/laravel-google-sheets/issues/13); cells past
// the grid "Range (Sheet!CRM26) exceeds grid limits. Max rows: 1000, max
// columns: 26" (gspread-dataframe#54).
func (b *spreadsheet) resolveRange(raw string) (*sheet, gridRange, error) {
	bad := &badRequest400{"Unable to parse range: " + raw}
	title, cells, hasCells := "", "", false
	switch {
	case strings.HasPrefix(raw, "'"):
		if i := strings.LastIndex(raw, "'!"); i > 0 {
			title, cells, hasCells = raw[1:i], raw[i+2:], true
		} else if len(raw) > 1 && strings.HasSuffix(raw, "'") {
			title = raw[1 : len(raw)-1]
		} else {
			return nil, gridRange{}, bad
		}
		title = strings.ReplaceAll(title, "''", "'")
	case strings.Contains(raw, "!"):
		i := strings.LastIndex(raw, "!")
		title, cells, hasCells = raw[:i], raw[i+1:], true
	default:
		if _, ok := parseCells(raw); ok {
			cells, hasCells = raw, true
		} else {
			title = raw
		}
	}
	var sh *sheet
	if title == "" && hasCells && !strings.Contains(raw, "!") {
		if len(b.sheets) > 0 {
			sh = b.sheets[0]
		}
	} else {
		sh = b.sheetByTitle(title)
	}
	if sh == nil {
		return nil, gridRange{}, bad
	}
	rg := gridRange{r1: sh.rowCount, c1: sh.colCount}
	if hasCells {
		var ok bool
		if rg, ok = parseCells(cells); !ok {
			return nil, gridRange{}, bad
		}
		if rg.r1 < 0 {
			rg.r1 = sh.rowCount
		}
		if rg.c1 < 0 {
			rg.c1 = sh.colCount
		}
		if rg.r1 > sh.rowCount || rg.c1 > sh.colCount || rg.r0 >= rg.r1 || rg.c0 >= rg.c1 {
			return nil, gridRange{}, &badRequest400{fmt.Sprintf("Range (%s) exceeds grid limits. Max rows: %d, max columns: %d",
				a1(sh.title, gridRange{r0: rg.r0, c0: rg.c0, r1: max(rg.r1, rg.r0+1), c1: max(rg.c1, rg.c0+1)}), sh.rowCount, sh.colCount)}
		}
	}
	return sh, rg, nil
}

// googleStatusError writes the error body of Google's newer APIs, the JSON
// form of google.rpc.Status that Sheets answers: {"error": {"code",
// "message", "status"}}, with "errors" (the older per-item list) and
// "details" (typed google.rpc messages) where Google sends them
// ("Handle errors", https://cloud.google.com/apis/design/errors#http_mapping).
// Calendar's googleError writes the older shape without "status".
func googleStatusError(w http.ResponseWriter, code int, message string, errs []map[string]string, details ...any) {
	body := map[string]any{"code": code, "message": message, "status": rpcStatus(code)}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	if len(details) > 0 {
		body["details"] = details
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	b, _ := json.MarshalIndent(map[string]any{"error": body}, "", "  ")
	_, _ = w.Write(b)
}

// rpcStatus is the canonical status of an HTTP code (the mapping table of
// https://cloud.google.com/apis/design/errors#handling_errors).
func rpcStatus(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	default:
		return "INTERNAL"
	}
}

// sheetsProjectNumber is the Cloud project the emulator's quota errors
// name as their consumer (Google names the OAuth client's project).
const sheetsProjectNumber = "123456789012"

// Google's Sheets error messages.
const (
	// "Requested entity was not found." with status NOT_FOUND
	// (https://github.com/nikaia/translation-sheet/issues/10). That 2017
	// answer also carried an "errors" list, which Google's later answers of
	// the same API no longer do (the 400 and 403 below, from 2023), so the
	// emulator sends none.
	sheetsNotFound = "Requested entity was not found."
	// 403 PERMISSION_DENIED for a spreadsheet the user may not use this way
	// (https://github.com/gglukmann/use-google-sheets/issues/37, 2023).
	sheetsNoPermission = "The caller does not have permission"
)

// authorize checks the Bearer token and its scope for a read or a write
// and returns the user's subject; it answers the error and returns false
// when the request may not proceed.
func (g *GoogleSheets) authorize(w http.ResponseWriter, r *http.Request, write bool) (string, bool) {
	var scope, sub string
	present, ok := r.Header.Get("Authorization") != "", false
	if g.oauth != nil {
		scope, sub, present, ok = g.oauth.bearerGrant(r)
	}
	switch {
	case !present && !write:
		// Reads may use an API key (public spreadsheets), so a read with
		// no credential at all is refused as one without a key: 403
		// "The request is missing a valid API key." PERMISSION_DENIED
		// (https://github.com/theoephraim/node-google-spreadsheet/issues/497).
		googleStatusError(w, http.StatusForbidden, "The request is missing a valid API key.", nil)
		return "", false
	case !present:
		// Writes need OAuth: 401 "Request is missing required
		// authentication credential. …"
		// (https://github.com/googleapis/google-auth-library-nodejs/issues/168).
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
		googleStatusError(w, http.StatusUnauthorized, "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.", nil)
		return "", false
	case !ok:
		// An expired, revoked or unknown token
		// (https://github.com/googleapis/google-api-php-client/issues/1391).
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="invalid_token"`)
		googleStatusError(w, http.StatusUnauthorized, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.", nil)
		return "", false
	}
	allowed := sheetsReadScopes
	if write {
		allowed = sheetsWriteScopes
	}
	for _, s := range allowed {
		if hasScope(scope, s) {
			return sub, true
		}
	}
	// A token without a scope of the method: the challenge lists the
	// scopes that would do
	// (https://github.com/google/googleapis.dart/issues/208), the body is
	// 403 "Request had insufficient authentication scopes." with an
	// insufficientPermissions item
	// (https://github.com/googleworkspace/java-samples/issues/110).
	w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="insufficient_scope", scope="`+strings.Join(allowed, " ")+`"`)
	googleStatusError(w, http.StatusForbidden, "Request had insufficient authentication scopes.",
		[]map[string]string{{"domain": "global", "reason": "insufficientPermissions", "message": "Insufficient Permission"}})
	return "", false
}

// spreadsheetFor finds the spreadsheet of the request and checks the
// user's access to it; g.mu is held. It answers the error and returns nil
// when the request may not proceed.
func (g *GoogleSheets) spreadsheetFor(w http.ResponseWriter, r *http.Request, write bool) *spreadsheet {
	b, ok := g.books[r.PathValue("spreadsheetId")]
	switch {
	case !ok:
		googleStatusError(w, http.StatusNotFound, sheetsNotFound, nil)
		return nil
	case b.access == "none" || (write && b.access != "writer"):
		googleStatusError(w, http.StatusForbidden, sheetsNoPermission, nil)
		return nil
	}
	return b
}

// chargeWrite counts a write request of the user against the per-minute
// quota; g.mu is held. Google's quotas "are refilled every minute"
// ("Usage limits", https://developers.google.com/sheets/api/limits); the
// emulator counts calendar minutes of its clock. Over quota it answers
// Google's 429, as users recorded it
// (https://github.com/Sage-Bionetworks/data_curator/issues/110 and, for the
// metadata's full form,
// https://github.com/n8n-io/n8n/issues/16750), and returns false. The
// quota is charged before the request is looked at, as Google's front end
// does, so a request that then fails still counts.
func (g *GoogleSheets) chargeWrite(w http.ResponseWriter, sub string) bool {
	minute := g.now().Truncate(time.Minute)
	q := g.writes[sub]
	if !q.start.Equal(minute) {
		q = quotaWindow{start: minute}
	}
	if q.n >= g.writeQuota || g.now().Before(g.otherWriters[sub]) {
		const project = sheetsProjectNumber
		googleStatusError(w, http.StatusTooManyRequests,
			"Quota exceeded for quota metric 'Write requests' and limit 'Write requests per minute per user' of service 'sheets.googleapis.com' for consumer 'project_number:"+project+"'.",
			nil,
			map[string]any{
				"@type":  "type.googleapis.com/google.rpc.ErrorInfo",
				"reason": "RATE_LIMIT_EXCEEDED",
				"domain": "googleapis.com",
				"metadata": map[string]string{
					"quota_limit":       "WriteRequestsPerMinutePerUser",
					"quota_unit":        "1/min/{project}/{user}",
					"quota_location":    "global",
					"quota_limit_value": strconv.Itoa(g.writeQuota),
					"consumer":          "projects/" + project,
					"service":           "sheets.googleapis.com",
					"quota_metric":      "sheets.googleapis.com/write_requests",
				},
			},
			map[string]any{
				"@type": "type.googleapis.com/google.rpc.Help",
				"links": []map[string]string{{
					"description": "Request a higher quota limit.",
					"url":         "https://cloud.google.com/docs/quotas/help/request_increase",
				}},
			})
		return false
	}
	q.n++
	g.writes[sub] = q
	return true
}

func (g *GoogleSheets) get(w http.ResponseWriter, r *http.Request) {
	if _, ok := g.authorize(w, r, false); !ok {
		return
	}
	g.mu.Lock()
	b := g.spreadsheetFor(w, r, false)
	if b == nil {
		g.mu.Unlock()
		return
	}
	sheets := make([]any, 0, len(b.sheets))
	for i, sh := range b.sheets {
		sheets = append(sheets, map[string]any{"properties": map[string]any{
			"sheetId": sh.id, "title": sh.title, "index": i, "sheetType": "GRID",
			"gridProperties": map[string]any{"rowCount": sh.rowCount, "columnCount": sh.colCount},
		}})
	}
	body := map[string]any{
		"spreadsheetId": b.id,
		"properties": map[string]any{
			"title": b.title, "locale": "en_US", "autoRecalc": "ON_CHANGE", "timeZone": b.timeZone,
		},
		"sheets":         sheets,
		"spreadsheetUrl": "https://docs.google.com/spreadsheets/d/" + b.id + "/edit",
	}
	g.mu.Unlock()
	writePartial(w, r, body)
}

// valueRange is the ValueRange resource.
type valueRange struct {
	Range          string  `json:"range,omitempty"`
	MajorDimension string  `json:"majorDimension,omitempty"`
	Values         [][]any `json:"values,omitempty"`
}

func (g *GoogleSheets) valuesGet(w http.ResponseWriter, r *http.Request) {
	if _, ok := g.authorize(w, r, false); !ok {
		return
	}
	q := r.URL.Query()
	dim := q.Get("majorDimension")
	if dim == "" {
		dim = "ROWS"
	}
	render := q.Get("valueRenderOption")
	if render == "" {
		render = renderFormatted
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.spreadsheetFor(w, r, false)
	if b == nil {
		return
	}
	sh, rg, err := b.resolveRange(r.PathValue("range"))
	if err != nil {
		googleStatusError(w, http.StatusBadRequest, err.Error(), nil)
		return
	}
	// "For output, this range indicates the entire requested range, even
	// though the values will exclude trailing rows and columns"
	// (ValueRange.range).
	writePartial(w, r, valueRange{Range: a1(sh.title, rg), MajorDimension: dim, Values: sh.grid(rg, dim == "COLUMNS", render)})
}

// appendResponse is the AppendValuesResponse resource.
type appendResponse struct {
	SpreadsheetID string        `json:"spreadsheetId"`
	TableRange    string        `json:"tableRange,omitempty"`
	Updates       updateSummary `json:"updates"`
}

type updateSummary struct {
	SpreadsheetID  string      `json:"spreadsheetId"`
	UpdatedRange   string      `json:"updatedRange,omitempty"`
	UpdatedRows    int         `json:"updatedRows,omitempty"`
	UpdatedColumns int         `json:"updatedColumns,omitempty"`
	UpdatedCells   int         `json:"updatedCells,omitempty"`
	UpdatedData    *valueRange `json:"updatedData,omitempty"`
}

func (g *GoogleSheets) valuesAppend(w http.ResponseWriter, r *http.Request) {
	rawRange, isAppend := strings.CutSuffix(r.PathValue("range"), ":append")
	if !isAppend {
		// Only the append custom method is emulated on this path.
		googleStatusError(w, http.StatusNotFound, sheetsNotFound, nil)
		return
	}
	sub, ok := g.authorize(w, r, true)
	if !ok {
		return
	}
	q := r.URL.Query()
	var body valueRange
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 10<<20)).Decode(&body); err != nil {
		googleStatusError(w, http.StatusBadRequest, "Invalid JSON payload received. "+err.Error(), nil)
		return
	}
	g.mu.Lock()
	if !g.chargeWrite(w, sub) {
		g.mu.Unlock()
		return
	}
	b := g.spreadsheetFor(w, r, true)
	if b == nil {
		g.mu.Unlock()
		return
	}
	resp, err := b.appendValues(rawRange, q.Get("valueInputOption"), q.Get("insertDataOption"), body)
	if err != nil {
		g.mu.Unlock()
		googleStatusError(w, http.StatusBadRequest, err.Error(), nil)
		return
	}
	if q.Get("includeValuesInResponse") == "true" && resp.Updates.UpdatedRange != "" {
		render := q.Get("responseValueRenderOption")
		if render == "" {
			render = renderFormatted
		}
		sh, rg, _ := b.resolveRange(resp.Updates.UpdatedRange)
		resp.Updates.UpdatedData = &valueRange{Range: resp.Updates.UpdatedRange, MajorDimension: "ROWS", Values: sh.grid(rg, false, render)}
	}
	h := g.hold
	lost := g.failAfterWrite > 0
	if lost {
		g.failAfterWrite--
	}
	g.mu.Unlock()

	if lost {
		// The rows are written; the answer says otherwise.
		googleStatusError(w, http.StatusServiceUnavailable, "The service is currently unavailable.", nil)
		return
	}
	if h != nil {
		select {
		case h.held <- struct{}{}:
		case <-h.release:
		case <-r.Context().Done():
			return
		}
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
	}
	writePartial(w, r, resp)
}

// appendValues writes the rows of a values.append call; the caller holds g.mu.
//
// "The input range is used to search for existing data and find a "table"
// within that range. Values will be appended to the next row of the
// table, starting with the first column of the table."
// (https://developers.google.com/sheets/api/reference/rest/v4/spreadsheets.values/append).
// The emulator's table starts at the first row of the range with data in
// the range's columns, spans the columns holding data in its rows, and
// runs down, past the range's end if need be, to the last row before a row
// with no data: an empty row ends a table, which is why gaps make appends
// land in surprising places
// (https://github.com/theoephraim/node-google-spreadsheet/issues/355).
// With no data in the range there is no table ("tableRange" is left out:
// "Empty if no table was found.") and the rows go to the range's first
// cell.
func (b *spreadsheet) appendValues(rawRange, input, insert string, body valueRange) (appendResponse, error) {
	switch input {
	case "RAW", "USER_ENTERED":
	case "":
		// https://github.com/googleapis/google-api-dotnet-client/issues/1287
		return appendResponse{}, errors.New("'valueInputOption' is required but not specified")
	default:
		// The form of the front end's enum errors; not checked against a
		// recorded Sheets answer.
		return appendResponse{}, &badRequest400{fmt.Sprintf("Invalid value at 'value_input_option' (type.googleapis.com/google.apps.sheets.v4.ValueInputOption), %q", input)}
	}
	switch insert {
	case "", "OVERWRITE", "INSERT_ROWS":
	default:
		return appendResponse{}, &badRequest400{fmt.Sprintf("Invalid value at 'insert_data_option' (type.googleapis.com/google.apps.sheets.v4.SpreadsheetsValuesAppendRequest.InsertDataOption), %q", insert)}
	}
	sh, rg, err := b.resolveRange(rawRange)
	if err != nil {
		return appendResponse{}, err
	}
	rows := body.Values
	if body.MajorDimension == "COLUMNS" {
		rows = transpose(rows)
	}
	resp := appendResponse{SpreadsheetID: b.id, Updates: updateSummary{SpreadsheetID: b.id}}

	at, col := rg.r0, rg.c0
	for r := rg.r0; r < rg.r1; r++ {
		if !sh.rowHasData(r, rg.c0, rg.c1) {
			continue
		}
		end := r
		for end < sh.rowCount && sh.rowHasData(end, rg.c0, rg.c1) {
			end++
		}
		first, last := rg.c1, rg.c0
		for tr := r; tr < end; tr++ {
			for c := rg.c0; c < rg.c1; c++ {
				if !sh.get(tr, c).empty() {
					first, last = min(first, c), max(last, c)
				}
			}
		}
		table := gridRange{r0: r, c0: first, r1: end, c1: last + 1}
		resp.TableRange = a1(sh.title, table)
		at, col = end, first
		break
	}
	width, cells := 0, 0
	for _, row := range rows {
		width = max(width, len(row))
	}
	if len(rows) == 0 || width == 0 {
		return resp, nil
	}
	if insert == "INSERT_ROWS" {
		// "Rows are inserted for the new data." (InsertDataOption)
		sh.insertRows(at, len(rows))
	}
	for i, row := range rows {
		for j, v := range row {
			if v == nil {
				continue // "Null values will be skipped." (ValueRange.values)
			}
			cell := rawValue(v)
			if s, isString := v.(string); isString && input == "USER_ENTERED" {
				cell = userEntered(s)
			}
			sh.set(at+i, col+j, cell)
			cells++
		}
	}
	written := gridRange{r0: at, c0: col, r1: at + len(rows), c1: col + width}
	resp.Updates.UpdatedRange = a1(sh.title, written)
	resp.Updates.UpdatedRows = len(rows)
	resp.Updates.UpdatedColumns = width
	resp.Updates.UpdatedCells = cells
	return resp, nil
}

func transpose(in [][]any) [][]any {
	var out [][]any
	for i, col := range in {
		for j, v := range col {
			for len(out) <= j {
				out = append(out, nil)
			}
			for len(out[j]) < i {
				out[j] = append(out[j], nil)
			}
			out[j] = append(out[j], v)
		}
	}
	return out
}

// writePartial answers v, cut down to the request's "fields" mask (a
// partial response): "multiple different fields are comma-separated and
// subfields are dot-separated. Field names can be specified in camelCase
// or separated_by_underscores. For convenience, multiple subfields from
// the same type can be listed within parentheses." ("Use field masks",
// https://developers.google.com/sheets/api/guides/field-masks); "/" also
// separates subfields and "*" selects everything, as in Google's older
// partial-response syntax
// (https://developers.google.com/webmaster-tools/v1/how-tos/performance).
// Inside lists the mask applies to every element.
func writePartial(w http.ResponseWriter, r *http.Request, v any) {
	fields := r.URL.Query().Get("fields")
	if fields == "" {
		writeJSON(w, http.StatusOK, v)
		return
	}
	mask, err := parseFieldMask(fields)
	if err != nil {
		googleStatusError(w, http.StatusBadRequest, "Invalid field selection "+fields, nil)
		return
	}
	b, _ := json.Marshal(v)
	var generic any
	_ = json.Unmarshal(b, &generic)
	writeJSON(w, http.StatusOK, mask.apply(generic))
}

// fieldMask is a parsed fields parameter: the selected names, each with
// its own sub-selection (nil: all of it).
type fieldMask map[string]fieldMask

func parseFieldMask(s string) (fieldMask, error) {
	p := &maskParser{s: s}
	m := fieldMask{}
	if err := p.list(m); err != nil {
		return nil, err
	}
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected %q at %d", p.s[p.i], p.i)
	}
	return m, nil
}

type maskParser struct {
	s string
	i int
}

// list parses "item,item,…" into m.
func (p *maskParser) list(m fieldMask) error {
	for {
		if err := p.item(m); err != nil {
			return err
		}
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		return nil
	}
}

// item parses "a.b/c(sub)" into m.
func (p *maskParser) item(m fieldMask) error {
	var path []string
	for {
		start := p.i
		for p.i < len(p.s) && !strings.ContainsRune(",()./", rune(p.s[p.i])) {
			p.i++
		}
		name := strings.TrimSpace(p.s[start:p.i])
		if name == "" {
			return fmt.Errorf("empty field name at %d", start)
		}
		path = append(path, camelCase(name))
		if p.i < len(p.s) && (p.s[p.i] == '.' || p.s[p.i] == '/') {
			p.i++
			continue
		}
		break
	}
	var sub fieldMask
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		sub = fieldMask{}
		if err := p.list(sub); err != nil {
			return err
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return errors.New("unclosed parenthesis")
		}
		p.i++
	}
	m.add(path, sub)
	return nil
}

// add selects path in m, with sub under its last name.
func (m fieldMask) add(path []string, sub fieldMask) {
	if len(path) == 0 {
		return
	}
	name, rest := path[0], path[1:]
	node, ok := m[name]
	if ok && node == nil {
		return // already selected whole
	}
	if len(rest) == 0 && sub == nil {
		m[name] = nil
		return
	}
	if node == nil {
		node = fieldMask{}
	}
	if len(rest) > 0 {
		node.add(rest, sub)
	} else {
		for k, v := range sub {
			node.add([]string{k}, v)
		}
	}
	m[name] = node
}

func (m fieldMask) apply(v any) any {
	if m == nil {
		return v
	}
	if _, all := m["*"]; all && len(m) == 1 && m["*"] == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range m {
			if k == "*" {
				for kk, vv := range x {
					if _, named := out[kk]; !named {
						out[kk] = sub.apply(vv)
					}
				}
				continue
			}
			if vv, ok := x[k]; ok {
				out[k] = sub.apply(vv)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = m.apply(e)
		}
		return out
	default:
		return v
	}
}

func camelCase(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// registerAdmin adds the Go controls over HTTP, for the demo:
//
//	POST /_sandbox/sheets/spreadsheets                               {"id","timeZone","sheets":[{"id","title","rows"}]}
//	GET  /_sandbox/sheets/spreadsheets/{id}/sheets/{title}/rows      → [["…"]]
//	PUT  /_sandbox/sheets/spreadsheets/{id}/sheets/{title}/rows/{n}  ["…"]
//	PUT  /_sandbox/sheets/spreadsheets/{id}/access                   {"role"}
//	PUT  /_sandbox/sheets/writeQuota                                 {"max"}
//	PUT  /_sandbox/sheets/spreadsheets/{id}/sheetIds/{sheetId}/title {"title"}
func (g *GoogleSheets) registerAdmin(s *Server) {
	const p = "/_sandbox/sheets"
	s.HandleAdmin("POST "+p+"/spreadsheets", func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			ID       string
			TimeZone string
			Sheets   []SheetSpec
		}
		if !adminDecode(w, r, &b) {
			return
		}
		if b.ID == "" {
			adminError(w, http.StatusBadRequest, errors.New("id is required"))
			return
		}
		g.AddSpreadsheet(b.ID, b.TimeZone, b.Sheets...)
		w.WriteHeader(http.StatusNoContent)
	})
	s.HandleAdmin("GET "+p+"/spreadsheets/{id}/sheets/{title}/rows", func(w http.ResponseWriter, r *http.Request) {
		rows := g.Rows(r.PathValue("id"), r.PathValue("title"))
		if rows == nil {
			rows = [][]string{}
		}
		writeJSON(w, http.StatusOK, rows)
	})
	s.HandleAdmin("PUT "+p+"/spreadsheets/{id}/sheets/{title}/rows/{n}", func(w http.ResponseWriter, r *http.Request) {
		var values []string
		if !adminDecode(w, r, &values) {
			return
		}
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil {
			adminError(w, http.StatusBadRequest, err)
			return
		}
		adminDone(w, g.SetRow(r.PathValue("id"), r.PathValue("title"), n, values...))
	})
	s.HandleAdmin("PUT "+p+"/spreadsheets/{id}/access", func(w http.ResponseWriter, r *http.Request) {
		var b struct{ Role string }
		if !adminDecode(w, r, &b) {
			return
		}
		g.SetAccess(r.PathValue("id"), b.Role)
		w.WriteHeader(http.StatusNoContent)
	})
	s.HandleAdmin("PUT "+p+"/spreadsheets/{id}/sheetIds/{sheetId}/title", func(w http.ResponseWriter, r *http.Request) {
		var b struct{ Title string }
		if !adminDecode(w, r, &b) {
			return
		}
		id, err := strconv.ParseInt(r.PathValue("sheetId"), 10, 64)
		if err != nil || b.Title == "" {
			adminError(w, http.StatusBadRequest, errors.New("a numeric sheetId and a title are required"))
			return
		}
		adminDone(w, g.RenameSheet(r.PathValue("id"), id, b.Title))
	})
	s.HandleAdmin("PUT "+p+"/writeQuota", func(w http.ResponseWriter, r *http.Request) {
		var b struct{ Max int }
		if !adminDecode(w, r, &b) {
			return
		}
		g.SetWriteQuota(b.Max)
		w.WriteHeader(http.StatusNoContent)
	})
}
