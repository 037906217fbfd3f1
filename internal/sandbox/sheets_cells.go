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
)

// Cells of the Sheets emulator: how they are stored, entered and rendered.

// sheetByTitle is the spreadsheet's sheet titled title, or nil.
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
