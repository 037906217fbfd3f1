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
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf16"
)

// Route names of the Notion API (jomei/notionapi runs against them
// unchanged, with Notion-Version 2022-06-28).
const (
	NotionSearch         = "notion.search"
	NotionDatabaseGet    = "notion.databases.retrieve"
	NotionDatabaseCreate = "notion.databases.create"
	NotionDatabaseUpdate = "notion.databases.update"
	NotionDatabaseQuery  = "notion.databases.query"
	NotionPageGet        = "notion.pages.retrieve"
	NotionPageUpdate     = "notion.pages.update"
)

// NotionProperty is a database property: its type and, for pages, a value.
type NotionProperty struct {
	Type string // title, rich_text, url, number
}

type notionDatabase struct {
	id, workspace, parentPage, title string
	props                            map[string]NotionProperty
	created, edited                  time.Time
}

type notionPage struct {
	id, workspace, title, parentDB string         // title for workspace pages; parentDB for database rows
	values                         map[string]any // property name → value in Notion's response shape
	created, edited                time.Time
	// updates counts the API's successful PATCHes of the page, for tests
	// that a page was written exactly once (Updates).
	updates int
}

// notionState is the API's data, kept with the OAuth grants in Notion.
type notionState struct {
	databases map[string]*notionDatabase
	pages     map[string]*notionPage
	clock     int64
	// editing counts, per page, the API updates that will still collide
	// with a person's edit (EditConcurrently).
	editing map[string]int
}

func (n *Notion) state() *notionState {
	if n.data == nil {
		n.data = &notionState{databases: map[string]*notionDatabase{}, pages: map[string]*notionPage{}, editing: map[string]int{}}
	}
	return n.data
}

// EditConcurrently makes a person edit a database page while the next
// updates arrive: each of the next n pages.update calls of the page
// collides with the edit and is answered 409 conflict_error, as Notion
// answers "The transaction could not be completed, potentially due to a
// data collision. Make sure the parameters are up to date and try again."
// (https://developers.notion.com/reference/status-codes). The message is
// the one users receive from pages.update ("Conflict occurred while
// saving. Please try again.", rowthan/pagenote#162), and client libraries
// retry it (mariosimao/notion-sdk-php#155 "Retry when Notion API responds
// with conflict error"). The update after them succeeds.
func (n *Notion) EditConcurrently(pageID string, updates int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.state().editing[normID(pageID)] = updates
}

// tick gives each write a later timestamp, so "last edited" orders them.
func (s *notionState) tick() time.Time {
	s.clock++
	return time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(s.clock) * time.Second)
}

var (
	uuidish = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)
)

// normID is Notion's canonical dashed lower-case form of an id (the id
// unchanged when it is not one, so lookups simply miss). Notion takes an
// id as a UUID with or without its dashes (its SDK's extractNotionId
// accepts both, case-insensitively), and refuses anything else, such as a
// URL slug, with "path.page_id should be a valid uuid"
// (https://qiita.com/wwwy/items/7c13cda8100e403fea48). Written here, not
// shared with the client's parser (internal/notionid), which it tests.
func normID(id string) string {
	if !uuidish.MatchString(id) {
		return id
	}
	h := strings.ToLower(strings.ReplaceAll(id, "-", ""))
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func newNotionID() string {
	return normID(fmt.Sprintf("%x", []byte(randomToken(16))))
}

// AddPage adds a top-level page shared with the integration.
func (n *Notion) AddPage(workspace, title string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.state()
	id := newNotionID()
	t := s.tick()
	s.pages[id] = &notionPage{id: id, workspace: workspace, title: title, created: t, edited: t}
	return id
}

// AddDatabase adds a database under a page.
func (n *Notion) AddDatabase(workspace, parentPage, title string, props map[string]NotionProperty) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.state()
	id := newNotionID()
	t := s.tick()
	s.databases[id] = &notionDatabase{id: id, workspace: workspace, parentPage: normID(parentPage), title: title, props: props, created: t, edited: t}
	return id
}

// AddRow adds a page to a database with plain values: strings for title,
// rich_text and url properties, numbers for number properties.
func (n *Notion) AddRow(databaseID string, values map[string]any) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.state()
	db := s.databases[normID(databaseID)]
	id := newNotionID()
	t := s.tick()
	p := &notionPage{id: id, workspace: db.workspace, parentDB: db.id, values: map[string]any{}, created: t, edited: t}
	for name, v := range values {
		p.values[name] = plainToValue(db.props[name].Type, v)
	}
	s.pages[id] = p
	return id
}

// Row returns a database page's values as plain text and numbers: the
// concatenated content of title and rich_text, the url, the number.
func (n *Notion) Row(pageID string) map[string]any {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.state().pages[normID(pageID)]
	if p == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range p.values {
		out[k] = valueToPlain(v)
	}
	return out
}

