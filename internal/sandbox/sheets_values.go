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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// values.get and values.append of the Sheets emulator.

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
	var body valueRange
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 10<<20)).Decode(&body); err != nil {
		googleStatusError(w, http.StatusBadRequest, "Invalid JSON payload received. "+err.Error(), nil)
		return
	}
	out, ok := g.applyAppend(w, r, sub, rawRange, body)
	if !ok {
		return
	}
	if out.lost {
		// The rows are written; the answer says otherwise.
		googleStatusError(w, http.StatusServiceUnavailable, "The service is currently unavailable.", nil)
		return
	}
	if out.hold != nil && !out.hold.wait(r.Context()) {
		return
	}
	writePartial(w, r, out.resp)
}

// appendOutcome is what a values.append did: its answer, whether the
// answer is lost (FailAppendsAfterWrite), and the hold it waits on before
// answering (HoldAppends).
type appendOutcome struct {
	resp appendResponse
	lost bool
	hold *appendHold
}

// applyAppend charges the user's write quota, writes the rows and makes
// the answer; it answers the error and returns false when the append
// fails.
func (g *GoogleSheets) applyAppend(w http.ResponseWriter, r *http.Request, sub, rawRange string, body valueRange) (appendOutcome, bool) {
	q := r.URL.Query()
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.chargeWrite(w, sub) {
		return appendOutcome{}, false
	}
	b := g.spreadsheetFor(w, r, true)
	if b == nil {
		return appendOutcome{}, false
	}
	resp, err := b.appendValues(rawRange, q.Get("valueInputOption"), q.Get("insertDataOption"), body)
	if err != nil {
		googleStatusError(w, http.StatusBadRequest, err.Error(), nil)
		return appendOutcome{}, false
	}
	if q.Get("includeValuesInResponse") == "true" && resp.Updates.UpdatedRange != "" {
		resp.Updates.UpdatedData = b.updatedData(resp.Updates.UpdatedRange, q.Get("responseValueRenderOption"))
	}
	out := appendOutcome{resp: resp, hold: g.hold, lost: g.failAfterWrite > 0}
	if out.lost {
		g.failAfterWrite--
	}
	return out, true
}

// updatedData is the written range's values (includeValuesInResponse),
// rendered as asked (FORMATTED_VALUE by default).
func (b *spreadsheet) updatedData(updatedRange, render string) *valueRange {
	if render == "" {
		render = renderFormatted
	}
	sh, rg, _ := b.resolveRange(updatedRange)
	return &valueRange{Range: updatedRange, MajorDimension: "ROWS", Values: sh.grid(rg, false, render)}
}

// wait tells the test that an append is held, then keeps its answer back
// until the release; false when the request's context ends first.
func (h *appendHold) wait(ctx context.Context) bool {
	select {
	case h.held <- struct{}{}:
	case <-h.release:
	case <-ctx.Done():
		return false
	}
	select {
	case <-h.release:
		return true
	case <-ctx.Done():
		return false
	}
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
	if err := checkAppendOptions(input, insert); err != nil {
		return appendResponse{}, err
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
	if table, found := sh.findTable(rg); found {
		resp.TableRange = a1(sh.title, table)
		at, col = table.r1, table.c0
	}
	width := 0
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
	cells := sh.writeRows(at, col, rows, input == "USER_ENTERED")
	written := gridRange{r0: at, c0: col, r1: at + len(rows), c1: col + width}
	resp.Updates.UpdatedRange = a1(sh.title, written)
	resp.Updates.UpdatedRows = len(rows)
	resp.Updates.UpdatedColumns = width
	resp.Updates.UpdatedCells = cells
	return resp, nil
}

// checkAppendOptions checks values.append's valueInputOption (required)
// and insertDataOption.
func checkAppendOptions(input, insert string) error {
	switch input {
	case "RAW", "USER_ENTERED":
	case "":
		// https://github.com/googleapis/google-api-dotnet-client/issues/1287
		return errors.New("'valueInputOption' is required but not specified")
	default:
		// The form of the front end's enum errors; not checked against a
		// recorded Sheets answer.
		return &badRequest400{fmt.Sprintf("Invalid value at 'value_input_option' (type.googleapis.com/google.apps.sheets.v4.ValueInputOption), %q", input)}
	}
	switch insert {
	case "", "OVERWRITE", "INSERT_ROWS":
		return nil
	default:
		return &badRequest400{fmt.Sprintf("Invalid value at 'insert_data_option' (type.googleapis.com/google.apps.sheets.v4.SpreadsheetsValuesAppendRequest.InsertDataOption), %q", insert)}
	}
}

// findTable finds the table an append goes under (see appendValues): its
// rows and columns within rg's columns; false when rg holds no data.
func (sh *sheet) findTable(rg gridRange) (gridRange, bool) {
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
		return gridRange{r0: r, c0: first, r1: end, c1: last + 1}, true
	}
	return gridRange{}, false
}

// writeRows stores rows with their first cell at (at, col) and returns how
// many cells it wrote: values as given (RAW), or with parse, strings read
// as a person typing them (USER_ENTERED).
func (sh *sheet) writeRows(at, col int, rows [][]any, parse bool) int {
	cells := 0
	for i, row := range rows {
		for j, v := range row {
			if v == nil {
				continue // "Null values will be skipped." (ValueRange.values)
			}
			cell := rawValue(v)
			if s, isString := v.(string); isString && parse {
				cell = userEntered(s)
			}
			sh.set(at+i, col+j, cell)
			cells++
		}
	}
	return cells
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
