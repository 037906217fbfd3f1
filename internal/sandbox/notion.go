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
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// Route names of the Notion emulator.
const (
	NotionOAuthToken     = "notion.oauth.token" //nolint:gosec // a route name, not a credential
	NotionOAuthAuthorize = "notion.oauth.authorize"
)

// NotionWorkspace is the workspace a Notion grant is for.
type NotionWorkspace struct {
	ID, Name, BotID string
	// DuplicatedTemplateID is set when the person duplicated the template.
	DuplicatedTemplateID string
}

type notionGrant struct {
	clientID  string
	workspace NotionWorkspace
}

// Notion emulates the Notion API. Its OAuth token endpoint
// (POST /v1/oauth/token, JSON body, Basic client authentication; seed 000
// §3.1.2, §3.7.3) rotates refresh tokens: every refresh answers a new
// access token and a new refresh token, and the old refresh token is dead
// from then on.
//
// A refused code or refresh token is 400 invalid_grant in Notion's own
// error object, {"object": "error", "status": 400, "code":
// "invalid_grant", "message": "Invalid code: this code has been
// revoked."}: https://developers.notion.com/reference/status-codes lists
// invalid_grant among the API's error codes, in the "code" and "message"
// properties every Notion error has. Integrators also report RFC 6749's
// {"error": "invalid_grant", "error_description": ...} from the same
// endpoint (https://nango.dev/blog/notion-oauth-refresh-token-invalid-grant);
// SetRFC6749Errors answers that shape instead.
type Notion struct {
	ConsentPrompt

	mu      sync.Mutex
	rfcErrs bool
	clients map[string]string // client_id → client_secret
	codes   map[string]notionCode
	refresh map[string]notionGrant
	access  map[string]notionGrant
	data    *notionState
	consent NotionWorkspace
	// hooks are the automations' and subscriptions' senders
	// (notion_automation.go, notion_events.go).
	hooks *notionHooks
}

// SetConsentWorkspace is the workspace the consent page grants access to.
func (n *Notion) SetConsentWorkspace(ws NotionWorkspace) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.consent = ws
}

// consentPage is the consent page, approved at once unless ConsentPrompt
// is on: it redirects back with a code for the consent workspace (or
// error=access_denied when none is set, or when the person cancels), as
// Notion does after a person clicks "Allow access".
func (n *Notion) consentPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	n.mu.Lock()
	_, known := n.clients[q.Get("client_id")]
	ws := n.consent
	n.mu.Unlock()
	back, ok := consentRedirect(w, r, known, "Missing or invalid client_id, redirect_uri or response_type.")
	if !ok || !n.decided(w, r, back, "Notion", url.Values{"error": {"access_denied"}}) {
		return
	}
	v := back.Query()
	if ws.ID == "" {
		v.Set("error", "access_denied")
	} else {
		v.Set("code", n.IssueCode(q.Get("client_id"), q.Get("redirect_uri"), ws))
	}
	redirectToClient(w, r, back, v)
}

type notionCode struct {
	grant       notionGrant
	redirectURI string
}

// NewNotion returns an emulator with no clients.
func NewNotion() *Notion {
	return &Notion{clients: map[string]string{}, codes: map[string]notionCode{},
		refresh: map[string]notionGrant{}, access: map[string]notionGrant{}, hooks: newNotionHooks()}
}

// Upstream implements Emulator.
func (n *Notion) Upstream() upstream.Name { return upstream.Notion }

// Register implements Emulator.
func (n *Notion) Register(s *Server) {
	s.Handle(NotionOAuthToken, "POST /notion/v1/oauth/token", n.token)
	s.Handle(NotionOAuthAuthorize, "GET /notion/v1/oauth/authorize", n.consentPage)
	s.Handle(NotionOAuthAuthorize, "POST /notion/v1/oauth/authorize", n.consentPage)
	s.HandleAdmin("POST /_sandbox/notion/rows", n.adminAddRow)
	s.HandleAdmin("GET /_sandbox/notion/pages/{id}", n.adminRow)
	s.HandleAdmin("GET /_sandbox/notion/pages/{id}/updates", n.adminUpdates)
	n.registerHookAdmin(s)
	n.registerAPI(s)
}

// AddClient registers a public integration's OAuth client.
func (n *Notion) AddClient(id, secret string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.clients[id] = secret
}

// IssueCode is what the consent page gives the callback.
func (n *Notion) IssueCode(clientID, redirectURI string, ws NotionWorkspace) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	code := randomToken(36)
	n.codes[code] = notionCode{grant: notionGrant{clientID: clientID, workspace: ws}, redirectURI: redirectURI}
	return code
}

