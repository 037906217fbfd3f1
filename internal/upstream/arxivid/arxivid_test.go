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
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/upstream/arxivid"
)

func TestParseLink(t *testing.T) {
	var table struct {
		Accepted []struct{ Link, ID string }
		Refused  []string
	}
	raw, err := os.ReadFile("testdata/links.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &table); err != nil || len(table.Accepted) < 15 || len(table.Refused) < 15 {
		t.Fatalf("testdata/links.json: %d accepted, %d refused, %v", len(table.Accepted), len(table.Refused), err)
	}
	for _, c := range table.Accepted {
		got, err := arxivid.ParseLink(c.Link)
		if err != nil || got != c.ID {
			t.Errorf("ParseLink(%q) = %q, %v; want %q", c.Link, got, err, c.ID)
		}
	}
	for _, link := range table.Refused {
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
