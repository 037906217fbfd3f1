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

package sandbox_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// The Notion emulator's webhook senders: database automations' "Send
// webhook" action and the integrations' webhook subscriptions, read by
// plain receivers.

const (
	hookClient = "client-1"
	hookBot    = "b07b07b0-7b07-4b07-8b07-b07b07b07b07"
)

var hookSchema = map[string]sandbox.NotionProperty{"Title": {Type: "title"}, "Summary": {Type: "rich_text"},
	"Link": {Type: "url"}, "Score": {Type: "number"}}

type hookRig struct {
	*notionAPI
	home, db string
}

// newHookRig is a Notion with one workspace connected to hookClient and a
// database; the senders are closed before the receivers the test opens.
func newHookRig(t *testing.T) *hookRig {
	t.Helper()
	n := sandbox.NewNotion()
	srv := httptest.NewServer(sandbox.New(n))
	t.Cleanup(srv.Close)
	t.Cleanup(n.Close)
	ws := sandbox.NotionWorkspace{ID: "ws-1", Name: "Lab", BotID: hookBot}
	a := &notionAPI{t: t, base: srv.URL + "/notion/v1", token: n.IssueAccessToken(hookClient, ws), n: n, ws: ws.ID}
	home := n.AddPage(ws.ID, "Home")
	return &hookRig{notionAPI: a, home: home, db: n.AddDatabase(ws.ID, home, "ArXiv Papers", hookSchema)}
}

// propID is a property's id as the page object carries it.
func (r *hookRig) propID(page, name string) string {
	_, obj := r.call(http.MethodGet, "/pages/"+page, "")
	return obj["properties"].(map[string]any)[name].(map[string]any)["id"].(string)
}

// patch updates a page through the API, as the integration's bot.
func (r *hookRig) patch(page, body string) {
	r.t.Helper()
	if status, got := r.call(http.MethodPatch, "/pages/"+page, body); status != 200 {
		r.t.Fatalf("PATCH: %d %v", status, got)
	}
}

func (r *hookRig) idle() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.n.WaitWebhooksIdle(ctx); err != nil {
		r.t.Fatalf("senders never idle: %v", err)
	}
}

type hookRequest struct {
	header http.Header
	raw    []byte
	body   map[string]any
}

// hookReceiver records what it receives and answers with answer(body).
type hookReceiver struct {
	url  string
	reqs chan hookRequest
	mu   sync.Mutex
	fn   func(body map[string]any) int
}

func newHookReceiver(t *testing.T, status int) *hookReceiver {
	rc := &hookReceiver{reqs: make(chan hookRequest, 100)}
	rc.answer(func(map[string]any) int { return status })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		body := map[string]any{}
		_ = json.Unmarshal(raw, &body)
		rc.reqs <- hookRequest{header: r.Header.Clone(), raw: raw, body: body}
		rc.mu.Lock()
		fn := rc.fn
		rc.mu.Unlock()
		w.WriteHeader(fn(body))
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL
	return rc
}

func (rc *hookReceiver) answer(fn func(body map[string]any) int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.fn = fn
}

func (rc *hookReceiver) next(t *testing.T) hookRequest {
	t.Helper()
	select {
	case req := <-rc.reqs:
		return req
	case <-time.After(10 * time.Second):
		t.Fatal("the hookReceiver got nothing")
		return hookRequest{}
	}
}

// none asserts that nothing more arrived; call it once the senders idle.
func (rc *hookReceiver) none(t *testing.T) {
	t.Helper()
	select {
	case req := <-rc.reqs:
		t.Fatalf("unexpected request %s", req.raw)
	default:
	}
}