// IssueRefreshToken creates a grant as if a person had connected earlier.
func (n *Notion) IssueRefreshToken(clientID string, ws NotionWorkspace) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	rt := "nrt_" + randomToken(40)
	n.refresh[rt] = notionGrant{clientID: clientID, workspace: ws}
	return rt
}

// IssueAccessToken creates an access token for a workspace directly.
func (n *Notion) IssueAccessToken(clientID string, ws NotionWorkspace) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	tok := "ntn_" + randomToken(46)
	n.access[tok] = notionGrant{clientID: clientID, workspace: ws}
	return tok
}

// ValidAccessToken reports whether an integration token is live.
func (n *Notion) ValidAccessToken(tok string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.access[tok]
	return ok
}

// SetRFC6749Errors makes the token endpoint answer its refusals in RFC
// 6749 §5.2's shape ({"error", "error_description"}) rather than Notion's
// error object.
func (n *Notion) SetRFC6749Errors(on bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.rfcErrs = on
}

// oauthError answers a token endpoint refusal: Notion's error object
// (status-codes reference), or RFC 6749 §5.2's shape. n.mu is held.
func (n *Notion) oauthError(w http.ResponseWriter, status int, code, message string) {
	if n.rfcErrs {
		writeJSON(w, status, map[string]string{"error": code, "error_description": message})
		return
	}
	writeJSON(w, status, map[string]any{"object": "error", "status": status, "code": code, "message": message,
		"request_id": randomToken(8)})
}

func (n *Notion) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	n.mu.Lock()
	defer n.mu.Unlock()
	if want, known := n.clients[id]; !ok || !known || subtle.ConstantTimeCompare([]byte(secret), []byte(want)) != 1 {
		n.oauthError(w, http.StatusUnauthorized, "invalid_client", "Client authentication failed.")
		return
	}
	var body struct {
		GrantType    string `json:"grant_type"`
		Code         string `json:"code"`
		RedirectURI  string `json:"redirect_uri"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&body); err != nil {
		n.oauthError(w, http.StatusBadRequest, "invalid_request", "Request body must be JSON.")
		return
	}
	var g notionGrant
	switch body.GrantType {
	case "authorization_code":
		c, ok := n.codes[body.Code]
		delete(n.codes, body.Code) // usable once
		if !ok || c.grant.clientID != id || c.redirectURI != body.RedirectURI {
			n.oauthError(w, http.StatusBadRequest, "invalid_grant", "Invalid code: this code has been revoked.")
			return
		}
		g = c.grant
	case "refresh_token":
		old, ok := n.refresh[body.RefreshToken]
		if !ok || old.clientID != id {
			n.oauthError(w, http.StatusBadRequest, "invalid_grant", "Invalid refresh token: this token has been revoked.")
			return
		}
		delete(n.refresh, body.RefreshToken) // rotation: the old one is dead
		g = old
	default:
		n.oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "Unsupported grant_type.")
		return
	}
	access, refresh := "ntn_"+randomToken(46), "nrt_"+randomToken(40)
	n.access[access] = g
	n.refresh[refresh] = g
	resp := map[string]any{
		"access_token": access, "token_type": "bearer", "refresh_token": refresh,
		"bot_id": g.workspace.BotID, "workspace_id": g.workspace.ID, "workspace_name": g.workspace.Name,
		"workspace_icon": nil, "owner": map[string]any{"type": "user"},
		"duplicated_template_id": nilIfEmpty(g.workspace.DuplicatedTemplateID), "request_id": randomToken(8),
	}
	writeJSON(w, http.StatusOK, resp)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// adminAddRow adds a database page, as a person typing in Notion would:
// {"database_id": "...", "values": {"Link": "https://arxiv.org/abs/..."}}.
func (n *Notion) adminAddRow(w http.ResponseWriter, r *http.Request) {
	var req struct {
		DatabaseID string         `json:"database_id"`
		Values     map[string]any `json:"values"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	n.mu.Lock()
	_, ok := n.state().databases[normID(req.DatabaseID)]
	n.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such database"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"page_id": n.AddRow(req.DatabaseID, req.Values)})
}

// adminUpdates answers {"updates": N}: how many times the API updated the
// page.
func (n *Notion) adminUpdates(w http.ResponseWriter, r *http.Request) {
	u := n.Updates(r.PathValue("id"))
	if u < 0 {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such page"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"updates": u})
}

// adminRow shows a database page's values as plain text and numbers.
func (n *Notion) adminRow(w http.ResponseWriter, r *http.Request) {
	row := n.Row(r.PathValue("id"))
	if row == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such page"})
		return
	}
	writeJSON(w, http.StatusOK, row)
}
