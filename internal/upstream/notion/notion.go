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

// Package notion is the part of the Notion API the controllers use (seed
// 000 §3.2, §3.6), on github.com/jomei/notionapi through the outbound
// policy: find or create the "ArXiv Papers" database, repair its schema,
// write a paper to a page, and list pages whose metadata is missing.
package notion

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/jomei/notionapi"

	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Property names of the papers database (seed 000 §3.2.1).
const (
	PropTitle   = "Title"
	PropAuthors = "Authors"
	PropSummary = "Summary"
	PropLink    = "Link"
	PropYear    = "Publication Year"
)

// maxSearchPages bounds a search read to its end: 100 pages of 100.
const maxSearchPages = 100

// Schema is the seed's property set (seed 000 §3.2.3), with the Link
// property under the name link (PropLink unless the spec says).
func Schema(link string) notionapi.PropertyConfigs {
	return notionapi.PropertyConfigs{
		PropTitle:   notionapi.TitlePropertyConfig{Type: notionapi.PropertyConfigTypeTitle},
		PropAuthors: notionapi.RichTextPropertyConfig{Type: notionapi.PropertyConfigTypeRichText},
		PropSummary: notionapi.RichTextPropertyConfig{Type: notionapi.PropertyConfigTypeRichText},
		link:        notionapi.URLPropertyConfig{Type: notionapi.PropertyConfigTypeURL},
		PropYear:    notionapi.NumberPropertyConfig{Type: notionapi.PropertyConfigTypeNumber, Number: notionapi.NumberFormat{Format: notionapi.FormatNumber}},
	}
}

// Database is what the integration's status shows.
type Database struct {
	ID, URL string
	Created bool
	// Added lists the properties repaired into an existing database.
	Added []string
}

// Paper is what is written to a page (seed 000 §3.6.1).
type Paper struct {
	Title, Summary, Link string
	Authors              []string
	Year                 int
}

// Client makes Notion API calls with one integration's access token.
type Client struct {
	Out *outbound.Client
}

func (c *Client) api(token string) *notionapi.Client {
	hc := c.Out.HTTPClientFor(upstream.Notion, "https://api.notion.com")
	hc.Transport = retryAfterTransport{next: hc.Transport}
	// WithRetry(1): a 429 comes back to the controller, which owns backoff.
	return notionapi.NewClient(notionapi.Token(token), notionapi.WithHTTPClient(hc), notionapi.WithRetry(1))
}

// DatabaseSpec is which database to find or create: its name, a pinned
// id, the id found before (KnownID, from the status: kept through a
// rename), the duplicated template, the page to create it under, and the
// name of its Link property.
type DatabaseSpec struct {
	Name, PinnedID, KnownID, TemplateID, ParentPage, LinkProperty string
}

// FindOrCreateDatabase finds the papers database (seed 000 §3.2.2): the
// pinned id if given; else the id found before, while it is there and
// still named name; else, among databases named name, one inside the
// duplicated template, else the most recently edited; else the one found
// before under its new name (a person renamed it); else a database inside
// the duplicated template under another name; else it creates one (§3.2.3) under parentPage, else the template, else
// the first page the integration can reach. Missing properties are added
// to a found database.
func (c *Client) FindOrCreateDatabase(ctx context.Context, token string, spec DatabaseSpec) (Database, error) {
	if spec.LinkProperty == "" {
		spec.LinkProperty = PropLink
	}
	ctx, ra := withRetryAfter(ctx)
	db, err := c.findOrCreate(ctx, token, spec)
	if e, ok := outbound.Classify(err); ok && e.Status == http.StatusTooManyRequests && e.RetryAfter == 0 {
		e.RetryAfter = *ra
	}
	return db, err
}

func (c *Client) findOrCreate(ctx context.Context, token string, spec DatabaseSpec) (Database, error) {
	api := c.api(token)
	db, err := c.find(ctx, api, spec)
	if err != nil {
		return Database{}, err
	}
	if db == nil {
		return c.create(ctx, api, spec)
	}
	added, err := c.repair(ctx, api, db, spec.LinkProperty)
	if err != nil {
		return Database{}, err
	}
	return Database{ID: string(db.ID), URL: db.URL, Added: added}, nil
}

func (c *Client) create(ctx context.Context, api *notionapi.Client, spec DatabaseSpec) (Database, error) {
	parent := spec.ParentPage
	if parent == "" {
		parent = spec.TemplateID
	}
	if parent == "" {
		found, err := firstPage(ctx, api)
		if err != nil {
			return Database{}, err
		}
		parent = found
	}
	name := spec.Name
	db, err := api.Database.Create(ctx, &notionapi.DatabaseCreateRequest{
		Parent:     notionapi.Parent{Type: notionapi.ParentTypePageID, PageID: notionapi.PageID(parent)},
		Title:      []notionapi.RichText{{Type: notionapi.ObjectTypeText, Text: &notionapi.Text{Content: name}}},
		Properties: Schema(spec.LinkProperty),
	})
	if err != nil {
		return Database{}, classify("create database under page "+parent, err)
	}
	return Database{ID: string(db.ID), URL: db.URL, Created: true}, nil
}

