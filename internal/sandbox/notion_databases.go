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
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Databases of the Notion API emulator: retrieve, create, update and
// query.

// object is the database as the API answers it.
func (db *notionDatabase) object() map[string]any {
	props := map[string]any{}
	for name, p := range db.props {
		cfg := map[string]any{}
		if p.Type == "number" {
			cfg = map[string]any{"format": "number"}
		}
		props[name] = map[string]any{"id": notionPropertyID(name, p.Type), "name": name, "type": p.Type, p.Type: cfg}
	}
	return map[string]any{
		"object": "database", "id": db.id, "created_time": db.created.Format(time.RFC3339Nano), "last_edited_time": db.edited.Format(time.RFC3339Nano),
		"title": []any{richText(db.title)}, "description": []any{}, "icon": nil, "cover": nil,
		"properties": props, "parent": map[string]any{"type": "page_id", "page_id": db.parentPage},
		"url": "https://www.notion.so/" + strings.ReplaceAll(db.id, "-", ""), "public_url": nil,
		"archived": false, "in_trash": false, "is_inline": false,
		"created_by": notionUser(), "last_edited_by": notionUser(),
	}
}

func titleProp(db *notionDatabase) string {
	for name, p := range db.props {
		if p.Type == "title" {
			return name
		}
	}
	return ""
}

func (n *Notion) getDatabase(w http.ResponseWriter, r *http.Request, ws string) {
	if db, ok := n.databaseAt(w, r, ws); ok {
		writeJSON(w, http.StatusOK, db.object())
	}
}

// schemaFrom reads property configurations of a create or update request.
func schemaFrom(raw map[string]json.RawMessage) (map[string]NotionProperty, string) {
	out := map[string]NotionProperty{}
	for name, cfg := range raw {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(cfg, &m); err != nil {
			return nil, name
		}
		typ := ""
		for _, t := range []string{"title", "rich_text", "url", "number"} {
			if _, ok := m[t]; ok {
				typ = t
			}
		}
		if t, ok := m["type"]; ok {
			_ = json.Unmarshal(t, &typ)
		}
		if typ == "" {
			return nil, name
		}
		out[name] = NotionProperty{Type: typ}
	}
	return out, ""
}

