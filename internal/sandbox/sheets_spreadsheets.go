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

import "net/http"

// spreadsheets.get of the Sheets emulator.

// get serves spreadsheets.get: the spreadsheet's properties and its
// sheets' (partial responses apply).
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
