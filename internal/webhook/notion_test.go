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
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/upstream/notionid"
)

// FuzzAutomationBody: whatever arrives, the Automation route either
// refuses it with a 400 in the common format (it names no page in either
// shape) or reads a normalised page id, and a Link only when one was sent.
func FuzzAutomationBody(f *testing.F) {
	f.Add(`{"workspace_id":"w","page_id":"1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f","link":"https://arxiv.org/abs/2301.12345"}`)
	f.Add(`{"workspace_id":"w","page_id":"1c2d3e4f5a6b4c7d8e9f0a1b2c3d4e5f","link":"http://arxiv.org/pdf/hep-th/9901001v2.pdf"}`)
	f.Add(`{"source":{"type":"automation","event_id":"e1","attempt":1},"data":{"object":"page","id":"1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",` +
		`"parent":{"type":"data_source_id","data_source_id":"x","database_id":"0c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"},` +
		`"properties":{"Link":{"id":"%3AUPp","type":"url","url":"https://arxiv.org/abs/2301.12345"}}}}`)
	f.Add(`{"source":{"type":"automation"},"data":{"object":"page","id":"1c2d3e4f5a6b4c7d8e9f0a1b2c3d4e5f",` +
		`"properties":{"Link":{"type":"rich_text","rich_text":[{"plain_text":"the paper","href":"https://arxiv.org/abs/2301.12345"}]}}}}`)
	f.Add(`{"page_id":"x","link":""}`)
	f.Add(`{"workspace_id":1}`)
	f.Fuzz(func(t *testing.T, raw string) {
		r := httptest.NewRequest(http.MethodPost, "/notion/webhook/x", strings.NewReader(raw))
		ev, e := parseAutomation(r, "Link")
		if e != nil {
			if e.Status != http.StatusBadRequest || e.Code != "" && e.Code != CodeInvalidRequest || e.Message == "" {
				t.Fatalf("refusal %+v", e)
			}
			return
		}
		if ev.pageID == "" || notionid.Normalize(ev.pageID) != ev.pageID || ev.eventID == "" || (!ev.linkSent && ev.link != "") {
			t.Fatalf("accepted %q as %+v", raw, ev)
		}
	})
}

// The Link of Notion's envelope is read from the ticked property, a URL
// property or a text one (a pasted link shown as a titled mention keeps
// it in href); a property that was not ticked is not sent.
func TestTheEnvelopesLinkIsReadFromTheTickedProperty(t *testing.T) {
	page := `"object":"page","id":"1c2d3e4f5a6b4c7d8e9f0a1b2c3d4e5f","parent":{"type":"data_source_id","data_source_id":"d","database_id":"0C2D3E4F5A6B4C7D8E9F0A1B2C3D4E5F"}`
	for _, c := range []struct{ name, props, link string }{
		{"url", `{"Link":{"id":"a","type":"url","url":" https://arxiv.org/abs/2301.12345 "}}`, "https://arxiv.org/abs/2301.12345"},
		{"empty url", `{"Link":{"id":"a","type":"url","url":null}}`, ""},
		{"text", `{"Link":{"type":"rich_text","rich_text":[{"plain_text":"https://arxiv.org/"},{"plain_text":"abs/2301.12345"}]}}`, "https://arxiv.org/abs/2301.12345"},
		{"mention", `{"Link":{"type":"rich_text","rich_text":[{"plain_text":"Attention","href":"https://arxiv.org/abs/1706.03762"}]}}`, "https://arxiv.org/abs/1706.03762"},
		{"empty text", `{"Link":{"type":"rich_text","rich_text":[]}}`, ""},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"source":{"type":"automation","event_id":"ev"},"data":{`+page+`,"properties":`+c.props+`}}`))
		ev, e := parseAutomation(r, "Link")
		if e != nil || !ev.native || !ev.linkSent || ev.link != c.link || ev.eventID != "ev" ||
			ev.databaseID != "0c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f" || ev.pageID != "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f" {
			t.Fatalf("%s: %+v, %v", c.name, ev, e)
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"source":{"type":"automation"},"data":{`+page+`,"properties":{"Title":{"type":"title","title":[]}}}}`))
	if ev, e := parseAutomation(r, "Link"); e != nil || ev.linkSent || !strings.HasPrefix(ev.eventID, "body-") {
		t.Fatalf("Link not ticked: %+v, %v", ev, e)
	}
}
