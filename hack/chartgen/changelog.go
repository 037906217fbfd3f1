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

package main

import (
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
)

// change is one entry of artifacthub.io/changes.
type change struct {
	Kind        string `yaml:"kind"`
	Description string `yaml:"description"`
	Links       []link `yaml:"links,omitempty"`
}

type link struct {
	Name string `yaml:"name"`
	URL  string `yaml:"url"`
}

// changeKinds maps Keep a Changelog's headings to Artifact Hub's kinds
// (the same six).
var changeKinds = map[string]string{
	"Added": "added", "Changed": "changed", "Deprecated": "deprecated",
	"Removed": "removed", "Fixed": "fixed", "Security": "security",
}

var (
	// linkRefRE is a link reference definition, `[Unreleased]: https://…`,
	// which ends the last release's section.
	linkRefRE = regexp.MustCompile(`^\[[^\]]+\]:\s`)
	// mdLinkRE is an inline Markdown link.
	mdLinkRE = regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)\)`)
)

// changelogChanges reads the changes of one chart version from
// CHANGELOG.md (Keep a Changelog 1.1.0): the section `## [version]`, or
// `## [Unreleased]` while the version has none. Every bullet under a
// `### Kind` heading is one change; a `#### Group` heading under it names
// the part changed and prefixes the description. Markdown links become
// Artifact Hub links, relative ones resolved against linkBase.
func changelogChanges(file, version, linkBase string) ([]change, error) {
	raw, err := os.ReadFile(file) //nolint:gosec // a file of this repository
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(raw), "\n")
	start := sectionStart(lines, version)
	if start < 0 {
		return nil, fmt.Errorf("%s: no section ## [%s] nor ## [Unreleased]", file, version)
	}
	p := changeParser{linkBase: linkBase}
	for i := start + 1; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "## ") || linkRefRE.MatchString(l) {
			break
		}
		if err := p.line(l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, i+1, err)
		}
	}
	p.flush()
	if len(p.changes) == 0 {
		return nil, fmt.Errorf("%s: the section of %s lists no change", file, version)
	}
	return p.changes, nil
}

// sectionStart is the index of the version's heading, else Unreleased's.
func sectionStart(lines []string, version string) int {
	for _, title := range []string{version, "Unreleased"} {
		for i, l := range lines {
			if l == "## ["+title+"]" || strings.HasPrefix(l, "## ["+title+"] ") {
				return i
			}
		}
	}
	return -1
}

type changeParser struct {
	linkBase    string
	kind, group string
	bullet      []string // the lines of the bullet being read
	changes     []change
}

func (p *changeParser) line(l string) error {
	switch {
	case strings.HasPrefix(l, "### "):
		p.flush()
		heading := strings.TrimSpace(strings.TrimPrefix(l, "### "))
		kind, ok := changeKinds[heading]
		if !ok {
			return fmt.Errorf("### %s is none of Keep a Changelog's kinds (Added, Changed, Deprecated, Removed, Fixed, Security)", heading)
		}
		p.kind, p.group = kind, ""
	case p.kind == "":
		// The section's introduction, before its first kind.
	case strings.HasPrefix(l, "#### "):
		p.flush()
		p.group = strings.TrimSpace(strings.TrimPrefix(l, "#### "))
	case strings.HasPrefix(l, "- "):
		p.flush()
		p.bullet = []string{strings.TrimPrefix(l, "- ")}
	case strings.TrimSpace(l) == "":
		p.flush()
	case strings.HasPrefix(l, "  ") && p.bullet != nil:
		p.bullet = append(p.bullet, strings.TrimSpace(l))
	default:
		return errors.New("neither a heading, a bullet nor a bullet's indented continuation: chartgen reads each change from a bullet")
	}
	return nil
}

// flush turns the bullet read so far into a change.
func (p *changeParser) flush() {
	if p.bullet == nil {
		return
	}
	text := strings.Join(p.bullet, " ")
	p.bullet = nil
	c := change{Kind: p.kind}
	for _, m := range mdLinkRE.FindAllStringSubmatch(text, -1) {
		url := m[2]
		if !strings.Contains(url, "://") {
			url = p.linkBase + path.Clean(url)
		}
		c.Links = append(c.Links, link{Name: m[1], URL: url})
	}
	c.Description = mdLinkRE.ReplaceAllString(text, "$1")
	if p.group != "" {
		c.Description = p.group + ": " + c.Description
	}
	p.changes = append(p.changes, c)
}
