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

package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/internal/upstream/arxivid"
	"github.com/switchboard-dev/switchboard/internal/upstream/notionid"
)

// automationEvent is what one request of a Notion Automation says, in
// either of the two shapes the route takes:
//
//   - Notion's own "Send webhook" action (notion.com/help/webhook-actions):
//     {"source": {"type": "automation", "automation_id", "action_id",
//     "event_id", "attempt"}, "data": <the page object, with only the
//     properties the person ticked>}. Notion lets a person pick the URL,
//     custom headers and the properties, never a method or a body.
//   - the body of seed 000 §3.3.1, {"workspace_id", "page_id", "link"},
//     for senders that can write one (Zapier, Make, a script).
type automationEvent struct {
	// native is Notion's envelope.
	native bool
	// eventID is Notion's source.event_id, or a digest of the body when
	// the sender gives none: retries of one event carry the same.
	eventID string
	// pageID is normalised; "" when the request names no valid page.
	pageID string
	// databaseID is the page's database (data.parent), normalised; ""
	// when the request does not say.
	databaseID string
	// workspaceID is the seed body's workspace_id.
	workspaceID string
	// link is the Link's text; linkSent says the request carried the
	// property (or field) at all.
	link     string
	linkSent bool
}

// automationBody holds both shapes; which fields are present says which.
type automationBody struct {
	Source *struct {
		Type    string `json:"type"`
		EventID string `json:"event_id"`
	} `json:"source"`
	Data *struct {
		Object string `json:"object"`
		ID     string `json:"id"`
		Parent struct {
			DatabaseID string `json:"database_id"`
		} `json:"parent"`
		Properties map[string]json.RawMessage `json:"properties"`
	} `json:"data"`

	WorkspaceID *string `json:"workspace_id"`
	PageID      *string `json:"page_id"`
	Link        *string `json:"link"`
}

// parseAutomation reads an Automation request. It answers 400 only for a
// body that names no page in either shape: that is not a request Notion
// or a configured sender makes.
func parseAutomation(r *http.Request, linkProperty string) (automationEvent, *Error) {
	raw, e := readBody(r)
	if e != nil {
		return automationEvent{}, e
	}
	var b automationBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return automationEvent{}, Errorf(http.StatusBadRequest, "request body is not a JSON object").WithCause(err)
	}
	var ev automationEvent
	switch {
	case b.Data != nil && b.Data.Object == "page":
		ev.native = true
		if b.Source != nil && b.Source.EventID != "" && len(b.Source.EventID) <= 128 {
			ev.eventID = b.Source.EventID
		}
		ev.pageID = notionid.Normalize(b.Data.ID)
		ev.databaseID = notionid.Normalize(b.Data.Parent.DatabaseID)
		if v, ok := b.Data.Properties[linkProperty]; ok {
			ev.link, ev.linkSent = propertyText(v), true
		}
	case b.PageID != nil:
		ev.pageID = notionid.Normalize(strings.TrimSpace(*b.PageID))
		if b.WorkspaceID != nil {
			ev.workspaceID = strings.TrimSpace(*b.WorkspaceID)
		}
		if b.Link != nil {
			ev.link, ev.linkSent = strings.TrimSpace(*b.Link), true
		}
	}
	if ev.eventID == "" {
		ev.eventID = bodyDigest(raw)
	}
	if ev.pageID == "" {
		return automationEvent{}, Errorf(http.StatusBadRequest,
			"the body names no Notion page: send Notion's \"Send webhook\" content, or {\"workspace_id\", \"page_id\", \"link\"}").
			WithDetails(map[string]any{"field": "page_id"})
	}
	return ev, nil
}

// bodyDigest names an event its sender gave no id: retries of one body
// are one event.
func bodyDigest(raw []byte) string {
	sum := sha256.Sum256(raw)
	return "body-" + hex.EncodeToString(sum[:12])
}

// propertyValue is a page property value as the Notion API shapes it
// (developers.notion.com/reference/page-property-values): a URL property
// {"type": "url", "url": "https://…"}, a text one {"type": "rich_text",
// "rich_text": [{"plain_text", "href"}…]}, a title alike.
type propertyValue struct {
	Type     string     `json:"type"`
	URL      *string    `json:"url"`
	RichText []textItem `json:"rich_text"`
	Title    []textItem `json:"title"`
}

type textItem struct {
	PlainText string  `json:"plain_text"`
	Href      *string `json:"href"`
}

// propertyText is the link a property holds: a URL property's URL; a text
// property's text, or, when its text is not a link (a person pasted a link
// and Notion shows it as a titled mention), the first item's href.
func propertyText(raw json.RawMessage) string {
	var v propertyValue
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	if v.URL != nil {
		return strings.TrimSpace(*v.URL)
	}
	items := v.RichText
	if v.Type == "title" {
		items = v.Title
	}
	plain, hrefs := make([]string, len(items)), make([]string, 0, len(items))
	for i, it := range items {
		plain[i] = it.PlainText
		if it.Href != nil {
			hrefs = append(hrefs, *it.Href)
		}
	}
	return arxivid.LinkInText(plain, hrefs)
}
