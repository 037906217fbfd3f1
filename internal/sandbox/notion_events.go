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
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// This file is the integrations' webhook subscriptions, after "Webhooks"
// (https://developers.notion.com/reference/webhooks) and "Event types &
// delivery" (https://developers.notion.com/reference/webhooks-events-delivery,
// "events-delivery" below). The sending it shares with the automations
// (notionHooks) is at the end of notion_automation.go.

// NotionSubscription is a webhook subscription of an integration (its
// OAuth client): it receives the events of every workspace with a live
// grant of the client.
type NotionSubscription struct {
	ClientID string `json:"client_id"`
	URL      string `json:"url"`
	// EventTypes are the subscribed types; empty means every page.* type.
	EventTypes []string `json:"event_types,omitempty"`
}

type notionSubscription struct {
	NotionSubscription
	id, token           string
	tokenSent, verified bool
	outbox              notionOutbox
	deliveries          []NotionDelivery
	windows             map[string]*notionWindow // aggregation, by page id
}

// notionWindow is the minute after a page's page.properties_updated event
// went out, during which its later edits are combined.
type notionWindow struct {
	until   time.Time
	pending *notionEvent
}

// notionEvent is an event as the docs' sample payloads show it
// (events-delivery, "Sample event payloads";
// https://developers.notion.com/reference/webhooks/page-properties-updated).
type notionEvent struct {
	ID             string          `json:"id"`
	Timestamp      string          `json:"timestamp"`
	WorkspaceID    string          `json:"workspace_id"`
	WorkspaceName  string          `json:"workspace_name"`
	SubscriptionID string          `json:"subscription_id"`
	IntegrationID  string          `json:"integration_id"`
	Type           string          `json:"type"`
	Authors        []notionAuthor  `json:"authors"`
	AccessibleBy   []notionAuthor  `json:"accessible_by"`
	AttemptNumber  int             `json:"attempt_number"`
	APIVersion     string          `json:"api_version"`
	Entity         notionAuthor    `json:"entity"`
	Data           notionEventData `json:"data"`
}

type notionEventData struct {
	Parent            notionAuthor `json:"parent"`
	UpdatedProperties []string     `json:"updated_properties,omitempty"`
}

// notionAuthor is an {"id", "type"} pair: an author, an entity, a parent.
type notionAuthor struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

func personAuthor() notionAuthor { return notionAuthor{ID: NotionPersonID, Type: "person"} }

// notionChange is one write to a page, for the senders: a creation, or the
// properties whose value changed.
type notionChange struct {
	page    *notionPage
	created bool
	props   []string
	author  notionAuthor
}

// changedLocked hands a change to the automations and the subscriptions.
func (n *Notion) changedLocked(c notionChange) {
	n.fireAutomationsLocked(c)
	n.queueEventsLocked(c)
}

// notionEventAttempts is the documented maximum: attempt_number is "A
// number ranged from 1 - 8" and Notion "will retry delivery up to 8 times
// using an exponential backoff schedule" (events-delivery, "Delivery
// retries").
const notionEventAttempts = 8

// Subscribe creates a subscription and sends its one-time verification
// request, {"verification_token": "secret_..."} (webhooks, "Step 2:
// Verifying the subscription"). No event is sent until VerifySubscription.
func (n *Notion) Subscribe(s NotionSubscription) string {
	s.EventTypes = slices.Clone(s.EventTypes)
	n.mu.Lock()
	defer n.mu.Unlock()
	sub := &notionSubscription{NotionSubscription: s, id: newUUID(), token: "secret_" + randomToken(43),
		windows: map[string]*notionWindow{}}
	n.hooks.subs[sub.id] = sub
	n.enqueueLocked(&sub.outbox, n.verificationJob(sub))
	return sub.id
}

// Unsubscribe deletes a subscription, as a person deleting it in the
// integration's Webhooks tab: nothing more is queued for it.
func (n *Notion) Unsubscribe(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.hooks.subs, id)
}

// ResendVerificationToken is the person clicking "Resend token" ("If you
// did not receive a verification_token, you can click Resend token",
// webhooks, Step 2).
func (n *Notion) ResendVerificationToken(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if sub := n.hooks.subs[id]; sub != nil {
		n.enqueueLocked(&sub.outbox, n.verificationJob(sub))
	}
}

// verificationJob POSTs the token once; it is not retried. It is signed
// like every event: Notion's SDK says "The initial verification-token
// handshake uses the same scheme, so one helper covers both"
// (makenotion/notion-sdk-js#722), and the docs' signing sample signs
// {"verification_token": ...} (webhooks, Step 3).
func (n *Notion) verificationJob(sub *notionSubscription) func() {
	return func() {
		body := compactJSON(map[string]string{"verification_token": sub.token})
		status, _ := n.post(sub.URL, signed(sub.token, body), body)
		n.mu.Lock()
		defer n.mu.Unlock()
		sub.tokenSent = sub.tokenSent || status != 0
	}
}