// eventually polls cond until it holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func TestNotionAutomationSendsThePageWithTheTickedProperties(t *testing.T) {
	r := newHookRig(t)
	added, edited := newHookReceiver(t, 200), newHookReceiver(t, 204)
	id := r.n.AddAutomation(sandbox.NotionAutomation{DatabaseID: r.db, URL: added.url, Trigger: "page_added",
		Properties: []string{"Link", "Summary"}, Headers: map[string]string{"X-Hook-Key": "k1"}})
	r.n.AddAutomation(sandbox.NotionAutomation{DatabaseID: r.db, URL: edited.url, Trigger: "property_edited", Properties: []string{"Link"}})
	page := r.n.AddRow(r.db, map[string]any{"Title": "Attention", "Summary": "We propose", "Link": "https://arxiv.org/abs/1706.03762"})

	req := added.next(t)
	h := req.header
	if h.Get("Content-Type") != "application/json" || h.Get("User-Agent") != "NotionAutomation" || h.Get("X-Hook-Key") != "k1" || h.Get("X-Notion-Signature") != "" {
		t.Fatalf("headers %v: want JSON from NotionAutomation, the custom header, no signature", h)
	}
	src, data := obj(req.body["source"]), obj(req.body["data"])
	if src["type"] != "automation" || src["automation_id"] != id || src["action_id"] == "" || src["attempt"] != 1.0 || len(src["event_id"].(string)) != 36 {
		t.Fatalf("source %v", src)
	}
	parent := obj(data["parent"])
	if data["object"] != "page" || data["id"] != page || parent["type"] != "data_source_id" || parent["database_id"] != r.db || parent["data_source_id"] == nil ||
		obj(data["last_edited_by"])["id"] != sandbox.NotionPersonID || data["is_archived"] != false {
		t.Fatalf("data %v", data)
	}
	props := obj(data["properties"])
	if keys := slices.Sorted(maps.Keys(props)); !slices.Equal(keys, []string{"Link", "Summary"}) {
		t.Fatalf("properties %v; want only the ticked Link and Summary", keys)
	}
	summary := obj(props["Summary"])["rich_text"].([]any)
	if obj(props["Link"])["url"] != "https://arxiv.org/abs/1706.03762" || obj(summary[0])["plain_text"] != "We propose" {
		t.Fatalf("values %v", props)
	}

	if err := r.n.EditRow(page, map[string]any{"Link": "https://arxiv.org/abs/1810.04805"}); err != nil {
		t.Fatal(err)
	}
	data = obj(edited.next(t).body["data"])
	if got := obj(obj(data["properties"])["Link"])["url"]; got != "https://arxiv.org/abs/1810.04805" {
		t.Fatalf("property_edited sent Link %v, want the new URL", got)
	}
	r.idle()
	added.none(t) // an edit is not a page added
}

func TestNotionAutomationPausesOnAFailedDelivery(t *testing.T) {
	r := newHookRig(t)
	rc := newHookReceiver(t, 500)
	id := r.n.AddAutomation(sandbox.NotionAutomation{DatabaseID: r.db, URL: rc.url, Trigger: "property_edited", Properties: []string{"Title"}})
	page := r.n.AddRow(r.db, map[string]any{"Title": "v1"})
	noErr(t, r.n.EditRow(page, map[string]any{"Title": "v2"}))
	rc.next(t)
	eventually(t, "paused", func() bool { return r.n.AutomationPaused(id) })

	noErr(t, r.n.EditRow(page, map[string]any{"Title": "v3"}))
	r.idle()
	rc.none(t)
	if d := r.n.AutomationDeliveries(id); len(d) != 1 || d[0].Status != 500 || d[0].Attempt != 1 {
		t.Fatalf("deliveries %+v; want the one 500", d)
	}

	rc.answer(func(map[string]any) int { return 200 })
	r.n.ResumeAutomation(id)
	noErr(t, r.n.EditRow(page, map[string]any{"Title": "v4"}))
	title := obj(obj(rc.next(t).body["data"])["properties"])["Title"]
	if got := obj(obj(title)["title"].([]any)[0])["plain_text"]; got != "v4" {
		t.Fatalf("after resuming, sent title %v; want v4 (nothing of the paused time)", got)
	}
	r.idle()
	rc.none(t)
	if r.n.AutomationPaused(id) {
		t.Fatal("paused after a delivered webhook")
	}
}

