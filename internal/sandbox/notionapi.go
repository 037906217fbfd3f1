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
	"hash/fnv"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"
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
	parentPage                     string         // the page a sub-page is under ("" for top-level and rows)
	values                         map[string]any // property name → value in Notion's response shape
	created, edited                time.Time
	// editedBy is the user who edited the page last: "" for the person
	// (NotionPersonID), else the bot id of the integration that did.
	editedBy string
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
// shared with the client's parser (internal/upstream/notionid), which it tests.
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
	n.changedLocked(notionChange{page: p, created: true, author: personAuthor()})
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
// the token's grant: its workspace and the integration's bot.
func (n *Notion) authorize(w http.ResponseWriter, r *http.Request) (notionGrant, bool) {
	if r.Header.Get("Notion-Version") == "" {
		notionError(w, http.StatusBadRequest, "missing_version", "Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.")
		return notionGrant{}, false
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	g, known := n.access[tok]
	if !ok || !known {
		notionError(w, http.StatusUnauthorized, "unauthorized", "API token is invalid.")
		return notionGrant{}, false
	}
	return g, true
}

func (n *Notion) registerAPI(s *Server) {
	s.Handle(NotionSearch, "POST /notion/v1/search", n.locked(n.search))
	s.Handle(NotionDatabaseGet, "GET /notion/v1/databases/{id}", n.locked(n.getDatabase))
	s.Handle(NotionDatabaseCreate, "POST /notion/v1/databases", n.locked(n.createDatabase))
	s.Handle(NotionDatabaseUpdate, "PATCH /notion/v1/databases/{id}", n.locked(n.updateDatabase))
	s.Handle(NotionDatabaseQuery, "POST /notion/v1/databases/{id}/query", n.locked(n.queryDatabase))
	s.Handle(NotionPageGet, "GET /notion/v1/pages/{id}", n.locked(n.getPage))
	s.Handle(NotionPageUpdate, "PATCH /notion/v1/pages/{id}", n.lockedGrant(n.updatePage))
}

type notionHandler func(w http.ResponseWriter, r *http.Request, workspace string)

func (n *Notion) locked(h notionHandler) http.HandlerFunc {
	return n.lockedGrant(func(w http.ResponseWriter, r *http.Request, g notionGrant) { h(w, r, g.workspace.ID) })
}

// lockedGrant is locked for handlers that need the token's grant (its
// bot, the author of what the request writes).
func (n *Notion) lockedGrant(h func(w http.ResponseWriter, r *http.Request, g notionGrant)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		defer n.mu.Unlock()
		g, ok := n.authorize(w, r)
		if !ok {
			return
		}
		h(w, r, g)
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

// writeNotionList answers a page of a paginated endpoint (search, database
// query) as Notion's list object.
func writeNotionList(w http.ResponseWriter, results []any, next any, hasMore bool) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "results": results, "next_cursor": next,
		"has_more": hasMore, "type": "page_or_database", "page_or_database": map[string]any{}})
}

// notionPropertyID is a property's id: "title" for the title, else a
// short id made from the name, unique per name as Notion's are (a
// database's property ids are distinct; events' updated_properties name
// properties by them), URL-encoded as Notion gives them ("%3AUPp").
func notionPropertyID(name, typ string) string {
	if typ == "title" {
		return "title"
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return url.PathEscape(fmt.Sprintf(":%x", h.Sum32()))
}

// NotionPersonID is the id of the person whose edits the sandbox makes
// (AddRow, EditRow): events' authors and pages' last_edited_by.
const NotionPersonID = "00000000-0000-4000-8000-000000000001"

// notionUser is the user objects' created_by and last_edited_by: the
// person, or the bot whose id is given.
func notionUser(botID ...string) map[string]any {
	if len(botID) > 0 && botID[0] != "" {
		return map[string]any{"object": "user", "id": botID[0]}
	}
	return map[string]any{"object": "user", "id": NotionPersonID}
}