// firstPage is the page to create the database under when neither the
// spec nor a template names one: the first page the person shared with
// the integration (seed 000 §3.1.2 step 6, "the first accessible page"),
// the earliest edited first. A top-level page is taken when there is one,
// as before; otherwise any page that is not a database's row, such as a
// sub-page picked under "Select pages" at consent: Notion creates a
// database under any page the integration can reach
// (developers.notion.com/reference/create-a-database: parent page_id).
func firstPage(ctx context.Context, api *notionapi.Client) (string, error) {
	var top, sub string
	err := searchAll(ctx, api, &notionapi.SearchRequest{
		Filter:   notionapi.SearchFilter{Property: "object", Value: "page"},
		Sort:     &notionapi.SortObject{Direction: notionapi.SortOrderASC, Timestamp: notionapi.TimestampLastEdited},
		PageSize: 100,
	}, "search pages", func(o notionapi.Object) bool {
		p, ok := o.(*notionapi.Page)
		if !ok || p.Archived {
			return false
		}
		switch p.Parent.Type {
		case notionapi.ParentTypeWorkspace:
			top = string(p.ID)
			return true
		case notionapi.ParentTypePageID, notionapi.ParentTypeBlockID:
			if sub == "" {
				sub = string(p.ID)
			}
		}
		return false
	})
	switch {
	case err != nil:
		return "", err
	case top != "":
		return top, nil
	case sub != "":
		return sub, nil
	}
	return "", &outbound.Error{Upstream: upstream.Notion, Class: outbound.Permanent,
		Reason: "no page is shared with the integration to create the database under; share a page or set spec.database.parentPageID"}
}

// repair adds the seed's properties a database lacks. The Link property
// may be a URL or a text property: people paste links into either.
func (c *Client) repair(ctx context.Context, api *notionapi.Client, db *notionapi.Database, link string) ([]string, error) {
	missing := notionapi.PropertyConfigs{}
	var names []string
	for name, cfg := range Schema(link) {
		have, ok := db.Properties[name]
		if ok && have.GetType() == cfg.GetType() {
			continue
		}
		if ok && name == link && have.GetType() == notionapi.PropertyConfigTypeRichText {
			continue
		}
		if ok {
			want := string(cfg.GetType())
			if name == link {
				want = "url or rich_text"
			}
			return nil, &outbound.Error{Upstream: upstream.Notion, Class: outbound.Permanent,
				Reason: fmt.Sprintf("database property %q is a %s, want %s; rename or fix it in Notion", name, have.GetType(), want)}
		}
		if cfg.GetType() == notionapi.PropertyConfigTypeTitle {
			// A database has exactly one title property; Notion cannot add a
			// second, and renaming the user's would surprise them.
			return nil, &outbound.Error{Upstream: upstream.Notion, Class: outbound.Permanent,
				Reason: fmt.Sprintf("the database's title property is not named %q; rename it in Notion", name)}
		}
		missing[name] = cfg
		names = append(names, name)
	}
	if len(missing) == 0 {
		return nil, nil
	}
	if _, err := api.Database.Update(ctx, notionapi.DatabaseID(db.ID), &notionapi.DatabaseUpdateRequest{Properties: missing}); err != nil {
		return nil, classify("add properties to database", err)
	}
	return names, nil
}

// UpdatePaper writes a paper to a page (seed 000 §3.6.1). The Link is not
// written back: the seed writes the link the page already holds, which
// changes nothing a person sees, while a write to Link is an edit of it
// that connection webhooks report, and a text Link would need another
// shape.
func (c *Client) UpdatePaper(ctx context.Context, token, pageID string, p Paper) error {
	year := float64(p.Year)
	props := notionapi.Properties{
		PropTitle:   notionapi.TitleProperty{Title: []notionapi.RichText{{Type: notionapi.ObjectTypeText, Text: &notionapi.Text{Content: Truncate(p.Title)}}}},
		PropAuthors: notionapi.RichTextProperty{RichText: Chunks(strings.Join(p.Authors, ", "))},
		PropSummary: notionapi.RichTextProperty{RichText: Chunks(p.Summary)},
		PropYear:    notionapi.NumberProperty{Number: year},
	}
	ctx, ra := withRetryAfter(ctx)
	_, err := c.api(token).Page.Update(ctx, notionapi.PageID(pageID), &notionapi.PageUpdateRequest{Properties: props})
	return classify("update page "+pageID, err, ra)
}

// PageLink is a page whose Link is set.
type PageLink struct{ PageID, Link string }

// PagesMissingMetadata lists pages whose Link (the property named link)
// is set but whose Title or Publication Year is empty: events the webhook
// never received.
func (c *Client) PagesMissingMetadata(ctx context.Context, token, databaseID, link string) ([]PageLink, error) {
	api := c.api(token)
	req := &notionapi.DatabaseQueryRequest{
		Filter: notionapi.AndCompoundFilter{
			notionapi.PropertyFilter{Property: link, RichText: &notionapi.TextFilterCondition{IsNotEmpty: true}},
			notionapi.OrCompoundFilter{
				notionapi.PropertyFilter{Property: PropTitle, RichText: &notionapi.TextFilterCondition{IsEmpty: true}},
				notionapi.PropertyFilter{Property: PropYear, Number: &notionapi.NumberFilterCondition{IsEmpty: true}},
			},
		},
		PageSize: 100,
	}
	var out []PageLink
	for page := 0; page < 50; page++ { // at most 5,000 pages per pass
		res, err := api.Database.Query(ctx, notionapi.DatabaseID(databaseID), req)
		if err != nil {
			return nil, classify("query database "+databaseID, err)
		}
		for _, p := range res.Results {
			var text string
			switch v := p.Properties[link].(type) {
			case *notionapi.URLProperty:
				text = v.URL
			case *notionapi.RichTextProperty:
				text = textLink(v.RichText)
			}
			if text != "" {
				out = append(out, PageLink{PageID: string(p.ID), Link: text})
			}
		}
		if !res.HasMore {
			break
		}
		req.StartCursor = res.NextCursor
	}
	return out, nil
}
