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
)

// Paper is one entry of the feed, normalised (seed 000 §3.5.2).
type Paper struct {
	// ID without version, e.g. 2301.12345 or hep-th/9901001.
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

// FeedError is an error entry: arXiv answers a malformed identifier with an
// entry whose id is http://arxiv.org/api/errors#… and whose title is
// "Error".
type FeedError struct{ ID, Message string }

// Feed is a parsed answer.
type Feed struct {
	Papers []Paper
	Errors []FeedError
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

const errorIDPrefix = "http://arxiv.org/api/errors"

// ParseFeed reads an Atom answer of the export API.
func ParseFeed(data []byte) (Feed, error) {
	var f atomFeed
	if err := xml.Unmarshal(data, &f); err != nil {
		return Feed{}, fmt.Errorf("arXiv answer is not an Atom feed: %w", err)
	}
	var out Feed
	for _, e := range f.Entries {
		id := strings.TrimSpace(e.ID)
		if strings.HasPrefix(id, errorIDPrefix) {
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
	id, err := ParseLink(link)
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
