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

package notion

import (
	"context"
	"fmt"

	"github.com/jomei/notionapi"

	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/notionid"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Finding the papers database (seed 000 §3.2.2) among what the search
// answers: by the id found before, by name, in the duplicated template.

// find is the database FindOrCreateDatabase takes, or nil when it must
// create one.
func (c *Client) find(ctx context.Context, api *notionapi.Client, spec DatabaseSpec) (*notionapi.Database, error) {
	if spec.PinnedID != "" {
		db, err := api.Database.Get(ctx, notionapi.DatabaseID(spec.PinnedID))
		return db, classify("retrieve database "+spec.PinnedID, err)
	}
	var known *notionapi.Database
	if spec.KnownID != "" {
		db, err := api.Database.Get(ctx, notionapi.DatabaseID(spec.KnownID))
		switch err := classify("retrieve database "+spec.KnownID, err); {
		case err == nil && !db.Archived && plain(db.Title) == spec.Name:
			return db, nil
		case err == nil && !db.Archived:
			known = db // renamed in Notion, or the spec names another
		case err != nil && !IsNotFound(err):
			return nil, err
		}
		// Deleted, archived or no longer shared: looked for again.
	}
	db, err := c.findByName(ctx, api, spec.Name, spec.TemplateID)
	switch {
	case err != nil || db != nil:
		return db, err
	case known != nil:
		return known, nil // a renamed database is kept, not made again
	case spec.TemplateID == "":
		return nil, nil
	}
	return c.findInTemplate(ctx, api, spec.TemplateID)
}

// findInTemplate is the most recently edited database inside the
// duplicated template, whatever its name: the template's "ArXiv Papers"
// after a person renamed it. The template is this grant's own page, so
// what lies in it is this integration's.
func (c *Client) findInTemplate(ctx context.Context, api *notionapi.Client, templateID string) (*notionapi.Database, error) {
	var found *notionapi.Database
	err := searchAll(ctx, api, &notionapi.SearchRequest{
		Filter:   notionapi.SearchFilter{Property: "object", Value: "database"},
		Sort:     &notionapi.SortObject{Direction: notionapi.SortOrderDESC, Timestamp: notionapi.TimestampLastEdited},
		PageSize: 100,
	}, "search databases", func(o notionapi.Object) bool {
		d, ok := o.(*notionapi.Database)
		if ok && !d.Archived && notionid.Normalize(string(d.Parent.PageID)) == notionid.Normalize(templateID) {
			found = d
		}
		return found != nil
	})
	return found, err
}

// findByName reads the search for databases named name to its end: the
// one inside the duplicated template if there is one, else the most
// recently edited. A page of results may hold fewer than page_size
// results, none even, while more remain
// (https://developers.notion.com/reference/pagination): only has_more
// says the list is complete, so nothing is created while a page is unread.
func (c *Client) findByName(ctx context.Context, api *notionapi.Client, name, templateID string) (*notionapi.Database, error) {
	var newest *notionapi.Database
	req := &notionapi.SearchRequest{
		Query:    name,
		Filter:   notionapi.SearchFilter{Property: "object", Value: "database"},
		Sort:     &notionapi.SortObject{Direction: notionapi.SortOrderDESC, Timestamp: notionapi.TimestampLastEdited},
		PageSize: 100,
	}
	err := searchAll(ctx, api, req, "search databases", func(o notionapi.Object) bool {
		d, ok := o.(*notionapi.Database)
		if !ok || plain(d.Title) != name || d.Archived {
			return false
		}
		if templateID != "" && notionid.Normalize(string(d.Parent.PageID)) == notionid.Normalize(templateID) {
			newest = d
			return true
		}
		if newest == nil {
			newest = d // results are most recently edited first
		}
		return templateID == "" // without a template the first is the one
	})
	return newest, err
}

// searchAll runs a search page after page until visit says it has what it
// wants or the list ends. More than maxSearchPages pages is an error, not
// a partial answer.
func searchAll(ctx context.Context, api *notionapi.Client, req *notionapi.SearchRequest, what string, visit func(notionapi.Object) bool) error {
	for range maxSearchPages {
		res, err := api.Search.Do(ctx, req)
		if err != nil {
			return classify(what, err)
		}
		for _, o := range res.Results {
			if visit(o) {
				return nil
			}
		}
		if !res.HasMore || res.NextCursor == "" {
			return nil
		}
		req.StartCursor = res.NextCursor
	}
	return &outbound.Error{Upstream: upstream.Notion, Class: outbound.Permanent,
		Reason: fmt.Sprintf("%s: more than %d pages of results; set spec.database.id or spec.database.parentPageID", what, maxSearchPages)}
}
