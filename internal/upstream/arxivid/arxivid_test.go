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

package arxivid_test

import (
	"errors"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/upstream/arxivid"
)

func TestParseLink(t *testing.T) {
	for link, want := range map[string]string{
		// The seed's forms (§3.3.2).
		"https://arxiv.org/abs/2301.12345":     "2301.12345",
		"https://arxiv.org/abs/2301.12345v1":   "2301.12345",
		"https://arxiv.org/pdf/2301.12345.pdf": "2301.12345",
		"http://arxiv.org/abs/2301.12345":      "2301.12345",
		// Also: five-digit numbers, versions on PDFs, www and export hosts,
		// trailing slashes, queries, and old-style identifiers.
		"https://arxiv.org/abs/2301.01234v12":                "2301.01234",
		"https://arxiv.org/pdf/2301.12345v3":                 "2301.12345",
		"https://www.arxiv.org/abs/2301.12345/":              "2301.12345",
		"https://export.arxiv.org/abs/2301.12345?context=cs": "2301.12345",
		"https://arxiv.org/abs/hep-th/9901001":               "hep-th/9901001",
		"https://arxiv.org/abs/hep-th/9901001v2":             "hep-th/9901001",
		"https://arxiv.org/abs/cond-mat/0102536v1":           "cond-mat/0102536",
		// The subject class is not part of an old-style identifier: arXiv
		// files and answers math.GT/0309136 as math/0309136.
		"http://arxiv.org/pdf/math.GT/0309136.pdf":  "math/0309136",
		"https://arxiv.org/abs/math.GT/0309136v2":   "math/0309136",
		"https://arxiv.org/abs/math/0309136":        "math/0309136",
		"https://arxiv.org/pdf/cs.SE/0102001v1.pdf": "cs/0102001",
		"  https://arxiv.org/abs/2301.12345  ":      "2301.12345",
	} {
		got, err := arxivid.ParseLink(link)
		if err != nil || got != want {
			t.Errorf("ParseLink(%q) = %q, %v; want %q", link, got, err, want)
		}
	}
	for _, link := range []string{
		"", "arxiv.org/abs/2301.12345", "https://arxiv.org/list/cs.LG/recent", "https://example.org/abs/2301.12345",
		"https://arxiv.org.evil.example/abs/2301.12345", "https://arxiv.org/abs/231.12345", "https://arxiv.org/abs/2301.123",
		"https://arxiv.org/abs/2301.123456", "https://arxiv.org/abs/HEP-TH/9901001", "ftp://arxiv.org/abs/2301.12345",
		"https://arxiv.org/abs/", "javascript:alert(1)", "https://arxiv.org/abs/math.gt/0309136",
		"https://arxiv.org/abs/math.GTX/0309136", "https://arxiv.org/abs/math./0309136",
	} {
		if _, err := arxivid.ParseLink(link); !errors.Is(err, arxivid.ErrNotArxiv) {
			t.Errorf("ParseLink(%q) = %v, want ErrNotArxiv", link, err)
		}
	}
}

func FuzzParseLink(f *testing.F) {
	for _, s := range []string{"https://arxiv.org/abs/2301.12345v2", "http://arxiv.org/pdf/hep-th/9901001.pdf", "https://arxiv.org/abs/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, link string) {
		id, err := arxivid.ParseLink(link)
		if err != nil {
			if !errors.Is(err, arxivid.ErrNotArxiv) {
				t.Fatalf("error %v does not wrap ErrNotArxiv", err)
			}
			return
		}
		if !arxivid.ValidID(id) {
			t.Fatalf("%q gave %q, not a versionless arXiv id", link, id)
		}
		if c, ok := arxivid.CanonicalID(id); !ok || c != id {
			t.Fatalf("%q gave %q, not the canonical form %q", link, id, c)
		}
		again, err := arxivid.ParseLink("https://arxiv.org/abs/" + id)
		if err != nil || again != id {
			t.Fatalf("id %q does not round-trip: %q %v", id, again, err)
		}
	})
}

func TestCanonicalID(t *testing.T) {
	for in, want := range map[string]string{
		"2301.12345": "2301.12345", "2301.12345v2": "2301.12345", "0704.0001": "0704.0001",
		"hep-th/9901001": "hep-th/9901001", "hep-th/9901001v1": "hep-th/9901001",
		"math.GT/0309136": "math/0309136", "math.CA/0611800v2": "math/0611800",
	} {
		if got, ok := arxivid.CanonicalID(in); !ok || got != want {
			t.Errorf("CanonicalID(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "2301.123", "math.gt/0309136", "MATH/0309136", "math/030913", "2301.12345v", "math.GT/0309136/x"} {
		if got, ok := arxivid.CanonicalID(in); ok {
			t.Errorf("CanonicalID(%q) = %q, want refusal", in, got)
		}
	}
}

// A text property's link: its text, or a mention's arXiv href.
func TestLinkInText(t *testing.T) {
	for _, c := range []struct {
		plain, hrefs []string
		want         string
	}{
		{[]string{" https://arxiv.org/", "abs/2301.12345 "}, nil, "https://arxiv.org/abs/2301.12345"},
		{[]string{"Attention"}, []string{"", "https://arxiv.org/abs/1706.03762"}, "https://arxiv.org/abs/1706.03762"},
		{[]string{"a note"}, []string{"https://example.com"}, "a note"},
		{nil, nil, ""},
	} {
		if got := arxivid.LinkInText(c.plain, c.hrefs); got != c.want {
			t.Errorf("LinkInText(%q, %q) = %q, want %q", c.plain, c.hrefs, got, c.want)
		}
	}
}