// Updates returns how many times the API updated a page (PATCH
// /v1/pages/{id} answered 200); -1 for a page that does not exist.
func (n *Notion) Updates(pageID string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.state().pages[normID(pageID)]
	if p == nil {
		return -1
	}
	return p.updates
}

// RichTextChunks returns how many rich text items a page property holds.
func (n *Notion) RichTextChunks(pageID, property string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.state().pages[normID(pageID)]
	if p == nil {
		return 0
	}
	if items, ok := p.values[property].([]any); ok {
		return len(items)
	}
	return 0
}

// DatabaseProperties returns a database's schema, by property name.
func (n *Notion) DatabaseProperties(id string) map[string]string {
	n.mu.Lock()
	defer n.mu.Unlock()
	db := n.state().databases[normID(id)]
	if db == nil {
		return nil
	}
	out := map[string]string{}
	for name, p := range db.props {
		out[name] = p.Type
	}
	return out
}

// Databases lists the databases of a workspace with a title.
func (n *Notion) Databases(workspace, title string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var ids []string
	for _, db := range n.state().databases {
		if db.workspace == workspace && db.title == title {
			ids = append(ids, db.id)
		}
	}
	sort.Strings(ids)
	return ids
}

func richText(s string) map[string]any {
	return map[string]any{"type": "text", "text": map[string]any{"content": s, "link": nil},
		"annotations": map[string]any{"bold": false, "italic": false, "strikethrough": false, "underline": false, "code": false, "color": "default"},
		"plain_text":  s, "href": nil}
}

func plainToValue(typ string, v any) any {
	switch typ {
	case "title", "rich_text":
		if s, _ := v.(string); s != "" {
			return []any{richText(s)}
		}
		return []any{}
	default:
		return v
	}
}

func valueToPlain(v any) any {
	items, ok := v.([]any)
	if !ok {
		return v
	}
	var b strings.Builder
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			if t, ok := m["plain_text"].(string); ok {
				b.WriteString(t)
			}
		}
	}
	return b.String()
}

// notionError writes Notion's error object.
func notionError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]any{"object": "error", "status": status, "code": code, "message": message,
		"request_id": newNotionID()})
}

// authorize checks the Bearer token and Notion-Version header, and returns
// the token's workspace.
func (n *Notion) authorize(w http.ResponseWriter, r *http.Request) (string, bool) {
	if r.Header.Get("Notion-Version") == "" {
		notionError(w, http.StatusBadRequest, "missing_version", "Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.")
		return "", false
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	g, known := n.access[tok]
	if !ok || !known {
		notionError(w, http.StatusUnauthorized, "unauthorized", "API token is invalid.")
		return "", false
	}
	return g.workspace.ID, true
}

func (n *Notion) registerAPI(s *Server) {
	s.Handle(NotionSearch, "POST /notion/v1/search", n.locked(n.search))
	s.Handle(NotionDatabaseGet, "GET /notion/v1/databases/{id}", n.locked(n.getDatabase))
	s.Handle(NotionDatabaseCreate, "POST /notion/v1/databases", n.locked(n.createDatabase))
	s.Handle(NotionDatabaseUpdate, "PATCH /notion/v1/databases/{id}", n.locked(n.updateDatabase))
	s.Handle(NotionDatabaseQuery, "POST /notion/v1/databases/{id}/query", n.locked(n.queryDatabase))
	s.Handle(NotionPageGet, "GET /notion/v1/pages/{id}", n.locked(n.getPage))
	s.Handle(NotionPageUpdate, "PATCH /notion/v1/pages/{id}", n.locked(n.updatePage))
}

type notionHandler func(w http.ResponseWriter, r *http.Request, workspace string)

func (n *Notion) locked(h notionHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		defer n.mu.Unlock()
		ws, ok := n.authorize(w, r)
		if !ok {
			return
		}
		h(w, r, ws)
	}
}

// pathID validates a path id as Notion does.
func pathID(w http.ResponseWriter, r *http.Request, name string) (string, bool) {
	id := r.PathValue("id")
	if !uuidish.MatchString(id) {
		notionError(w, http.StatusBadRequest, "validation_error",
			fmt.Sprintf("path failed validation: path.%s should be a valid uuid, instead was `%s`.", name, strings.ReplaceAll(id, "`", "")))
		return "", false
	}
	return normID(id), true
}

func notFound(w http.ResponseWriter, kind, id string) {
	notionError(w, http.StatusNotFound, "object_not_found",
		fmt.Sprintf("Could not find %s with ID: %s. Make sure the relevant pages and databases are shared with your integration.", kind, id))
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(v); err != nil {
		notionError(w, http.StatusBadRequest, "invalid_json", "Error parsing JSON body.")
		return false
	}
	return true
}

