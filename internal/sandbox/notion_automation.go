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
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"
)

// This file is the database automations' "Send webhook" action, after
// "Webhook actions" (https://www.notion.com/help/webhook-actions);
// notion_events.go is the integrations' webhook subscriptions. The
// sending both share (notionHooks: queues, POST, Close) is at the end.

// NotionAutomation is a database automation whose one action is "Send
// webhook".
type NotionAutomation struct {
	DatabaseID string `json:"database_id"`
	URL        string `json:"url"`
	// Trigger is "page_added" (a person adds a page to the database) or
	// "property_edited" (a person edits any property of one of its pages).
	Trigger string `json:"trigger"`
	// Properties are the properties ticked under the action's content: in
	// a database automation "you can select properties for your webhook's
	// content" (help/webhook-actions).
	Properties []string `json:"properties,omitempty"`
	// Headers are the action's custom headers ("Add custom header").
	Headers map[string]string `json:"headers,omitempty"`
}

// NotionDelivery is one attempt to deliver a webhook.
type NotionDelivery struct {
	// Type and EntityID are the event's type and page, for subscriptions.
	Type     string `json:"type,omitempty"`
	EntityID string `json:"entity_id,omitempty"`
	EventID  string `json:"event_id"`
	Attempt  int    `json:"attempt"`
	// Status is the receiver's answer, 0 when it gave none (a transport
	// error or the timeout).
	Status int       `json:"status"`
	Body   string    `json:"body,omitempty"`
	Time   time.Time `json:"time"`
}

type notionAutomation struct {
	NotionAutomation
	id, actionID string
	paused       bool
	outbox       notionOutbox
	deliveries   []NotionDelivery
}

// automationBody is what the action POSTs. The help page shows no payload;
// this is the one a real delivery carried (captured 2026-05-15,
// https://github.com/helixml/helix/blob/3e80d66a2816ad853973c7c9dac50b70efbebb3a/api/pkg/trigger/notion/testdata/automation_webhook_create.json),
// which receivers validate: source.type == "automation", string
// automation_id, action_id and event_id, a number attempt
// (https://github.com/purduehackers/notion-automations/blob/main/src/utils/validator.ts).
type automationBody struct {
	Source struct {
		Type         string `json:"type"`
		AutomationID string `json:"automation_id"`
		ActionID     string `json:"action_id"`
		EventID      string `json:"event_id"`
		Attempt      int    `json:"attempt"`
	} `json:"source"`
	Data json.RawMessage `json:"data"`
}

// AddAutomation adds a database automation with a "Send webhook" action
// and returns its id. It panics on an unknown trigger, so that a typo fails
// the test rather than silently testing nothing.
func (n *Notion) AddAutomation(a NotionAutomation) string {
	if a.Trigger != "page_added" && a.Trigger != "property_edited" {
		panic(fmt.Sprintf("sandbox: automation trigger %q is neither page_added nor property_edited", a.Trigger))
	}
	a.DatabaseID = normID(a.DatabaseID)
	a.Properties = slices.Clone(a.Properties)
	a.Headers = maps.Clone(a.Headers)
	n.mu.Lock()
	defer n.mu.Unlock()
	auto := &notionAutomation{NotionAutomation: a, id: newUUID(), actionID: newUUID()}
	n.hooks.automations[auto.id] = auto
	return auto.id
}

// AutomationPaused reports whether a failed delivery paused the automation:
// "If your webhook action fails or doesn't work as expected, you'll see an
// exclamation mark next to where you set up the automation. The automation
// will automatically be paused, and you'll need to resume the automation
// manually to use it again." (help/webhook-actions).
func (n *Notion) AutomationPaused(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	a := n.hooks.automations[id]
	return a != nil && a.paused
}

// ResumeAutomation is the person resuming a paused automation. What
// happened while it was paused is not sent: a paused automation does not
// run.
func (n *Notion) ResumeAutomation(id string) { _ = n.resumeAutomation(id) }

func (n *Notion) resumeAutomation(id string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	a := n.hooks.automations[id]
	if a == nil {
		return fmt.Errorf("no automation %q", id)
	}
	a.paused = false
	return nil
}

// AutomationDeliveries returns the automation's delivery attempts, in
// order.
func (n *Notion) AutomationDeliveries(id string) []NotionDelivery {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a := n.hooks.automations[id]; a != nil {
		return slices.Clone(a.deliveries)
	}
	return nil
}