func (n *Notion) createDatabase(w http.ResponseWriter, r *http.Request, ws string) {
	var req struct {
		Parent struct {
			Type   string `json:"type"`
			PageID string `json:"page_id"`
		} `json:"parent"`
		Title []struct {
			Text struct {
				Content string `json:"content"`
			} `json:"text"`
		} `json:"title"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if !uuidish.MatchString(req.Parent.PageID) {
		notionError(w, http.StatusBadRequest, "validation_error", "body failed validation: body.parent.page_id should be a valid uuid, instead was `"+req.Parent.PageID+"`.")
		return
	}
	s := n.state()
	parent := s.pages[normID(req.Parent.PageID)]
	if parent == nil || parent.workspace != ws || parent.parentDB != "" {
		notFound(w, "page", normID(req.Parent.PageID))
		return
	}
	props, bad := schemaFrom(req.Properties)
	if bad != "" {
		notionError(w, http.StatusBadRequest, "validation_error", "body failed validation: body.properties."+bad+" should be a property configuration.")
		return
	}
	titles := 0
	for _, p := range props {
		if p.Type == "title" {
			titles++
		}
	}
	if titles != 1 {
		notionError(w, http.StatusBadRequest, "validation_error", "Title is not provided")
		return
	}
	var title strings.Builder
	for _, t := range req.Title {
		title.WriteString(t.Text.Content)
	}
	id := newNotionID()
	t := s.tick()
	db := &notionDatabase{id: id, workspace: ws, parentPage: parent.id, title: title.String(), props: props, created: t, edited: t}
	s.databases[id] = db
	writeJSON(w, http.StatusOK, db.object())
}

func (n *Notion) updateDatabase(w http.ResponseWriter, r *http.Request, ws string) {
	db, ok := n.databaseAt(w, r, ws)
	if !ok {
		return
	}
	s := n.state()
	var req struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	props, bad := schemaFrom(req.Properties)
	if bad != "" {
		notionError(w, http.StatusBadRequest, "validation_error", "body failed validation: body.properties."+bad+" should be a property configuration.")
		return
	}
	for name, p := range props {
		if p.Type == "title" && titleProp(db) != "" && titleProp(db) != name {
			notionError(w, http.StatusBadRequest, "validation_error", "Cannot create new title property.")
			return
		}
		db.props[name] = p
	}
	db.edited = s.tick()
	writeJSON(w, http.StatusOK, db.object())
}

// matches evaluates the filters the operator uses: compound and/or, and
// is_empty / is_not_empty on title, rich_text, url and number properties
// (under their type's key, or rich_text for the text-like ones).
func matches(f map[string]any, p *notionPage, db *notionDatabase) (bool, error) {
	if f == nil {
		return true, nil
	}
	for _, op := range []string{"and", "or"} {
		if list, ok := f[op].([]any); ok {
			for _, sub := range list {
				m, _ := sub.(map[string]any)
				ok, err := matches(m, p, db)
				if err != nil {
					return false, err
				}
				if op == "and" && !ok {
					return false, nil
				}
				if op == "or" && ok {
					return true, nil
				}
			}
			return op == "and", nil
		}
	}
	name, _ := f["property"].(string)
	prop, ok := db.props[name]
	if !ok {
		return false, fmt.Errorf("Could not find property with name or id: %s", name) //nolint:staticcheck // Notion's own wording
	}
	var cond map[string]any
	for _, key := range []string{prop.Type, "rich_text"} {
		if c, ok := f[key].(map[string]any); ok {
			cond = c
		}
	}
	if cond == nil {
		return false, fmt.Errorf("body failed validation: body.filter.%s should be defined", prop.Type)
	}
	empty := isEmptyValue(p.values[name])
	if v, ok := cond["is_empty"].(bool); ok && v {
		return empty, nil
	}
	if v, ok := cond["is_not_empty"].(bool); ok && v {
		return !empty, nil
	}
	return false, fmt.Errorf("the sandbox supports only is_empty and is_not_empty filters")
}

func isEmptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return valueToPlain(x) == ""
	}
	return false
}

func (n *Notion) queryDatabase(w http.ResponseWriter, r *http.Request, ws string) {
	db, ok := n.databaseAt(w, r, ws)
	if !ok {
		return
	}
	s, id := n.state(), db.id
	var req struct {
		Filter      map[string]any `json:"filter"`
		StartCursor string         `json:"start_cursor"`
		PageSize    int            `json:"page_size"`
	}
	if r.ContentLength != 0 && !decodeBody(w, r, &req) {
		return
	}
	var rows []*notionPage
	for _, p := range s.pages {
		if p.parentDB != id {
			continue
		}
		ok, err := matches(req.Filter, p, db)
		if err != nil {
			notionError(w, http.StatusBadRequest, "validation_error", err.Error())
			return
		}
		if ok {
			rows = append(rows, p)
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].created.After(rows[j].created) || rows[i].created.Equal(rows[j].created) && rows[i].id < rows[j].id
	})
	start := 0
	if req.StartCursor != "" {
		start = len(rows)
		for i, p := range rows {
			if p.id == normID(req.StartCursor) {
				start = i
			}
		}
	}
	size := req.PageSize
	if size <= 0 || size > 100 {
		size = 100
	}
	end := min(start+size, len(rows))
	results := []any{}
	for _, p := range rows[start:end] {
		results = append(results, p.object(s))
	}
	var next any
	if end < len(rows) {
		next = rows[end].id
	}
	writeNotionList(w, results, next, end < len(rows))
}

// RenameDatabase is a person renaming a database in Notion: its title
// changes, and so does its last edit. Its id, its pages and every
// integration's access stay (a rename is not a new database).
func (n *Notion) RenameDatabase(id, title string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.state()
	if db := s.databases[normID(id)]; db != nil {
		db.title, db.edited = title, s.tick()
	}
}
