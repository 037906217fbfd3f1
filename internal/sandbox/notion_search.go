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
	"net/http"
	"sort"
	"strings"
	"time"
)

// Search of the Notion API emulator.

// search pages through the workspace's objects of the filtered kind, in
// the order asked (most recently edited first by default), and filters by
// the query after paging: a page holds the matches among page_size
// candidates, so it may hold fewer than page_size results, or none, while
// has_more is true. Notion documents exactly that: "The response may
// contain fewer than this number of results"
// (https://developers.notion.com/reference/pagination), and search "is
// not guaranteed to return everything" in one go
// (https://developers.notion.com/reference/search-optimizations-and-limitations).
// A client that stops at the first page misses what lies beyond it.
func (n *Notion) search(w http.ResponseWriter, r *http.Request, ws string) {
	var req searchRequest
	if r.ContentLength != 0 && !decodeBody(w, r, &req) {
		return
	}
	if !req.valid(w) {
		return
	}
	all := n.state().searchCandidates(ws, req)
	start, ok := searchStart(w, all, req.StartCursor)
	if !ok {
		return
	}
	size := req.PageSize
	if size == 0 {
		size = 100
	}
	end := min(start+size, len(all))
	q := strings.ToLower(req.Query)
	results := []any{}
	for _, c := range all[start:end] {
		if strings.Contains(strings.ToLower(c.title), q) {
			results = append(results, c.obj())
		}
	}
	var next any
	if end < len(all) {
		next = all[end].id
	}
	writeNotionList(w, results, next, end < len(all))
}

// searchRequest is the body of POST /v1/search.
type searchRequest struct {
	Query  string `json:"query"`
	Filter *struct {
		Value    string `json:"value"`
		Property string `json:"property"`
	} `json:"filter"`
	Sort *struct {
		Direction string `json:"direction"`
		Timestamp string `json:"timestamp"`
	} `json:"sort"`
	StartCursor string `json:"start_cursor"`
	PageSize    int    `json:"page_size"`
}

// valid checks the filter and page size; it answers 400 validation_error
// and returns false when one is wrong.
func (req searchRequest) valid(w http.ResponseWriter) bool {
	if req.Filter != nil && (req.Filter.Property != "object" || (req.Filter.Value != "page" && req.Filter.Value != "database")) {
		notionError(w, http.StatusBadRequest, "validation_error", "body failed validation: body.filter.value should be `\"page\"` or `\"database\"`, instead was `"+req.Filter.Value+"`.")
		return false
	}
	if req.PageSize < 0 || req.PageSize > 100 {
		notionError(w, http.StatusBadRequest, "validation_error", fmt.Sprintf("body failed validation: body.page_size should be ≤ `100`, instead was `%d`.", req.PageSize))
		return false
	}
	return true
}

// wants reports whether the filter lets objects of kind ("page",
// "database") through.
func (req searchRequest) wants(kind string) bool {
	return req.Filter == nil || req.Filter.Value == kind
}

// searchCandidate is an object a search may answer, before the query
// filters it.
type searchCandidate struct {
	id, title string
	edited    time.Time
	obj       func() map[string]any
}

// searchCandidates lists the workspace's objects of the filtered kind in
// the order asked: by last edit, newest first unless ascending.
func (s *notionState) searchCandidates(ws string, req searchRequest) []searchCandidate {
	var all []searchCandidate
	if req.wants("database") {
		for _, db := range s.databases {
			if db.workspace == ws {
				all = append(all, searchCandidate{db.id, db.title, db.edited, db.object})
			}
		}
	}
	if req.wants("page") {
		for _, p := range s.pages {
			title := p.title
			if p.parentDB != "" {
				title, _ = valueToPlain(p.values[titleProp(s.databases[p.parentDB])]).(string)
			}
			if p.workspace == ws {
				all = append(all, searchCandidate{p.id, title, p.edited, func() map[string]any { return p.object(s) }})
			}
		}
	}
	asc := req.Sort != nil && req.Sort.Direction == "ascending"
	sort.Slice(all, func(i, j int) bool {
		if !all[i].edited.Equal(all[j].edited) {
			return all[i].edited.After(all[j].edited) != asc
		}
		return all[i].id < all[j].id
	})
	return all
}

// searchStart is where the page of start_cursor begins; a cursor that is
// none of the candidates' ids is a 400.
func searchStart(w http.ResponseWriter, all []searchCandidate, cursor string) (int, bool) {
	if cursor == "" {
		return 0, true
	}
	start := -1
	for i, c := range all {
		if c.id == normID(cursor) {
			start = i
		}
	}
	if start < 0 {
		notionError(w, http.StatusBadRequest, "validation_error", "body failed validation: body.start_cursor should be a cursor this search returned, instead was `"+strings.ReplaceAll(cursor, "`", "")+"`.")
		return 0, false
	}
	return start, true
}