func (db *notionDatabase) object() map[string]any {
	props := map[string]any{}
	for name, p := range db.props {
		cfg := map[string]any{}
		if p.Type == "number" {
			cfg = map[string]any{"format": "number"}
		}
		id := "title"
		if p.Type != "title" {
			id = fmt.Sprintf("%x", len(name)*7919%65536)
		}
		props[name] = map[string]any{"id": id, "name": name, "type": p.Type, p.Type: cfg}
	}
	return map[string]any{
		"object": "database", "id": db.id, "created_time": db.created.Format(time.RFC3339Nano), "last_edited_time": db.edited.Format(time.RFC3339Nano),
		"title": []any{richText(db.title)}, "description": []any{}, "icon": nil, "cover": nil,
		"properties": props, "parent": map[string]any{"type": "page_id", "page_id": db.parentPage},
		"url": "https://www.notion.so/" + strings.ReplaceAll(db.id, "-", ""), "public_url": nil,
		"archived": false, "in_trash": false, "is_inline": false,
		"created_by":     map[string]any{"object": "user", "id": "00000000-0000-4000-8000-000000000001"},
		"last_edited_by": map[string]any{"object": "user", "id": "00000000-0000-4000-8000-000000000001"},
	}
}

func (p *notionPage) object(s *notionState) map[string]any {
	obj := map[string]any{
		"object": "page", "id": p.id, "created_time": p.created.Format(time.RFC3339Nano), "last_edited_time": p.edited.Format(time.RFC3339Nano),
		"created_by":     map[string]any{"object": "user", "id": "00000000-0000-4000-8000-000000000001"},
		"last_edited_by": map[string]any{"object": "user", "id": "00000000-0000-4000-8000-000000000001"},
		"cover":          nil, "icon": nil, "archived": false, "in_trash": false,
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
			id := "title"
			if prop.Type != "title" {
				id = fmt.Sprintf("%x", len(name)*7919%65536)
			}
			props[name] = map[string]any{"id": id, "type": prop.Type, prop.Type: v}
		}
	}
	obj["properties"] = props
	return obj
}

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
	var req struct {
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
	if r.ContentLength != 0 && !decodeBody(w, r, &req) {
		return
	}
	if req.Filter != nil && (req.Filter.Property != "object" || (req.Filter.Value != "page" && req.Filter.Value != "database")) {
		notionError(w, http.StatusBadRequest, "validation_error", "body failed validation: body.filter.value should be `\"page\"` or `\"database\"`, instead was `"+req.Filter.Value+"`.")
		return
	}
	if req.PageSize < 0 || req.PageSize > 100 {
		notionError(w, http.StatusBadRequest, "validation_error", fmt.Sprintf("body failed validation: body.page_size should be ≤ `100`, instead was `%d`.", req.PageSize))
		return
	}
	s := n.state()
	type candidate struct {
		id, title string
		edited    time.Time
		obj       func() map[string]any
	}
	var all []candidate
	want := func(kind string) bool { return req.Filter == nil || req.Filter.Value == kind }
	if want("database") {
		for _, db := range s.databases {
			if db.workspace == ws {
				all = append(all, candidate{db.id, db.title, db.edited, db.object})
			}
		}
	}
	if want("page") {
		for _, p := range s.pages {
			title := p.title
			if p.parentDB != "" {
				title, _ = valueToPlain(p.values[titleProp(s.databases[p.parentDB])]).(string)
			}
			if p.workspace == ws {
				all = append(all, candidate{p.id, title, p.edited, func() map[string]any { return p.object(s) }})
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
	start := 0
	if req.StartCursor != "" {
		start = -1
		for i, c := range all {
			if c.id == normID(req.StartCursor) {
				start = i
			}
		}
		if start < 0 {
			notionError(w, http.StatusBadRequest, "validation_error", "body failed validation: body.start_cursor should be a cursor this search returned, instead was `"+strings.ReplaceAll(req.StartCursor, "`", "")+"`.")
			return
		}
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
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "results": results, "next_cursor": next,
		"has_more": end < len(all), "type": "page_or_database", "page_or_database": map[string]any{}})
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
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "results": results, "next_cursor": next,
		"has_more": end < len(rows), "type": "page_or_database", "page_or_database": map[string]any{}})
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

// databaseAt finds the path's database in the token's workspace, or
// answers 400 (malformed id) or 404 (unknown or not shared).
func (n *Notion) databaseAt(w http.ResponseWriter, r *http.Request, ws string) (*notionDatabase, bool) {
	id, ok := pathID(w, r, "database_id")
	if !ok {
		return nil, false
	}
	db := n.state().databases[id]
	if db == nil || db.workspace != ws {
		notFound(w, "database", id)
		return nil, false
	}
	return db, true
}

// pageAt is databaseAt for pages.
func (n *Notion) pageAt(w http.ResponseWriter, r *http.Request, ws string) (*notionPage, bool) {
	id, ok := pathID(w, r, "page_id")
	if !ok {
		return nil, false
	}
	p := n.state().pages[id]
	if p == nil || p.workspace != ws {
		notFound(w, "page", id)
		return nil, false
	}
	return p, true
}
