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
	"net/http"
	"strconv"
)

// The Sheets emulator's controls over HTTP.

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
	s.HandleAdmin("POST "+p+"/spreadsheets", adminBody(func(_ *http.Request, b struct {
		ID       string
		TimeZone string
		Sheets   []SheetSpec
	}) error {
		if b.ID == "" {
			return errAdminNoID
		}
		g.AddSpreadsheet(b.ID, b.TimeZone, b.Sheets...)
		return nil
	}))
	s.HandleAdmin("GET "+p+"/spreadsheets/{id}/sheets/{title}/rows", adminList(func(r *http.Request) [][]string {
		return g.Rows(r.PathValue("id"), r.PathValue("title"))
	}))
	s.HandleAdmin("PUT "+p+"/spreadsheets/{id}/sheets/{title}/rows/{n}", adminBody(func(r *http.Request, values []string) error {
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil {
			return adminBadRequest(err)
		}
		return g.SetRow(r.PathValue("id"), r.PathValue("title"), n, values...)
	}))
	s.HandleAdmin("PUT "+p+"/spreadsheets/{id}/access", adminBody(func(r *http.Request, b struct{ Role string }) error {
		g.SetAccess(r.PathValue("id"), b.Role)
		return nil
	}))
	s.HandleAdmin("PUT "+p+"/spreadsheets/{id}/sheetIds/{sheetId}/title", adminBody(func(r *http.Request, b struct{ Title string }) error {
		id, err := strconv.ParseInt(r.PathValue("sheetId"), 10, 64)
		if err != nil || b.Title == "" {
			return adminBadRequest(errors.New("a numeric sheetId and a title are required"))
		}
		return g.RenameSheet(r.PathValue("id"), id, b.Title)
	}))
	s.HandleAdmin("PUT "+p+"/writeQuota", adminBody(func(_ *http.Request, b struct{ Max int }) error {
		g.SetWriteQuota(b.Max)
		return nil
	}))
}
