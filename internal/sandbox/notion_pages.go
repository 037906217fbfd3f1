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
	"reflect"
	"sort"
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
		"created_by": notionUser(), "last_edited_by": notionUser(p.editedBy),
		"cover": nil, "icon": nil, "archived": false, "in_trash": false,
		"url": "https://www.notion.so/" + strings.ReplaceAll(p.id, "-", ""), "public_url": nil,
	}
	props := map[string]any{}
	if p.parentDB == "" {
		obj["parent"] = map[string]any{"type": "workspace", "workspace": true}
		if p.parentPage != "" {
			obj["parent"] = map[string]any{"type": "page_id", "page_id": p.parentPage}
		}
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
// (EditConcurrently). The update is the integration's bot's: the page's
// last_edited_by, and the author of the webhook events it causes.
func (n *Notion) updatePage(w http.ResponseWriter, r *http.Request, g notionGrant) {
	p, ok := n.pageAt(w, r, g.workspace.ID)
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
	changed := p.apply(updates)
	p.updates++
	p.edited = s.tick()
	p.editedBy = g.workspace.BotID
	n.changedLocked(notionChange{page: p, props: changed, author: notionAuthor{ID: g.workspace.BotID, Type: "bot"}})
	writeJSON(w, http.StatusOK, p.object(s))
}

// apply writes property values and returns the names of those whose value
// changed, sorted.
func (p *notionPage) apply(values map[string]any) []string {
	var changed []string
	for k, v := range values {
		if old, ok := p.values[k]; !ok || !reflect.DeepEqual(old, v) {
			changed = append(changed, k)
		}
		p.values[k] = v
	}
	sort.Strings(changed)
	return changed
}

// EditRow changes a database page as a person typing in Notion would, with
// AddRow's plain values; nil or "" clears a property. It is a properties
// update by the person (NotionPersonID), which the automations and the
// webhook subscriptions see.
func (n *Notion) EditRow(pageID string, values map[string]any) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.state()
	p := s.pages[normID(pageID)]
	if p == nil || p.parentDB == "" {
		return fmt.Errorf("sandbox: no database page %q", pageID)
	}
	db := s.databases[p.parentDB]
	typed := map[string]any{}
	for name, v := range values {
		prop, ok := db.props[name]
		if !ok {
			return fmt.Errorf("sandbox: database %s has no property %q", db.id, name)
		}
		typed[name] = personValue(prop.Type, v)
	}
	changed := p.apply(typed)
	if len(changed) == 0 {
		return nil // typing a property's own value back changes nothing
	}
	p.edited = s.tick()
	p.editedBy = ""
	n.changedLocked(notionChange{page: p, props: changed, author: personAuthor()})
	return nil
}

// personValue is a plain value in the response shape: "" clears a url or
// number as nil does, and numbers are float64 as JSON decodes them.
func personValue(typ string, v any) any {
	if s, ok := v.(string); ok && s == "" && typ != "title" && typ != "rich_text" {
		return nil
	}
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return plainToValue(typ, v)
}

// AddSubPage adds a page under another page, as a person would. Unlike a
// new top-level page (AddPage), which reaches no integration until a person
// shares it, a sub-page inherits its parent's connections, so it is a
// page.created event for the subscriptions: "Make sure the integration has
// access to the object that triggered the event"
// (https://developers.notion.com/reference/webhooks, "Troubleshooting
// tips").
func (n *Notion) AddSubPage(workspace, parentPageID, title string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.state()
	id := newNotionID()
	t := s.tick()
	p := &notionPage{id: id, workspace: workspace, title: title, parentPage: normID(parentPageID), created: t, edited: t}
	s.pages[id] = p
	n.changedLocked(notionChange{page: p, created: true, author: personAuthor()})
	return id
}

// ParentOf returns the page a database was created under ("" for an
// unknown database).
func (n *Notion) ParentOf(databaseID string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if db := n.state().databases[normID(databaseID)]; db != nil {
		return db.parentPage
	}
	return ""
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
