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

package sandbox

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// ArxivQuery is the route name of the arXiv export API.
const ArxivQuery = "arxiv.query"

// ArxivPaper is a paper the arXiv emulator knows.
type ArxivPaper struct {
	// ID without version: 2301.12345 or hep-th/9901001.
	ID, Title, Summary string
	Authors            []string
	Published          time.Time
	Version            int
}

// Arxiv emulates http://export.arxiv.org/api/query with id_list, quirks
// included: titles and abstracts wrapped over lines with indentation;
// entries in publication order, not the requested order; a well-formed but
// unknown id silently left out (while totalResults still counts it); a
// malformed id answered with 400 and an error entry.
type Arxiv struct {
	mu     sync.Mutex
	papers map[string]ArxivPaper
}

// NewArxiv returns an emulator knowing the seed's example paper
// (2301.12345) and an old-style one (hep-th/9901001).
func NewArxiv() *Arxiv {
	a := &Arxiv{papers: map[string]ArxivPaper{}}
	a.AddPaper(ArxivPaper{ID: "2301.12345", Title: "A Study of\n  Examples in Practice", Version: 2,
		Summary:   "We study examples.\n  They are   wrapped over lines\nas arXiv wraps them.",
		Authors:   []string{"Ada Lovelace", "Alan Turing"},
		Published: time.Date(2023, 1, 29, 18, 4, 11, 0, time.UTC)})
	a.AddPaper(ArxivPaper{ID: "hep-th/9901001", Title: "An Old-Style\n  Identifier", Version: 1,
		Summary: "Papers before April 2007 have archive-prefixed ids.", Authors: []string{"Edward Witten"},
		Published: time.Date(1999, 1, 4, 9, 0, 0, 0, time.UTC)})
	return a
}

// AddPaper publishes a paper.
func (a *Arxiv) AddPaper(p ArxivPaper) {
	if p.Version == 0 {
		p.Version = 1
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.papers[p.ID] = p
}

// Upstream implements Emulator.
func (a *Arxiv) Upstream() upstream.Name { return upstream.Arxiv }

// Register implements Emulator.
func (a *Arxiv) Register(s *Server) {
	s.Handle(ArxivQuery, "GET /arxiv/api/query", a.query)
}

var arxivVersion = regexp.MustCompile(`v[0-9]+$`)

var arxivIDFormat = regexp.MustCompile(`^([0-9]{4}\.[0-9]{4,5}|[a-z]+(-[a-z]+)*(\.[A-Z]{2})?/[0-9]{7})(v[0-9]+)?$`)

func (a *Arxiv) query(w http.ResponseWriter, r *http.Request) {
	ids := strings.Split(r.URL.Query().Get("id_list"), ",")
	w.Header().Set("Content-Type", "application/atom+xml; charset=utf-8")
	for _, id := range ids {
		if !arxivIDFormat.MatchString(id) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = fmt.Fprintf(w, atomHead, xmlEscape(r.URL.RawQuery), 1)
			_, _ = fmt.Fprintf(w, `  <entry>
    <id>http://arxiv.org/api/errors#incorrect_id_format_for_%[1]s</id>
    <title>Error</title>
    <summary>incorrect id format for %[1]s</summary>
    <updated>2026-11-21T00:00:00-05:00</updated>
    <link href="http://arxiv.org/api/errors#incorrect_id_format_for_%[1]s" rel="alternate" type="text/html"/>
    <author>
      <name>arXiv api core</name>
    </author>
  </entry>
</feed>
`, xmlEscape(id))
			return
		}
	}
	a.mu.Lock()
	var found []ArxivPaper
	for _, id := range ids {
		if p, ok := a.papers[arxivVersion.ReplaceAllString(id, "")]; ok {
			found = append(found, p)
		}
	}
	a.mu.Unlock()
	sort.Slice(found, func(i, j int) bool { return found[i].Published.After(found[j].Published) })
	_, _ = fmt.Fprintf(w, atomHead, xmlEscape(r.URL.RawQuery), len(ids))
	for _, p := range found {
		_, _ = fmt.Fprintf(w, `  <entry>
    <id>http://arxiv.org/abs/%[1]sv%[2]d</id>
    <updated>%[3]s</updated>
    <published>%[3]s</published>
    <title>%[4]s</title>
    <summary>  %[5]s
</summary>
`, p.ID, p.Version, p.Published.Format(time.RFC3339), xmlEscape(p.Title), xmlEscape(p.Summary))
		for _, au := range p.Authors {
			_, _ = fmt.Fprintf(w, "    <author>\n      <name>%s</name>\n    </author>\n", xmlEscape(au))
		}
		_, _ = fmt.Fprintf(w, `    <link href="http://arxiv.org/abs/%[1]sv%[2]d" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/%[1]sv%[2]d" rel="related" type="application/pdf"/>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
`, p.ID, p.Version)
	}
	_, _ = fmt.Fprint(w, "</feed>\n")
}

const atomHead = `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <link href="http://arxiv.org/api/query?%[1]s" rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query: %[1]s</title>
  <id>http://arxiv.org/api/cHxbiOdZaP56ODnBPIenZhzg5f8</id>
  <updated>2026-11-21T00:00:00-05:00</updated>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">%[2]d</opensearch:totalResults>
  <opensearch:startIndex xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">0</opensearch:startIndex>
  <opensearch:itemsPerPage xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">%[2]d</opensearch:itemsPerPage>
`

// xmlEscape escapes markup but keeps line breaks literal, as arXiv's
// wrapped titles and abstracts have them.
var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func xmlEscape(s string) string { return xmlEscaper.Replace(s) }
