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
	"encoding/json"
	"net/http"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/arxivid"
	"github.com/switchboard-dev/switchboard/internal/notionid"
)

// FuzzAutomationBody: whatever JSON arrives, validation either refuses it
// with a 400 in the common format or yields a normalised page id and a
// valid arXiv id.
func FuzzAutomationBody(f *testing.F) {
	f.Add(`{"workspace_id":"w","page_id":"1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f","link":"https://arxiv.org/abs/2301.12345"}`)
	f.Add(`{"workspace_id":"w","page_id":"1c2d3e4f5a6b4c7d8e9f0a1b2c3d4e5f","link":"http://arxiv.org/pdf/hep-th/9901001v2.pdf"}`)
	f.Add(`{"page_id":"x","link":""}`)
	f.Add(`{"workspace_id":1}`)
	f.Fuzz(func(t *testing.T, raw string) {
		var b automationBody
		if json.Unmarshal([]byte(raw), &b) != nil {
			return
		}
		pageID, arxivID, e := b.validate()
		if e != nil {
			if e.Status != http.StatusBadRequest || e.Code != CodeInvalidRequest || e.Message == "" {
				t.Fatalf("refusal %+v", e)
			}
			return
		}
		if notionid.Normalize(pageID) != pageID || !arxivid.ValidID(arxivID) {
			t.Fatalf("accepted %q → page %q arXiv %q", raw, pageID, arxivID)
		}
	})
}