// fireAutomationsLocked runs the automations a change triggers. An
// integration's updates through the API run them too: "Flip a row to Go
// via API; confirm webhook fired"
// (https://github.com/helixml/helix/blob/7839b2aa06c206449b6cfcb9a9e77ea9d7c02857/design/tasks/002021_investigate-notion/tasks.md).
func (n *Notion) fireAutomationsLocked(c notionChange) {
	for _, id := range slices.Sorted(maps.Keys(n.hooks.automations)) {
		a := n.hooks.automations[id]
		if a.DatabaseID != c.page.parentDB || a.paused {
			continue
		}
		edited := !c.created && len(c.props) > 0
		if (a.Trigger == "page_added" && c.created) || (a.Trigger == "property_edited" && edited) {
			n.enqueueLocked(&a.outbox, n.automationJob(a, newUUID(), n.automationData(c.page, a.Properties)))
		}
	}
}

// automationData is the page as GET /v1/pages/{id} answers it, with only
// the ticked properties: "Only database page properties, not page
// contents, can be sent" (help/webhook-actions). As in the
// captured delivery (automationBody), the parent is in the 2025-09-03
// shape whatever version the integrations use, {"type": "data_source_id",
// "data_source_id", "database_id"}, there is no "archived" but
// "is_archived" and "is_locked", and a "request_id".
func (n *Notion) automationData(p *notionPage, ticked []string) json.RawMessage {
	obj := p.object(n.state())
	all, _ := obj["properties"].(map[string]any)
	props := map[string]any{}
	for _, name := range ticked {
		if v, ok := all[name]; ok {
			props[name] = v
		}
	}
	obj["properties"] = props
	obj["parent"] = map[string]any{"type": "data_source_id", "data_source_id": dataSourceID(p.parentDB), "database_id": p.parentDB}
	delete(obj, "archived")
	obj["is_archived"], obj["is_locked"], obj["request_id"] = false, false, newUUID()
	return compactJSON(obj)
}

// dataSourceID is the id of a database's one data source, made from the
// database's so that it is stable.
func dataSourceID(databaseID string) string {
	h := sha256.Sum256([]byte("data_source:" + databaseID))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// automationJob delivers one firing. The help page documents no retries
// (SetAutomationRetries adds them); the delivery that fails last pauses the
// automation, and a paused automation sends nothing more, queued firings
// included. No signature: "The Send webhook action doesn't require
// authentication." (help/webhook-actions).
func (n *Notion) automationJob(a *notionAutomation, eventID string, data json.RawMessage) func() {
	return func() {
		n.mu.Lock()
		attempts, wait := n.hooks.autoAttempts, n.hooks.autoRetryBase
		n.mu.Unlock()
		for attempt := 1; ; attempt++ {
			n.mu.Lock()
			paused := a.paused
			n.mu.Unlock()
			if paused {
				return
			}
			var body automationBody
			body.Source.Type, body.Source.AutomationID, body.Source.ActionID = "automation", a.id, a.actionID
			body.Source.EventID, body.Source.Attempt, body.Data = eventID, attempt, data
			status, answer := n.post(a.URL, automationHeader(a.Headers), compactJSON(body))
			n.mu.Lock()
			a.deliveries = append(a.deliveries, NotionDelivery{EventID: eventID, Attempt: attempt, Status: status, Body: answer, Time: time.Now()})
			last := attempt >= attempts
			if !delivered(status) && last {
				a.paused = true
			}
			n.mu.Unlock()
			if delivered(status) || last || !n.sleep(wait) {
				return
			}
			wait *= 2
		}
	}
}

// automationHeader is the captured delivery's (automationBody): User-Agent
// NotionAutomation, and the custom headers with their names as the person
// typed them.
func automationHeader(custom map[string]string) http.Header {
	h := http.Header{"User-Agent": {"NotionAutomation"}}
	for k, v := range custom {
		h[k] = []string{v}
	}
	return h
}

// delivered is Notion's success: a 2xx answer.
func delivered(status int) bool { return status >= 200 && status < 300 }

// SetAutomationRetries makes a failed automation delivery tried up to
// attempts times in all, waiting base, then twice as long each time, before
// the automation pauses (1 attempt: the help page documents none).
func (n *Notion) SetAutomationRetries(attempts int, base time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hooks.autoAttempts, n.hooks.autoRetryBase = max(attempts, 1), base
}
