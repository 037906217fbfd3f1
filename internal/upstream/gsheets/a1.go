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

package gsheets

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A1 notation, as the Sheets API reads and writes it
// (https://developers.google.com/sheets/api/guides/concepts#cell, "A1
// notation"): an optional sheet title and "!", then a cell ("A5"), a
// range of cells ("A5:I7"), whole columns ("F:F"), whole rows ("3:3") or a
// range open at the bottom ("A5:A"). "Single quotes are required for sheet
// names with spaces, special characters, or an alphanumeric combination"
// ('My Custom Sheet'!A:A). Inside the quotes an apostrophe is doubled:
// that is how Google writes the ranges it answers ("'Jon''s
// Data'!A1:Z1000" for the overview's own "Jon's Data",
// https://github.com/googleapis/google-api-python-client/issues/2702),
// and how it reads them (https://github.com/robin900/gspread-dataframe/pull/58).

// maxColumn is the last column a sheet can have, ZZZ: 18,278 columns (a
// third-party summary of Google's limits,
// https://thodigitals.com/en/limitations-of-google-sheets, "Column Limit:
// 18,278 Columns ... up to ZZZ"; Google's own pages state only the 10
// million cell limit).
const maxColumn = 26 + 26*26 + 26*26*26

// maxRow bounds a row number so that arithmetic on it cannot overflow;
// Google's limit (10 million cells per spreadsheet) is far below it.
const maxRow = 1<<31 - 1

// QuoteTitle quotes a sheet title for A1 notation. It always quotes: a
// bare title that looks like a cell would be read as one ("CRM26" is
// column CRM, row 26, and Google answers 400 "exceeds grid limits":
// https://github.com/robin900/gspread-dataframe/issues/54), and one that
// names a named range would be read as the range (concepts#cell).
func QuoteTitle(title string) string {
	return "'" + strings.ReplaceAll(title, "'", "''") + "'"
}

// Range is the A1 range a1 (such as "A1", "F:F" or "3:3") of the sheet
// titled sheetTitle.
func Range(sheetTitle, a1 string) string {
	return QuoteTitle(sheetTitle) + "!" + a1
}

// Cell is one end of a range, 1-based; a zero Col or Row is open: the
// whole row (Col 0) or the whole column (Row 0), or a range open at the
// bottom ("A5:A" ends at Cell{Col: 1}).
type Cell struct{ Col, Row int }

// String is the cell in A1 notation: "B7", "B" (Row 0), "7" (Col 0).
func (c Cell) String() string {
	s := ""
	if c.Col > 0 {
		s = ColumnLetters(c.Col)
	}
	if c.Row > 0 {
		s += strconv.Itoa(c.Row)
	}
	return s
}

// ErrBadRange is wrapped by every ParseRange and ColumnIndex failure.
var ErrBadRange = errors.New("not an A1 range")

// ParseRange reads a range in the forms Google answers in updatedRange and
// ValueRange.range: Sheet1!A5:I7, 'It”s'!A5:J5, 'x'!A5, a title left
// unquoted when it needs no quotes, a bare range with no title (title
// ""), and a quoted title alone (the whole sheet: from and to zero).
// A single cell is returned as from == to.
func ParseRange(s string) (title string, from, to Cell, err error) {
	title, rest, whole, err := splitTitle(s)
	if err == nil && !whole {
		from, to, err = parseCells(rest)
	}
	if err != nil {
		return "", Cell{}, Cell{}, fmt.Errorf("%w: %q: %w", ErrBadRange, s, err)
	}
	return title, from, to, nil
}

// splitTitle separates a range's sheet title from its cells: a quoted
// title and "!", an unquoted title and "!", or no title at all (title "",
// rest s). whole reports a quoted title alone, the whole sheet.
func splitTitle(s string) (title, rest string, whole bool, err error) {
	switch {
	case strings.HasPrefix(s, "'"):
		title, rest, err = unquoteTitle(s)
		switch {
		case err != nil:
			return "", "", false, err
		case title == "":
			return "", "", false, errors.New("empty sheet title")
		case rest == "":
			return title, "", true, nil
		case rest[0] != '!':
			return "", "", false, errors.New("want ! after the quoted title")
		}
		return title, rest[1:], false, nil
	case strings.Contains(s, "!"):
		i := strings.IndexByte(s, '!')
		title, rest = s[:i], s[i+1:]
		if title == "" || strings.ContainsAny(title, "'!") {
			return "", "", false, errors.New("bad unquoted sheet title")
		}
		return title, rest, false, nil
	}
	return "", s, false, nil
}

// unquoteTitle reads the quoted title s starts with, a doubled apostrophe
// inside standing for one; rest is what follows the closing quote.
func unquoteTitle(s string) (title, rest string, err error) {
	var b strings.Builder
	for i := 1; i < len(s); {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i += 2
			continue
		}
		return b.String(), s[i+1:], nil
	}
	return "", "", errors.New("unterminated quoted title")
}

