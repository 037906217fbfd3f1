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
	"context"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/arxivid"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/papers"
)

// notionFamily takes a NotionIntegration's Automation requests and the
// public integration's connection-webhook events; the integration
// connects to Notion under /oauth/notion/….
var notionFamily = Family{Name: "notion", Routes: func(d Deps) []Route {
	return []Route{
		{Pattern: "POST " + papers.WebhookPrefix + "{digest}", Handler: automation(d)},
		{Pattern: "POST " + papers.EventsPrefix + "{digest}", Handler: connectionEvents(d)},
	}
}, OAuth: &OAuthTarget{Target: targets.Notion, Success: notionSuccess}}

// notionSuccess follows seed 000 §3.1.2's page (the database and the next
// steps) with what the integration's status holds at this moment, and
// with the next steps Notion's real UI allows (the seed's "Send HTTP
// request" with a method and a body does not exist): nothing more, when
// the public integration's connection webhook is verified (the webhook
// keeps its token); else a database automation's "Send webhook", on a
// paid plan, with the hourly backfill as the floor. The callback answers
// at once rather than wait for the controller, so a database not found
// yet is shown as the kubectl command that will show it. The page does
// not refresh itself: its URL carries a state that was just consumed, so
// reloading it can only answer 403.
func notionSuccess(w io.Writer, d Deps, res *oauth.Resource, extra map[string]string) error {
	ni := res.Object.(*v1alpha1.NotionIntegration)
	key := types.NamespacedName{Namespace: ni.Namespace, Name: ni.Name}
	vars := map[string]any{
		"Workspace": extra["workspace_name"], "DatabaseURL": ni.Status.DatabaseURL, "WebhookURL": "",
		"Link": papers.LinkProperty(ni), "Backfill": spoken(ni.Spec.BackfillInterval.Duration),
		"Events": eventsVerified(d, ni), "Get": successVars("notionintegration", key),
	}
	if ni.Status.WebhookPath != "" {
		vars["WebhookURL"] = strings.TrimSuffix(d.PublicURL, "/") + ni.Status.WebhookPath
	}
	return notionSuccessPage.Execute(w, vars)
}

// spoken is a duration as a person says it: "an hour", "90 minutes".
func spoken(d time.Duration) string {
	switch {
	case d <= 0:
		return "an hour"
	case d == time.Hour:
		return "an hour"
	case d%time.Hour == 0:
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}

// eventsVerified: Notion has sent the public integration's connection
// webhook its verification token, so its events arrive.
func eventsVerified(d Deps, ni *v1alpha1.NotionIntegration) bool {
	if ni.Status.EventsPath == "" {
		return false
	}
	var sec corev1.Secret
	key := types.NamespacedName{Namespace: d.StateNamespace, Name: papers.VerificationSecretName(ni.Status.EventsPath)}
	return d.Client.Get(context.Background(), key, &sec) == nil && len(sec.Data[papers.VerificationTokenKey]) > 0
}

var notionSuccessPage = template.Must(template.New("notion-success").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Notion connected</title></head>
<body>
<h1>✅ Connected{{if .Workspace}} to {{.Workspace}}{{end}}</h1>
<p>Database: {{if .DatabaseURL}}<a href="{{.DatabaseURL}}" target="_blank">ArXiv Papers</a>{{else}}being prepared — its link appears in <code>{{.Get.KubectlGet}} -o jsonpath='{.status.databaseURL}'</code> within moments{{end}}</p>
<p>Status: <code>{{.Get.KubectlGet}}</code></p>
{{if .Events}}<h2>Next: nothing to set up</h2>
<p>Notion tells this server when a page changes. Paste an arXiv link into a page's {{.Link}}, and within a minute or two its Title, Authors, Summary and Publication Year are filled in.</p>
{{else}}<h2>Next</h2>
<p>Pages whose {{.Link}} holds an arXiv link are filled within {{.Backfill}}. To have them filled within seconds, on a paid Notion plan, add a database automation:</p>
<ol>
<li>Open the database in Notion and click ⚡ at its top, then New automation.</li>
<li>New trigger: Property edited, and choose {{.Link}}.</li>
<li>New action: Send webhook.</li>
<li>URL: <code>{{if .WebhookURL}}{{.WebhookURL}}{{else}}the public URL of this server followed by the path that <code>{{.Get.KubectlGet}} -o jsonpath='{.status.webhookPath}'</code> prints{{end}}</code></li>
<li>Under the page properties the webhook sends, tick {{.Link}}.</li>
<li>Click Create.</li>
</ol>
<p>There is no method or body to fill in: Notion sends the page itself.</p>
{{end}}<h2>Use</h2>
<ol><li>Add a page to the database.</li><li>Put an arXiv URL in {{.Link}}, e.g. https://arxiv.org/abs/2301.12345.</li><li>The title, authors, summary and year are filled in.</li></ol>
</body></html>
`))

// automation takes a Notion Automation's request on the integration's
// secret path, in Notion's "Send webhook" shape or the seed's body, and
// records it as a PaperSync. A failed delivery pauses the person's
// automation until they resume it by hand (notion.com/help/webhook-
// actions), so every request the route understood is answered 2xx: one
// it cannot act on (no Link, an empty or non-arXiv Link, a page of
// another database or workspace) is answered 200 "ignored" with the
// reason, counted and logged, and a non-arXiv Link is also a Warning
// Event on the integration, for the person to see; a suspended or not
// Ready integration gets its PaperSync, which waits for it. Only a
// request that is not an Automation's is refused: an unknown path (404),
// a body that is not JSON or names no page (400), too large (413), too
// fast (429).
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
		ev, e := parseAutomation(r, papers.LinkProperty(ni))
		if e != nil {
			return e
		}
		reply := notionReply{d: d, native: ev.native, w: w, r: r, route: routeAutomation, ni: ni, pageID: ev.pageID}
		switch {
		case ev.workspaceID != "" && ni.Status.WorkspaceID != "" && ev.workspaceID != ni.Status.WorkspaceID:
			return reply.ignored(reasonOtherWorkspace, "the body's workspace_id is not this integration's workspace")
		case otherDatabase(ni, ev.databaseID):
			return reply.ignored(reasonOtherDatabase, "the page is not in this integration's database")
		case !ev.linkSent:
			// The person did not tick the Link property under the action's
			// content: the manager reads the page for it.
			return reply.queue(papers.NewEventSync(ni, ev.pageID, v1alpha1.NotionPageEvent{ID: ev.eventID, Type: "automation"}))
		case ev.link == "":
			return reply.ignored(reasonLinkEmpty, "the page's "+papers.LinkProperty(ni)+" is empty")
		}
		arxivID, err := arxivid.ParseLink(ev.link)
		if err != nil {
			reply.warn("LinkNotArxiv", "page %s: %s is not an arXiv abstract or PDF URL: %.200q", ev.pageID, papers.LinkProperty(ni), ev.link)
			return reply.ignored(reasonNotArxiv, strings.TrimPrefix(err.Error(), arxivid.ErrNotArxiv.Error()+": "))
		}
		return reply.queue(papers.NewSync(ni, ev.pageID, ev.link, arxivID))
	}
}
