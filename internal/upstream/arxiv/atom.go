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

package arxiv

import (
	"encoding/xml"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/switchboard-dev/switchboard/internal/upstream/arxivid"
)

// Paper is one entry of the feed, normalised (seed 000 §3.5.2).
type Paper struct {
	// ID in its canonical form (arxivid.CanonicalID): without version or subject
	// class, e.g. 2301.12345, hep-th/9901001 or math/0309136.
	ID string
	// Title and Summary with runs of white space (arXiv wraps lines)
	// folded to single spaces.
	Title, Summary string
	Authors        []string
	// Link is the abstract URL the feed gives (with version).
	Link      string
	Published time.Time
}

// Year is the publication year (seed 000 §3.5.1: from <published>).
func (p Paper) Year() int { return p.Published.Year() }

// FeedError is an error entry: arXiv answers a malformed identifier with
// HTTP 400 and a feed whose one entry has the id
// http://arxiv.org/api/errors#incorrect_id_format_for_… and the title
// "Error" (arXiv API User's Manual §3.4 "Errors",
// https://info.arxiv.org/help/api/user-manual.html#_errors). Recorded
// answers from 2026 spell the same id with https://
// (lukasschwab/arxiv.py, tests/fixtures/id_abc_s0_m100_b79c8dcf6bc3.json),
// so both schemes are read as errors.
type FeedError struct{ ID, Message string }

// Feed is a parsed answer.
type Feed struct {
	Papers []Paper
	Errors []FeedError
	// Unidentified counts entries without an <id>. In a batched id_list
	// arXiv answers an identifier it has no paper for with such an entry
	// instead of leaving it out (lukasschwab/arxiv.py#80, "nonexistent IDs
	// in id_lists yield invalid entries", fixed on the client side by
	// skipping the entry in arxiv.py#81). The entry does not say which
	// identifier it stands for, so it means "not found" for whichever
	// requested identifiers no other entry matches; it is never a reason
	// to refuse the papers that are in the same answer.
	Unidentified int
}

type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Entries []atomEntry `xml:"http://www.w3.org/2005/Atom entry"`
}

type atomEntry struct {
	ID        string       `xml:"http://www.w3.org/2005/Atom id"`
	Title     string       `xml:"http://www.w3.org/2005/Atom title"`
	Summary   string       `xml:"http://www.w3.org/2005/Atom summary"`
	Published string       `xml:"http://www.w3.org/2005/Atom published"`
	Authors   []atomAuthor `xml:"http://www.w3.org/2005/Atom author"`
}

type atomAuthor struct {
	Name string `xml:"http://www.w3.org/2005/Atom name"`
}

// errorIDPrefixes start the id of an error entry (see FeedError).
var errorIDPrefixes = []string{"http://arxiv.org/api/errors", "https://arxiv.org/api/errors"}

func isErrorID(id string) bool {
	for _, p := range errorIDPrefixes {
		if strings.HasPrefix(id, p) {
			return true
		}
	}
	return false
}

// ParseFeed reads an Atom answer of the export API. An entry without an id
// is counted in Unidentified and skipped; an entry with an id that is not
// a usable paper fails the whole answer, since arXiv then said something
// this parser does not understand.
func ParseFeed(data []byte) (Feed, error) {
	var f atomFeed
	if err := xml.Unmarshal(data, &f); err != nil {
		return Feed{}, fmt.Errorf("arXiv answer is not an Atom feed: %w", err)
	}
	var out Feed
	for _, e := range f.Entries {
		id := strings.TrimSpace(e.ID)
		switch {
		case id == "":
			out.Unidentified++
			continue
		case isErrorID(id):
			out.Errors = append(out.Errors, FeedError{ID: id, Message: fold(e.Summary)})
			continue
		}
		p, err := paperFrom(e)
		if err != nil {
			return Feed{}, err
		}
		out.Papers = append(out.Papers, p)
	}
	return out, nil
}

func paperFrom(e atomEntry) (Paper, error) {
	link := strings.TrimSpace(e.ID)
	id, err := arxivid.ParseLink(link)
	if err != nil {
		return Paper{}, fmt.Errorf("arXiv entry id %q: %w", link, err)
	}
	published, err := time.Parse(time.RFC3339, strings.TrimSpace(e.Published))
	if err != nil {
		return Paper{}, fmt.Errorf("arXiv entry %s: published %q: %w", id, e.Published, err)
	}
	p := Paper{ID: id, Title: fold(e.Title), Summary: fold(e.Summary), Link: link, Published: published}
	for _, a := range e.Authors {
		if n := fold(a.Name); n != "" {
			p.Authors = append(p.Authors, n)
		}
	}
	if p.Title == "" {
		return Paper{}, fmt.Errorf("arXiv entry %s has no title", id)
	}
	return p, nil
}

// fold trims and folds every run of white space to one space.
func fold(s string) string {
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}