// parseCells reads the cells of a range: one cell ("A5", returned as from
// == to) or two separated by a colon, where an open start ("5:", "A:")
// needs an open end.
func parseCells(rest string) (from, to Cell, err error) {
	a, b, hasColon := strings.Cut(rest, ":")
	if from, err = parseCell(a); err != nil {
		return Cell{}, Cell{}, err
	}
	if !hasColon {
		if from.Col == 0 || from.Row == 0 {
			// "A" or "5" alone is a name, not a range.
			return Cell{}, Cell{}, errors.New("a single cell needs a column and a row")
		}
		return from, from, nil
	}
	if to, err = parseCell(b); err != nil {
		return Cell{}, Cell{}, err
	}
	if from.Col == 0 && to.Col != 0 || from.Row == 0 && to.Row != 0 {
		// "5:A7" and "A:B7" mix whole rows or columns with cells.
		return Cell{}, Cell{}, errors.New("an open start needs an open end")
	}
	return from, to, nil
}

// parseCell reads "B7", "B" or "7".
func parseCell(s string) (Cell, error) {
	i := 0
	for i < len(s) && s[i] >= 'A' && s[i] <= 'Z' {
		i++
	}
	letters, digits := s[:i], s[i:]
	if letters == "" && digits == "" {
		return Cell{}, errors.New("empty cell reference")
	}
	var c Cell
	if letters != "" {
		col, err := ColumnIndex(letters)
		if err != nil {
			return Cell{}, err
		}
		c.Col = col
	}
	if digits != "" {
		if digits[0] < '1' || digits[0] > '9' || len(digits) > 10 {
			return Cell{}, fmt.Errorf("bad row %q", digits)
		}
		row, err := strconv.Atoi(digits)
		if err != nil || row > maxRow {
			return Cell{}, fmt.Errorf("bad row %q", digits)
		}
		c.Row = row
	}
	return c, nil
}

// formatRange renders what ParseRange read; ParseRange reads it back to
// the same values.
func formatRange(title string, from, to Cell) string {
	a1 := from.String()
	if to != from || from.Col == 0 || from.Row == 0 {
		a1 += ":" + to.String()
	}
	switch {
	case title == "":
		return a1
	case from == Cell{} && to == Cell{}:
		return QuoteTitle(title)
	default:
		return Range(title, a1)
	}
}

// ColumnLetters is column n (1-based) in letters: 1 → A, 26 → Z, 27 → AA,
// 18278 → ZZZ. It is "" outside 1..18278, which no sheet has.
func ColumnLetters(n int) string {
	if n < 1 || n > maxColumn {
		return ""
	}
	var b []byte
	for n > 0 {
		n--
		b = append(b, byte('A'+n%26))
		n /= 26
	}
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// ColumnIndex is the inverse of ColumnLetters for A..ZZZ (upper case, as
// Google writes them).
func ColumnIndex(letters string) (int, error) {
	if letters == "" || len(letters) > 3 {
		return 0, fmt.Errorf("%w: column %q is not A..ZZZ", ErrBadRange, letters)
	}
	n := 0
	for i := 0; i < len(letters); i++ {
		c := letters[i]
		if c < 'A' || c > 'Z' {
			return 0, fmt.Errorf("%w: column %q is not A..ZZZ", ErrBadRange, letters)
		}
		n = n*26 + int(c-'A') + 1
	}
	return n, nil
}

// sheetsEpoch is day 0 of the spreadsheet serial number: "The whole number
// portion of the value (left of the decimal) counts the days since
// December 30th 1899. The fractional portion (right of the decimal)
// counts the time as a fraction of the day"
// (https://developers.google.com/sheets/api/reference/rest/v4/DateTimeRenderOption
// and https://developers.google.com/sheets/api/guides/formats, "About
// date and time values").
var sheetsEpoch = time.Date(1899, time.December, 30, 0, 0, 0, 0, time.UTC)

// Serial is t as the spreadsheet date-time serial number of the wall clock
// in loc (the spreadsheet's time zone, which Sheets has no other way to
// know): whole days since 1899-12-30 plus the time of day as a fraction.
// Sheets shows it as a date-time once the column has a date-time number
// format. The calendar is the proleptic Gregorian one, so 1900 is not a
// leap year ("This correctly treats the year 1900 as not a leap year").
func Serial(t time.Time, loc *time.Location) float64 {
	if loc == nil {
		loc = time.UTC
	}
	w := t.In(loc)
	day := time.Date(w.Year(), w.Month(), w.Day(), 0, 0, 0, 0, time.UTC)
	// Unix seconds, not Sub: a time.Duration overflows after 292 years.
	days := (day.Unix() - sheetsEpoch.Unix()) / 86400
	secs := w.Hour()*3600 + w.Minute()*60 + w.Second()
	return float64(days) + (float64(secs)+float64(w.Nanosecond())/1e9)/86400
}
