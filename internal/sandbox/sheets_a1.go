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
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// A1 notation of the Sheets emulator: the ranges requests name and the
// ones it answers.

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
