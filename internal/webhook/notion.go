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
	"strings"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxivid"
)

// The Notion routes find the integration in the cache by its path and
// record each event as a PaperSync (a create, never a read).
// +kubebuilder:rbac:groups=switchboard.dev,resources=notionintegrations,verbs=get;list;watch
// +kubebuilder:rbac:groups=switchboard.dev,resources=papersyncs,verbs=create

// The notion family takes a NotionIntegration's Automation requests and the
// public integration's connection-webhook events; the integration
// connects to Notion under /oauth/notion/….
var _ = family(Family{Name: "notion", Routes: func(d Deps) []Route {
	return []Route{
		{Pattern: "POST " + papers.WebhookPrefix + "{digest}", Handler: automation(d)},
		{Pattern: "POST " + papers.EventsPrefix + "{digest}", Handler: connectionEvents(d)},
	}
}, OAuth: &OAuthTarget{Target: targets.Notion, Success: notionSuccess}})

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
		if err := d.routed(r.Context(), &list, index.RoutePaths, r.URL.Path); err != nil {
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
