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
	"strings"
	"time"
	"unicode/utf16"
)

// Pages of the Notion API emulator: retrieve and update.

// object is the page as the API answers it: a workspace page with its
// title, or a database page with every property of its database.
func (p *notionPage) object(s *notionState) map[string]any {
	obj := map[string]any{
		"object": "page", "id": p.id, "created_time": p.created.Format(time.RFC3339Nano), "last_edited_time": p.edited.Format(time.RFC3339Nano),
		"created_by": notionUser(), "last_edited_by": notionUser(),
		"cover": nil, "icon": nil, "archived": false, "in_trash": false,
		"url": "https://www.notion.so/" + strings.ReplaceAll(p.id, "-", ""), "public_url": nil,
	}
	props := map[string]any{}
	if p.parentDB == "" {
		obj["parent"] = map[string]any{"type": "workspace", "workspace": true}
		props["title"] = map[string]any{"id": "title", "type": "title", "title": []any{richText(p.title)}}
	} else {
		obj["parent"] = map[string]any{"type": "database_id", "database_id": p.parentDB}
		db := s.databases[p.parentDB]
		for name, prop := range db.props {
			v, ok := p.values[name]
			if !ok {
				v = plainToValue(prop.Type, nil)
			}
			props[name] = map[string]any{"id": notionPropertyID(name, prop.Type), "type": prop.Type, prop.Type: v}
		}
	}
	obj["properties"] = props
	return obj
}

func (n *Notion) getPage(w http.ResponseWriter, r *http.Request, ws string) {
	if p, ok := n.pageAt(w, r, ws); ok {
		writeJSON(w, http.StatusOK, p.object(n.state()))
	}
}

// updatePage enforces Notion's limits: at most 2000 UTF-16 code units in
// one text object (jsLength) and at most 100 rich text objects in a
// property; a valid update of a page a person is editing is a 409
// (EditConcurrently).
func (n *Notion) updatePage(w http.ResponseWriter, r *http.Request, ws string) {
	p, ok := n.pageAt(w, r, ws)
	if !ok {
		return
	}
	s := n.state()
	var req struct {
		Properties map[string]map[string]json.RawMessage `json:"properties"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if p.parentDB == "" {
		notionError(w, http.StatusBadRequest, "validation_error", "The sandbox updates only database pages.")
		return
	}
	db := s.databases[p.parentDB]
	updates := map[string]any{}
	for name, raw := range req.Properties {
		prop, ok := db.props[name]
		if !ok {
			notionError(w, http.StatusBadRequest, "validation_error", name+" is not a property that exists.")
			return
		}
		val, ok := raw[prop.Type]
		if !ok {
			notionError(w, http.StatusBadRequest, "validation_error", fmt.Sprintf("body failed validation: body.properties.%s.%s should be defined.", name, prop.Type))
			return
		}
		v, msg := parseValue(name, prop.Type, val)
		if msg != "" {
			notionError(w, http.StatusBadRequest, "validation_error", msg)
			return
		}
		updates[name] = v
	}
	// A valid update collides with a person's edit when it is saved.
	if s.editing[p.id] > 0 {
		s.editing[p.id]--
		notionError(w, http.StatusConflict, "conflict_error", "Conflict occurred while saving. Please try again.")
		return
	}
	for k, v := range updates {
		p.values[k] = v
	}
	p.updates++
	p.edited = s.tick()
	writeJSON(w, http.StatusOK, p.object(s))
}

// jsLength is a string's length as Notion measures its limits: in UTF-16
// code units, JavaScript's String.length, so a character outside the
// Basic Multilingual Plane (an emoji, the mathematical letters 𝒪 or 𝔽
// that arXiv abstracts carry) counts twice. The request-limits reference
// (https://developers.notion.com/reference/request-limits) says "2000
// characters"; users found what that means when a 2000-code-point chunk
// holding one emoji "weighed 2001 units and the whole v1/pages request
// 400'd with validation_error" (dwarvesf/dwarves-kit#403, "chunk Notion
// rich_text by UTF-16 units, not codepoints"; raycast/extensions#30001).
func jsLength(s string) int {
	n := 0
	for _, r := range s {
		n += max(utf16.RuneLen(r), 1)
	}
	return n
}

func parseValue(name, typ string, raw json.RawMessage) (any, string) {
	switch typ {
	case "title", "rich_text":
		var items []struct {
			Text struct {
				Content string `json:"content"`
			} `json:"text"`
		}
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Sprintf("body failed validation: body.properties.%s.%s should be an array.", name, typ)
		}
		if len(items) > 100 {
			return nil, fmt.Sprintf("body failed validation: body.properties.%s.%s.length should be ≤ `100`, instead was `%d`.", name, typ, len(items))
		}
		out := []any{}
		for i, it := range items {
			if n := jsLength(it.Text.Content); n > 2000 {
				return nil, fmt.Sprintf("body failed validation: body.properties.%s.%s[%d].text.content.length should be ≤ `2000`, instead was `%d`.", name, typ, i, n)
			}
			out = append(out, richText(it.Text.Content))
		}
		return out, ""
	case "url":
		var u *string
		if err := json.Unmarshal(raw, &u); err != nil {
			return nil, fmt.Sprintf("body failed validation: body.properties.%s.url should be a string or `null`.", name)
		}
		if u == nil {
			return nil, ""
		}
		if jsLength(*u) > 2000 {
			return nil, fmt.Sprintf("body failed validation: body.properties.%s.url.length should be ≤ `2000`.", name)
		}
		return *u, ""
	case "number":
		var f *float64
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Sprintf("body failed validation: body.properties.%s.number should be a number or `null`.", name)
		}
		if f == nil {
			return nil, ""
		}
		return *f, ""
	}
	return nil, "unsupported property type " + typ
}
