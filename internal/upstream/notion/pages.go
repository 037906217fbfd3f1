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
	"strings"
	"sync"
	"time"

	"github.com/jomei/notionapi"
	"golang.org/x/time/rate"

	"github.com/switchboard-dev/switchboard/internal/upstream/arxivid"
	"github.com/switchboard-dev/switchboard/internal/upstream/notionid"
)

// Page is what a PaperSync reads of a page: a connection event's, because
// Notion's events carry no property values
// (developers.notion.com/reference/webhooks-events-delivery); one a
// restore brought back without its status, to learn whether an earlier
// write already filled it (Holds).
type Page struct {
	// DatabaseID is the database the page is in, normalised; "" for a
	// page that is not a database row.
	DatabaseID string
	// Gone: archived or in the trash.
	Gone bool
	// Link is the text of the Link property; LinkPropertyID its id, as
	// events' updated_properties name it.
	Link, LinkPropertyID string
	// HasMetadata: Title and Publication Year both hold a value.
	HasMetadata bool
	// Title and Authors are the plain text of those properties, Year the
	// Publication Year (0 when empty).
	Title, Authors string
	Year           int
	// LastEditedBy is the id of the user or bot that edited it last.
	LastEditedBy string
}

// ReadPage retrieves a page and reads its Link (the property named
// linkProperty: a URL or a text property) and whether its metadata is
// filled.
func (c *Client) ReadPage(ctx context.Context, token, pageID, linkProperty string) (Page, error) {
	ctx, ra := withRetryAfter(ctx)
	p, err := c.api(token).Page.Get(ctx, notionapi.PageID(pageID))
	if err != nil {
		return Page{}, classify("retrieve page "+pageID, err, ra)
	}
	out := Page{Gone: p.Archived, LastEditedBy: string(p.LastEditedBy.ID)}
	if p.Parent.Type == notionapi.ParentTypeDatabaseID {
		out.DatabaseID = notionid.Normalize(string(p.Parent.DatabaseID))
	}
	switch v := p.Properties[linkProperty].(type) {
	case *notionapi.URLProperty:
		out.Link, out.LinkPropertyID = strings.TrimSpace(v.URL), string(v.ID)
	case *notionapi.RichTextProperty:
		out.Link, out.LinkPropertyID = textLink(v.RichText), string(v.ID)
	case *notionapi.TitleProperty:
		out.Link, out.LinkPropertyID = textLink(v.Title), string(v.ID)
	}
	if title, ok := p.Properties[PropTitle].(*notionapi.TitleProperty); ok {
		out.Title = plain(title.Title)
	}
	if authors, ok := p.Properties[PropAuthors].(*notionapi.RichTextProperty); ok {
		out.Authors = plain(authors.RichText)
	}
	if year, ok := p.Properties[PropYear].(*notionapi.NumberProperty); ok {
		out.Year = int(year.Number)
	}
	out.HasMetadata = out.Title != "" && out.Year != 0
	return out, nil
}

// Holds reports whether the page already holds p as UpdatePaper writes
// it: its Publication Year, and its Title or its Authors (a person may
// have corrected one of them since). A page filled with another paper
// (its Link changed since) differs in both.
func (pg Page) Holds(p Paper) bool {
	return pg.Year != 0 && pg.Year == p.Year &&
		((pg.Title != "" && pg.Title == Truncate(p.Title)) || (pg.Authors != "" && pg.Authors == authorsText(p.Authors)))
}

// textLink is the link a text property holds (arxivid.LinkInText).
func textLink(items []notionapi.RichText) string {
	plain, hrefs := make([]string, len(items)), make([]string, len(items))
	for i, it := range items {
		plain[i], hrefs[i] = it.PlainText, it.Href
	}
	return arxivid.LinkInText(plain, hrefs)
}

// RequestsPerSecond is Notion's rate limit for one integration: "an
// average of three requests per second"
// (developers.notion.com/reference/request-limits).
const RequestsPerSecond = 3

// Pacer keeps each integration (one grant) to Notion's average of three
// requests a second, with bursts of three, so that a burst of events
// reads its pages at the pace Notion allows rather than meeting 429s.
// Integrations idle for a minute are forgotten.
type Pacer struct {
	// Limit and Burst replace RequestsPerSecond (tests).
	Limit rate.Limit
	Burst int

	mu       sync.Mutex
	limiters map[string]*pacerEntry
	swept    time.Time
}

type pacerEntry struct {
	l    *rate.Limiter
	used time.Time
}

// Take reports whether key (an integration's UID) may send a request now,
// taking its turn when it may; when it may not, wait is how long until it
// may. It never blocks: a worker does not sleep through a batch of page
// reads (a hundred take half a minute at Notion's pace), it leaves the
// rest for a later try.
func (p *Pacer) Take(key string) (ok bool, wait time.Duration) {
	if p == nil {
		return true, 0
	}
	r := p.limiter(key).Reserve()
	if d := r.Delay(); d > 0 {
		r.Cancel()
		return false, d
	}
	return true, 0
}

func (p *Pacer) limiter(key string) *rate.Limiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.limiters == nil {
		p.limiters = map[string]*pacerEntry{}
	}
	if now.Sub(p.swept) > time.Minute {
		for k, e := range p.limiters {
			if now.Sub(e.used) > time.Minute {
				delete(p.limiters, k)
			}
		}
		p.swept = now
	}
	e := p.limiters[key]
	if e == nil {
		limit, burst := p.Limit, p.Burst
		if limit == 0 {
			limit, burst = RequestsPerSecond, RequestsPerSecond
		}
		e = &pacerEntry{l: rate.NewLimiter(limit, max(burst, 1))}
		p.limiters[key] = e
	}
	e.used = now
	return e.l
}