// SentVerificationToken returns the token the verification request
// carried to the receiver ("" until one answered it).
func (n *Notion) SentVerificationToken(id string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if sub := n.hooks.subs[id]; sub != nil && sub.tokenSent {
		return sub.token
	}
	return ""
}

// VerifySubscription is the person pasting the token into "Verify
// subscription": it must be the token sent. Once verified, the
// subscription receives events.
func (n *Notion) VerifySubscription(id, token string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	sub := n.hooks.subs[id]
	switch {
	case sub == nil:
		return fmt.Errorf("no subscription %q", id)
	case !sub.tokenSent:
		return adminBadRequest(errors.New("no verification token has reached the webhook URL yet"))
	case subtle.ConstantTimeCompare([]byte(token), []byte(sub.token)) != 1:
		return adminBadRequest(errors.New("invalid verification token"))
	}
	sub.verified = true
	return nil
}

// SubscriptionDeliveries returns the subscription's event delivery
// attempts, in order (the verification request is not among them).
func (n *Notion) SubscriptionDeliveries(id string) []NotionDelivery {
	n.mu.Lock()
	defer n.mu.Unlock()
	if sub := n.hooks.subs[id]; sub != nil {
		return slices.Clone(sub.deliveries)
	}
	return nil
}

// SetEventRetrySchedule sets the first wait before an event is sent again;
// it doubles at every attempt. The default, 680 s, puts the 8th attempt
// 127 × 680 s ≈ 24 h after the first: "The final retry attempt occurs
// approximately 24 hours after the initial event trigger" (events-delivery).
func (n *Notion) SetEventRetrySchedule(base time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hooks.eventRetryBase = base
}

// SetEventAggregation sets the window in which a page's later property
// edits are combined (1 minute).
func (n *Notion) SetEventAggregation(window time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hooks.window = window
}

// queueEventsLocked sends a change to every verified subscription that
// wants its type, once per workspace grant of its client: integration
// webhooks "can monitor activity across multiple workspaces"
// (https://www.notion.com/help/create-integrations-with-the-notion-api).
// The integration's own updates are sent to it too, authored by its bot
// (users had to filter them out of an "infinite task loop",
// KnoWhiz/DoWhiz#977). page.created goes out at once: "page.created
// webhook events now arrive right away, usually within a few seconds"
// (https://developers.notion.com/page/changelog?date=2026-10-15); a
// page.properties_updated is aggregated (aggregateLocked).
func (n *Notion) queueEventsLocked(c notionChange) {
	typ := "page.properties_updated"
	if c.created {
		typ = "page.created"
	} else if len(c.props) == 0 {
		return
	}
	for _, id := range slices.Sorted(maps.Keys(n.hooks.subs)) {
		sub := n.hooks.subs[id]
		g, live := n.grantLocked(sub.ClientID, c.page.workspace)
		if !sub.verified || !sub.wants(typ) || !live {
			continue
		}
		ev := n.newEventLocked(sub, g, typ, c)
		if c.created {
			n.enqueueLocked(&sub.outbox, n.eventJob(sub, *ev))
			continue
		}
		n.aggregateLocked(sub, ev)
	}
}

// wants reports whether the subscription has the event type ("Choose which
// event types you'd like to subscribe to", webhooks, Step 1).
func (s *notionSubscription) wants(typ string) bool {
	if len(s.EventTypes) == 0 {
		return strings.HasPrefix(typ, "page.")
	}
	return slices.Contains(s.EventTypes, typ)
}

// grantLocked finds a live grant (an access or refresh token) of the
// client for the workspace: without a connection, no events.
func (n *Notion) grantLocked(clientID, workspace string) (notionGrant, bool) {
	for _, grants := range []map[string]notionGrant{n.access, n.refresh} {
		for _, g := range grants {
			if g.clientID == clientID && g.workspace.ID == workspace {
				return g, true
			}
		}
	}
	return notionGrant{}, false
}

