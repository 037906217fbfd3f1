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
	"errors"
	"html/template"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/arxivid"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/notionid"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/papers"
)

// notionFamily takes a NotionIntegration's Automation events; the
// integration connects to Notion under /oauth/notion/….
var notionFamily = Family{Name: "notion", Routes: oneRoute("POST "+papers.WebhookPrefix+"{digest}", automation),
	OAuth: &OAuthTarget{Target: targets.Notion, Success: notionSuccess}}

// notionSuccess follows seed 000 §3.1.2's page (the database, the webhook
// URL, the Automation steps) with what the integration's status holds at
// this moment: the callback answers at once rather than wait for the
// controller, so a database not found yet is shown as the kubectl command
// that will show it. The webhook URL is shown only when the status already
// holds its path; the person reading it has just proven the connect token.
// The page does not refresh itself: its URL carries a state that was just
// consumed, so reloading it can only answer 403.
func notionSuccess(w io.Writer, d Deps, res *oauth.Resource, extra map[string]string) error {
	ni := res.Object.(*v1alpha1.NotionIntegration)
	key := types.NamespacedName{Namespace: ni.Namespace, Name: ni.Name}
	vars := map[string]any{
		"Workspace": extra["workspace_name"], "WorkspaceID": extra["workspace_id"],
		"DatabaseURL": ni.Status.DatabaseURL, "WebhookURL": "", "Get": successVars("notionintegration", key),
	}
	if ni.Status.WebhookPath != "" {
		vars["WebhookURL"] = strings.TrimSuffix(d.PublicURL, "/") + ni.Status.WebhookPath
	}
	return notionSuccessPage.Execute(w, vars)
}

var notionSuccessPage = template.Must(template.New("notion-success").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Notion connected</title></head>
<body>
<h1>✅ Connected{{if .Workspace}} to {{.Workspace}}{{end}}</h1>
<p>Database: {{if .DatabaseURL}}<a href="{{.DatabaseURL}}" target="_blank">ArXiv Papers</a>{{else}}being prepared — its link appears in <code>{{.Get.KubectlGet}} -o jsonpath='{.status.databaseURL}'</code> within moments{{end}}</p>
<p>Status: <code>{{.Get.KubectlGet}}</code></p>
<h2>Next: a Notion Automation</h2>
<ol>
<li>Open the database in Notion.</li>
<li>“…” → Automations → New automation.</li>
<li>Trigger: When a page is updated (optionally: when Link changes).</li>
<li>Action: Send HTTP request.</li>
<li>URL: <code>{{if .WebhookURL}}{{.WebhookURL}}{{else}}the public URL of this server followed by the path that <code>{{.Get.KubectlGet}} -o jsonpath='{.status.webhookPath}'</code> prints{{end}}</code></li>
<li>Method: <code>POST</code>, header <code>Content-Type: application/json</code></li>
<li>Body: <code>{"workspace_id": "{{.WorkspaceID}}", "page_id": "{{"{{"}}page_id{{"}}"}}", "link": "{{"{{"}}Link{{"}}"}}"}</code></li>
</ol>
<h2>Use</h2>
<ol><li>Add a page to the database.</li><li>Put an arXiv URL in Link, e.g. https://arxiv.org/abs/2301.12345.</li><li>Seconds later the title, authors, summary and year are filled in.</li></ol>
</body></html>
`))

// automationBody is what the Notion Automation posts (seed 000 §3.3.1).
type automationBody struct {
	WorkspaceID string `json:"workspace_id"`
	PageID      string `json:"page_id"`
	Link        string `json:"link"`
}

// automation accepts a Notion Automation event: it finds the integration
// by its secret path, validates the body and the arXiv link, and records
// the work as a PaperSync before answering 202. The controllers do the
// rest; a repeated event is the same PaperSync.
func automation(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var list v1alpha1.NotionIntegrationList
		if err := d.routed(r.Context(), &list, index.NotionWebhookPath, r.URL.Path); err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return Errorf(http.StatusNotFound, "no integration listens on this path")
		}
		ni := &list.Items[0]
		if e := NotServing("integration", ni, ni.Spec.Suspend); e != nil {
			return e
		}

		var body automationBody
		if e := DecodeJSON(r, &body); e != nil {
			return e
		}
		if ni.Status.WorkspaceID != "" && body.WorkspaceID != "" && body.WorkspaceID != ni.Status.WorkspaceID {
			return Errorf(http.StatusNotFound, "no integration for this workspace on this path")
		}
		pageID, arxivID, e := body.validate()
		if e != nil {
			return e
		}
		ps := papers.NewSync(ni, pageID, body.Link, arxivID)
		if err := d.Client.Create(r.Context(), ps); err != nil && !apierrors.IsAlreadyExists(err) {
			var st apierrors.APIStatus
			if errors.As(err, &st) && apierrors.IsInvalid(err) {
				return Errorf(http.StatusBadRequest, "the event was refused: %s", st.Status().Message)
			}
			return Unavailable(DefaultRetryAfter, "could not record the event; retry").WithCause(err)
		}
		WriteJSON(w, http.StatusAccepted, map[string]any{
			"success": true, "page_id": pageID, "arxiv_id": arxivID, "paper_sync": ps.Name,
			"accepted_at": time.Now().UTC().Format(time.RFC3339Nano),
		})
		return nil
	}
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// validate checks an Automation body (seed 000 §3.3.1): the three fields
// present, a Notion page id, an arXiv link it can take an id from. It
// returns the normalised page id and the arXiv id.
func (b automationBody) validate() (pageID, arxivID string, _ *Error) {
	var missing []string
	for name, v := range map[string]string{"workspace_id": b.WorkspaceID, "page_id": b.PageID, "link": b.Link} {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return "", "", Errorf(http.StatusBadRequest, "workspace_id, page_id and link are required").
			WithDetails(map[string]any{"missing": sorted(missing)})
	}
	pageID = notionid.Normalize(strings.TrimSpace(b.PageID))
	if pageID == "" {
		return "", "", Errorf(http.StatusBadRequest, "page_id is not a Notion page id").WithDetails(map[string]any{"field": "page_id"})
	}
	arxivID, err := arxivid.ParseLink(b.Link)
	if err != nil {
		return "", "", Errorf(http.StatusBadRequest, "link is not an arXiv abstract or PDF URL: %s", strings.TrimPrefix(err.Error(), arxivid.ErrNotArxiv.Error()+": ")).
			WithDetails(map[string]any{"field": "link"})
	}
	return pageID, arxivID, nil
}