func TestNotionAutomationPausesWhenTheReceiverDoesNotAnswer(t *testing.T) {
	r := newHookRig(t)
	r.n.SetWebhookTimeout(50 * time.Millisecond)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		select {
		case <-req.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	id := r.n.AddAutomation(sandbox.NotionAutomation{DatabaseID: r.db, URL: srv.URL, Trigger: "page_added"})
	r.n.AddRow(r.db, nil)
	r.idle()
	if d := r.n.AutomationDeliveries(id); !r.n.AutomationPaused(id) || len(d) != 1 || d[0].Status != 0 {
		t.Fatalf("paused %v, deliveries %+v; want paused after one unanswered delivery", r.n.AutomationPaused(id), d)
	}
}

// verified subscribes rc and verifies the subscription with the token it
// received, as a person would.
func (r *hookRig) verified(rc *hookReceiver) (id, token string) {
	r.t.Helper()
	id = r.n.Subscribe(sandbox.NotionSubscription{ClientID: hookClient, URL: rc.url})
	token, _ = rc.next(r.t).body["verification_token"].(string)
	eventually(r.t, "token sent", func() bool { return r.n.SentVerificationToken(id) == token })
	noErr(r.t, r.n.VerifySubscription(id, token))
	return id, token
}

func checkSignature(t *testing.T, token string, req hookRequest) {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write(req.raw)
	if got, want := req.header.Get("X-Notion-Signature"), "sha256="+hex.EncodeToString(mac.Sum(nil)); got != want {
		t.Fatalf("X-Notion-Signature %q, want %q", got, want)
	}
}

func TestNotionSubscriptionVerifiesBeforeSendingSignedEvents(t *testing.T) {
	r := newHookRig(t)
	rc := newHookReceiver(t, 200)
	id := r.n.Subscribe(sandbox.NotionSubscription{ClientID: hookClient, URL: rc.url})
	req := rc.next(t)
	token, _ := req.body["verification_token"].(string)
	if len(req.body) != 1 || len(token) < 20 || token[:7] != "secret_" {
		t.Fatalf("verification request %s", req.raw)
	}
	checkSignature(t, token, req)
	eventually(t, "token sent", func() bool { return r.n.SentVerificationToken(id) == token })

	page := r.n.AddRow(r.db, map[string]any{"Title": "A"})
	noErr(t, r.n.EditRow(page, map[string]any{"Link": "https://arxiv.org/abs/1"}))
	r.idle()
	rc.none(t) // not verified: no events
	if err := r.n.VerifySubscription(id, token+"x"); err == nil {
		t.Fatal("a wrong token verified the subscription")
	}
	noErr(t, r.n.VerifySubscription(id, token))

	noErr(t, r.n.EditRow(page, map[string]any{"Link": "https://arxiv.org/abs/2"}))
	req = rc.next(t)
	checkSignature(t, token, req)
	ev := req.body
	want := map[string]any{"workspace_id": "ws-1", "workspace_name": "Lab", "subscription_id": id, "integration_id": hookClient,
		"type": "page.properties_updated", "attempt_number": 1.0}
	for k, v := range want {
		if ev[k] != v {
			t.Fatalf("%s = %v, want %v in %s", k, ev[k], v, req.raw)
		}
	}
	authors, _ := ev["authors"].([]any)
	if len(authors) != 1 || obj(authors[0])["id"] != sandbox.NotionPersonID || obj(authors[0])["type"] != "person" {
		t.Fatalf("authors %v", authors)
	}
	data := obj(ev["data"])
	if obj(ev["entity"])["id"] != page || obj(ev["entity"])["type"] != "page" || obj(data["parent"])["id"] != r.db || obj(data["parent"])["type"] != "database" {
		t.Fatalf("entity %v, data %v", ev["entity"], data)
	}
	if got := data["updated_properties"].([]any); len(got) != 1 || got[0] != r.propID(page, "Link") {
		t.Fatalf("updated_properties %v, want Link's id", got)
	}

	sub := r.n.AddSubPage(r.ws, r.home, "Notes")
	ev = rc.next(t).body
	if ev["type"] != "page.created" || obj(ev["entity"])["id"] != sub || obj(obj(ev["data"])["parent"])["id"] != r.home || obj(obj(ev["data"])["parent"])["type"] != "page" {
		t.Fatalf("sub-page event %v", ev)
	}
}

func TestNotionEventRetriesKeepTheEventIDUpToEightAttempts(t *testing.T) {
	r := newHookRig(t)
	r.n.SetEventRetrySchedule(time.Millisecond)
	rc := newHookReceiver(t, 200)
	_, token := r.verified(rc)
	rc.answer(func(map[string]any) int { return http.StatusServiceUnavailable })
	page := r.n.AddRow(r.db, nil)
	r.idle()

	var first map[string]any
	for attempt := 1; attempt <= 8; attempt++ {
		req := rc.next(t)
		checkSignature(t, token, req)
		if req.body["attempt_number"] != float64(attempt) {
			t.Fatalf("attempt %d carries attempt_number %v", attempt, req.body["attempt_number"])
		}
		delete(req.body, "attempt_number")
		if first == nil {
			first = req.body
		} else if !equalJSON(first, req.body) {
			t.Fatalf("retry %d differs beyond attempt_number:\n%v\n%v", attempt, first, req.body)
		}
	}
	rc.none(t)
	if first["type"] != "page.created" || obj(first["entity"])["id"] != page {
		t.Fatalf("event %v", first)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestNotionEventsCombineABurstOfEdits(t *testing.T) {
	r := newHookRig(t)
	r.n.SetEventAggregation(300 * time.Millisecond)
	rc := newHookReceiver(t, 200)
	r.verified(rc)
	page := r.n.AddRow(r.db, map[string]any{"Title": "A"})
	if rc.next(t).body["type"] != "page.created" {
		t.Fatal("no page.created first")
	}

	noErr(t, r.n.EditRow(page, map[string]any{"Link": "https://arxiv.org/abs/1"}))
	noErr(t, r.n.EditRow(page, map[string]any{"Summary": "s1"}))
	r.patch(page, `{"properties":{"Score":{"number":3}}}`)
	noErr(t, r.n.EditRow(page, map[string]any{"Summary": "s2"}))
	r.idle()

	first := obj(rc.next(t).body["data"])["updated_properties"].([]any)
	if len(first) != 1 || first[0] != r.propID(page, "Link") {
		t.Fatalf("the first edit's event: %v; want Link's id, right away", first)
	}
	ev := rc.next(t).body
	got := obj(ev["data"])["updated_properties"].([]any)
	want := []any{r.propID(page, "Summary"), r.propID(page, "Score")}
	if !slices.Equal(got, want) {
		t.Fatalf("the combined event's updated_properties %v, want %v", got, want)
	}
	authors := ev["authors"].([]any)
	if len(authors) != 2 || obj(authors[0])["type"] != "person" || obj(authors[1])["id"] != hookBot {
		t.Fatalf("authors %v; want the person and the bot", authors)
	}
	rc.none(t)
}

func TestNotionBotUpdatesAreTheBots(t *testing.T) {
	r := newHookRig(t)
	rc, auto := newHookReceiver(t, 200), newHookReceiver(t, 200)
	r.verified(rc)
	r.n.AddAutomation(sandbox.NotionAutomation{DatabaseID: r.db, URL: auto.url, Trigger: "property_edited"})
	page := r.n.AddRow(r.db, nil)
	rc.next(t) // page.created

	r.patch(page, `{"properties":{"Link":{"url":"https://arxiv.org/abs/1"}}}`)
	authors := rc.next(t).body["authors"].([]any)
	if len(authors) != 1 || obj(authors[0])["id"] != hookBot || obj(authors[0])["type"] != "bot" {
		t.Fatalf("authors %v; want the bot", authors)
	}
	_, got := r.call(http.MethodGet, "/pages/"+page, "")
	if obj(got["last_edited_by"])["id"] != hookBot {
		t.Fatalf("last_edited_by %v after the bot's update", got["last_edited_by"])
	}
	// Updates through the API run automations too, the bot as the editor.
	if data := obj(auto.next(t).body["data"]); obj(data["last_edited_by"])["id"] != hookBot {
		t.Fatalf("the automation sent last_edited_by %v", data["last_edited_by"])
	}

	noErr(t, r.n.EditRow(page, map[string]any{"Link": "https://arxiv.org/abs/2"}))
	_, got = r.call(http.MethodGet, "/pages/"+page, "")
	if obj(got["last_edited_by"])["id"] != sandbox.NotionPersonID {
		t.Fatalf("last_edited_by %v after the person's edit", got["last_edited_by"])
	}
}

func TestNotionSubPagesAndParents(t *testing.T) {
	r := newHookRig(t)
	sub := r.n.AddSubPage(r.ws, r.home, "Reading list")
	if r.n.ParentOf(r.db) != r.home {
		t.Fatalf("ParentOf = %q, want %q", r.n.ParentOf(r.db), r.home)
	}
	_, got := r.call(http.MethodPost, "/search", `{"filter":{"property":"object","value":"page"}}`)
	parents := map[string]map[string]any{}
	for _, res := range got["results"].([]any) {
		parents[obj(res)["id"].(string)] = obj(obj(res)["parent"])
	}
	if p := parents[sub]; p["type"] != "page_id" || p["page_id"] != r.home {
		t.Fatalf("sub-page parent %v", p)
	}
	if p := parents[r.home]; p["type"] != "workspace" || p["workspace"] != true {
		t.Fatalf("top-level parent %v", p)
	}
}

func TestNotionHookAdminEndpoints(t *testing.T) {
	r := newHookRig(t)
	rc := newHookReceiver(t, 200)
	admin := r.base[:len(r.base)-len("/notion/v1")] + "/_sandbox/notion"
	call := func(method, path, body string) (int, map[string]any) {
		req, _ := http.NewRequest(method, admin+path, bytes.NewBufferString(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		out := map[string]any{}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	page := r.n.AddRow(r.db, nil)
	_, created := call(http.MethodPost, "/automations", `{"database_id":"`+r.db+`","url":"`+rc.url+`","trigger":"property_edited","properties":["Link"]}`)
	if status, _ := call(http.MethodPatch, "/pages/"+page, `{"values":{"Link":"https://arxiv.org/abs/9"}}`); status != 204 {
		t.Fatalf("PATCH page: %d", status)
	}
	rc.next(t)
	r.idle()
	if status, got := call(http.MethodGet, "/automations/"+created["id"].(string), ""); status != 200 || got["paused"] != false || len(got["deliveries"].([]any)) != 1 {
		t.Fatalf("automation: %d %v", status, got)
	}
	if status, _ := call(http.MethodPost, "/automations/"+created["id"].(string)+"/resume", ""); status != 204 {
		t.Fatalf("resume: %d", status)
	}

	_, sub := call(http.MethodPost, "/subscriptions", `{"client_id":"`+hookClient+`","url":"`+rc.url+`"}`)
	token := rc.next(t).body["verification_token"].(string)
	id := sub["id"].(string)
	eventually(t, "token sent", func() bool {
		_, got := call(http.MethodGet, "/subscriptions/"+id, "")
		return got["verification_token_sent"] == true
	})
	if status, _ := call(http.MethodPost, "/subscriptions/"+id+"/verify", `{"verification_token":"nope"}`); status != 400 {
		t.Fatalf("a wrong token: %d", status)
	}
	if status, _ := call(http.MethodPost, "/subscriptions/"+id+"/verify", `{"verification_token":"`+token+`"}`); status != 204 {
		t.Fatalf("verify: %d", status)
	}
	status, got := call(http.MethodGet, "/subscriptions/"+id, "")
	if raw, _ := json.Marshal(got); status != 200 || got["verified"] != true || bytes.Contains(raw, []byte(token)) {
		t.Fatalf("subscription: %d %s (verified, and never the token)", status, raw)
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