// newEventLocked builds the event of a change. accessible_by is "only
// populated for public integrations" (events-delivery, "Event
// properties"): the sandbox's are all OAuth, so public.
func (n *Notion) newEventLocked(sub *notionSubscription, g notionGrant, typ string, c notionChange) *notionEvent {
	p := c.page
	ev := &notionEvent{ID: newUUID(), Timestamp: p.edited.UTC().Format("2006-01-02T15:04:05.000Z"),
		WorkspaceID: g.workspace.ID, WorkspaceName: g.workspace.Name, SubscriptionID: sub.id,
		IntegrationID: sub.ClientID, Type: typ, Authors: []notionAuthor{c.author},
		AccessibleBy: []notionAuthor{personAuthor(), {ID: g.workspace.BotID, Type: "bot"}},
		APIVersion:   "2022-06-28", Entity: notionAuthor{ID: p.id, Type: "page"}}
	// A workspace page's parent is the "space" (the page.properties_updated
	// sample in events-delivery).
	ev.Data.Parent = notionAuthor{ID: g.workspace.ID, Type: "space"}
	switch {
	case p.parentDB != "":
		ev.Data.Parent = notionAuthor{ID: p.parentDB, Type: "database"}
	case p.parentPage != "":
		ev.Data.Parent = notionAuthor{ID: p.parentPage, Type: "page"}
	}
	if typ == "page.properties_updated" {
		db := n.state().databases[p.parentDB]
		for _, name := range c.props {
			ev.Data.UpdatedProperties = append(ev.Data.UpdatedProperties, notionPropertyID(name, db.props[name].Type))
		}
	}
	return ev
}

// aggregateLocked sends a page's first page.properties_updated at once and
// combines the page's edits of the minute after it into one event, sent
// when the minute is over: "The first page.properties_updated event for a
// page also arrives right away, and later property edits in the next
// minute are combined into one event"
// (https://developers.notion.com/page/changelog?date=2026-10-15, "Faster
// page webhooks"). The combined event's updated_properties is the union
// of its edits', its authors those of every edit ("more than 1 user makes
// changes in a short time window", events-delivery, authors).
func (n *Notion) aggregateLocked(sub *notionSubscription, ev *notionEvent) {
	w := sub.windows[ev.Entity.ID]
	now := time.Now()
	switch {
	case w == nil || !now.Before(w.until):
		sub.windows[ev.Entity.ID] = &notionWindow{until: now.Add(n.hooks.window)}
		n.enqueueLocked(&sub.outbox, n.eventJob(sub, *ev))
	case w.pending == nil:
		if !n.hooks.startLocked() {
			return
		}
		w.pending = ev
		go n.flushWindow(sub, ev.Entity.ID, w)
	default:
		w.pending.merge(ev)
	}
}

// merge folds a later edit into an aggregated event.
func (e *notionEvent) merge(later *notionEvent) {
	e.Timestamp = later.Timestamp
	for _, a := range later.Authors {
		if !slices.Contains(e.Authors, a) {
			e.Authors = append(e.Authors, a)
		}
	}
	for _, p := range later.Data.UpdatedProperties {
		if !slices.Contains(e.Data.UpdatedProperties, p) {
			e.Data.UpdatedProperties = append(e.Data.UpdatedProperties, p)
		}
	}
}

// flushWindow sends a window's combined event when the window closes.
func (n *Notion) flushWindow(sub *notionSubscription, pageID string, w *notionWindow) {
	defer n.hooks.workers.Done()
	open := n.sleep(time.Until(w.until))
	n.mu.Lock()
	defer n.mu.Unlock()
	if open {
		n.enqueueLocked(&sub.outbox, n.eventJob(sub, *w.pending))
	}
	if sub.windows[pageID] == w {
		delete(sub.windows, pageID)
	}
	n.hooks.doneLocked(1)
}

// eventJob delivers one event: success is a 200 answer, as each event's
// reference page asks ("Return an HTTP 200 status code to indicate that
// the data was received successfully",
// https://developers.notion.com/reference/webhooks/page-properties-updated;
// whether another 2xx counts is not documented, so the sandbox holds a
// receiver to the letter); otherwise it is
// sent again, the same event (same id) with attempt_number incremented,
// re-signed since the body changed, up to notionEventAttempts times.
func (n *Notion) eventJob(sub *notionSubscription, ev notionEvent) func() {
	return func() {
		n.mu.Lock()
		wait := n.hooks.eventRetryBase
		n.mu.Unlock()
		for attempt := 1; attempt <= notionEventAttempts; attempt++ {
			ev.AttemptNumber = attempt
			body := compactJSON(ev)
			status, answer := n.post(sub.URL, signed(sub.token, body), body)
			n.mu.Lock()
			sub.deliveries = append(sub.deliveries, NotionDelivery{Type: ev.Type, EntityID: ev.Entity.ID, EventID: ev.ID,
				Attempt: attempt, Status: status, Body: answer, Time: time.Now()})
			n.mu.Unlock()
			if status == http.StatusOK || attempt == notionEventAttempts || !n.sleep(wait) {
				return
			}
			wait *= 2
		}
	}
}

// signed is the X-Notion-Signature header: "sha256=" and the hex
// HMAC-SHA256 of the exact body, keyed by the verification token
// (webhooks, "Step 3: Validating event payloads").
func signed(token string, body []byte) http.Header {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write(body)
	return http.Header{"X-Notion-Signature": {"sha256=" + hex.EncodeToString(mac.Sum(nil))}}
}
