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
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/arxiv"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/papers"
)

func init() {
	Register(Family{Name: "notion", Routes: notionRoutes})
}

func notionRoutes(d Deps) []Route {
	return []Route{{Pattern: "POST " + papers.WebhookPrefix + "{digest}", Handler: automation(d)}}
}

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
		if err := d.Client.List(r.Context(), &list, client.MatchingFields{index.NotionWebhookPath: r.URL.Path}); err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return Errorf(http.StatusNotFound, "no integration listens on this path")
		}
		ni := &list.Items[0]

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
			return Errorf(http.StatusServiceUnavailable, "could not record the event; retry").WithCause(err)
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
	pageID = papers.NormalizeID(strings.TrimSpace(b.PageID))
	if pageID == "" {
		return "", "", Errorf(http.StatusBadRequest, "page_id is not a Notion page id").WithDetails(map[string]any{"field": "page_id"})
	}
	arxivID, err := arxiv.ParseLink(b.Link)
	if err != nil {
		return "", "", Errorf(http.StatusBadRequest, "link is not an arXiv abstract or PDF URL: %s", strings.TrimPrefix(err.Error(), arxiv.ErrNotArxiv.Error()+": ")).
			WithDetails(map[string]any{"field": "link"})
	}
	return pageID, arxivID, nil
}
