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

// Package arxivid knows the syntax of arXiv identifiers and of the links
// people paste into Notion (seed 000 §3.3.2, §3.4), a fact of arXiv that
// the client, the webhook's Notion route and the PaperSync controller
// share; it imports nothing of the operator.
package arxivid

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// ErrNotArxiv is wrapped by every link refusal.
var ErrNotArxiv = errors.New("not an arXiv link")

var (
	// New-style identifiers (since April 2007): YYMM.NNNN or YYMM.NNNNN.
	newStyle = regexp.MustCompile(`^([0-9]{4}\.[0-9]{4,5})(v[0-9]+)?$`)
	// Old-style identifiers: archive(.SUBJ)/YYMMNNN, e.g. hep-th/9901001,
	// math.GT/0309136. The groups are the archive, the subject class (with
	// its dot), the number and the version.
	oldStyle = regexp.MustCompile(`^([a-z]+(?:-[a-z]+)*)(\.[A-Z]{2})?/([0-9]{7})(v[0-9]+)?$`)
)

// ValidID reports whether s is an arXiv identifier without version, in
// either scheme, with or without an old-style subject class.
func ValidID(s string) bool {
	if m := newStyle.FindStringSubmatch(s); m != nil {
		return m[2] == ""
	}
	m := oldStyle.FindStringSubmatch(s)
	return m != nil && m[4] == ""
}

// CanonicalID reduces an identifier, with or without version, to the form
// arXiv files the paper under and writes in the feed's <id>: no version,
// and for old-style identifiers no subject class. The subject class is not
// part of the identifier: "math.CA/0611800v2" is cited as
// "arXiv:math/0611800v2" (arXiv, "arXiv identifier scheme - information
// for interacting services", https://info.arxiv.org/help/arxiv_identifier_for_services.html),
// so a paper linked as math.GT/0309136 is answered as math/0309136 and is
// matched only in that form. ok is false when s is not an identifier.
func CanonicalID(s string) (id string, ok bool) {
	if m := newStyle.FindStringSubmatch(s); m != nil {
		return m[1], true
	}
	if m := oldStyle.FindStringSubmatch(s); m != nil {
		return m[1] + "/" + m[3], true
	}
	return "", false
}

// ParseLink extracts the canonical identifier (CanonicalID: no version, no
// subject class, no .pdf) from an arXiv abstract or PDF link (seed 000
// §3.3.2, §3.4): https or http, arxiv.org, www.arxiv.org or
// export.arxiv.org, /abs/ or /pdf/, new- or old-style identifiers. Queries
// and fragments are ignored.
func ParseLink(link string) (string, error) {
	link = strings.TrimSpace(link)
	if link == "" {
		return "", fmt.Errorf("%w: the link is empty", ErrNotArxiv)
	}
	if len(link) > 2048 {
		return "", fmt.Errorf("%w: the link is longer than 2048 characters", ErrNotArxiv)
	}
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("%w: want an http(s) URL such as https://arxiv.org/abs/2301.12345", ErrNotArxiv)
	}
	switch strings.ToLower(u.Hostname()) {
	case "arxiv.org", "www.arxiv.org", "export.arxiv.org":
	default:
		return "", fmt.Errorf("%w: the host must be arxiv.org", ErrNotArxiv)
	}
	path := strings.TrimSuffix(u.Path, "/")
	var rest string
	switch {
	case strings.HasPrefix(path, "/abs/"):
		rest = strings.TrimPrefix(path, "/abs/")
	case strings.HasPrefix(path, "/pdf/"):
		rest = strings.TrimSuffix(strings.TrimPrefix(path, "/pdf/"), ".pdf")
	default:
		return "", fmt.Errorf("%w: want an abstract (/abs/) or PDF (/pdf/) link", ErrNotArxiv)
	}
	if id, ok := CanonicalID(rest); ok {
		return id, nil
	}
	return "", fmt.Errorf("%w: %q is not an arXiv identifier (2301.12345 or hep-th/9901001)", ErrNotArxiv, rest)
}

// LinkInText is the link a Notion text property holds, given its items'
// plain text and hrefs in order: the text, or, when the text is not an
// arXiv link (a pasted link Notion shows as a titled mention), the first
// arXiv href. The webhook reads an Automation's envelope and the Notion
// client a page by the same rule.
func LinkInText(plain []string, hrefs []string) string {
	text := strings.TrimSpace(strings.Join(plain, ""))
	if strings.Contains(text, "arxiv.org/") {
		return text
	}
	for _, h := range hrefs {
		if strings.Contains(h, "arxiv.org/") {
			return strings.TrimSpace(h)
		}
	}
	return text
}
