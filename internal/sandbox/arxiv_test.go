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

package sandbox_test

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxiv"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxivid"
)

// The arXiv emulator's quirks, read raw (as arXiv's recorded answers are)
// and through the operator's client.

type arxivFeed struct {
	Total   int `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
	Entries []struct {
		ID      string `xml:"http://www.w3.org/2005/Atom id"`
		Title   string `xml:"http://www.w3.org/2005/Atom title"`
		Summary string `xml:"http://www.w3.org/2005/Atom summary"`
	} `xml:"http://www.w3.org/2005/Atom entry"`
}

func arxivServer(t *testing.T, emu *sandbox.Arxiv) string {
	t.Helper()
	srv := httptest.NewServer(sandbox.New(emu))
	t.Cleanup(srv.Close)
	return srv.URL + "/arxiv"
}

func queryArxiv(t *testing.T, base, ids string) (int, arxivFeed) {
	t.Helper()
	resp, err := http.Get(base + "/api/query?" + url.Values{"id_list": {ids}, "max_results": {"10"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var f arxivFeed
	if err := xml.Unmarshal(body, &f); err != nil {
		t.Fatalf("not a feed: %v\n%s", err, body)
	}
	return resp.StatusCode, f
}

func TestArxivAnswersAnUnknownIDWithAnEntryWithoutID(t *testing.T) {
	base := arxivServer(t, sandbox.NewArxiv())
	code, f := queryArxiv(t, base, "2301.12345,2312.99999,hep-th/9901001")
	if code != http.StatusOK || f.Total != 3 || len(f.Entries) != 3 {
		t.Fatalf("status %d, totalResults %d, %d entries; want 200, 3, 3", code, f.Total, len(f.Entries))
	}
	var ids []string
	idless := 0
	for _, e := range f.Entries {
		if e.ID == "" {
			idless++
			if strings.TrimSpace(e.Title) != "" {
				t.Errorf("the unknown id's entry has a title %q", e.Title)
			}
			continue
		}
		ids = append(ids, e.ID)
	}
	// Publication order, newest first, not the request's.
	if idless != 1 || strings.Join(ids, " ") != "http://arxiv.org/abs/2301.12345v2 http://arxiv.org/abs/hep-th/9901001v1" {
		t.Fatalf("%d id-less entries, ids %v", idless, ids)
	}
}

func TestArxivCanLeaveAnUnknownIDOut(t *testing.T) {
	emu := sandbox.NewArxiv()
	emu.OmitUnknown = true
	_, f := queryArxiv(t, arxivServer(t, emu), "2312.99999,2301.12345")
	if f.Total != 1 || len(f.Entries) != 1 || f.Entries[0].ID != "http://arxiv.org/abs/2301.12345v2" {
		t.Fatalf("totalResults %d, entries %+v", f.Total, f.Entries)
	}
}

func TestArxivAnswersTheCanonicalOldStyleID(t *testing.T) {
	base := arxivServer(t, sandbox.NewArxiv())
	for _, asked := range []string{"math.GT/0309136", "math/0309136", "math.GT/0309136v1"} {
		code, f := queryArxiv(t, base, asked)
		if code != http.StatusOK || len(f.Entries) != 1 || f.Entries[0].ID != "http://arxiv.org/abs/math/0309136v1" {
			t.Errorf("%s: status %d, entries %+v", asked, code, f.Entries)
		}
	}
}

func TestArxivRefusesAMalformedIDWithAnErrorEntry(t *testing.T) {
	code, f := queryArxiv(t, arxivServer(t, sandbox.NewArxiv()), "2301.12345,1309.119")
	if code != http.StatusBadRequest || len(f.Entries) != 1 {
		t.Fatalf("status %d, %d entries; want 400 and one error entry", code, len(f.Entries))
	}
	e := f.Entries[0]
	if e.ID != "http://arxiv.org/api/errors#incorrect_id_format_for_1309.119" || e.Title != "Error" || e.Summary != "incorrect id format for 1309.119" {
		t.Fatalf("error entry %+v", e)
	}
}

// Through the client the operator uses: one unknown id among good ones
// costs only itself, and a subject-class link finds its paper.
func TestArxivThroughTheClient(t *testing.T) {
	emu := sandbox.NewArxiv()
	box := sandbox.New(emu)
	srv := httptest.NewServer(box)
	t.Cleanup(srv.Close)
	out := testenv.OutboundTo(t, upstream.Arxiv, srv.URL+"/arxiv")
	c := &arxiv.Client{Out: out}
	id, err := arxivid.ParseLink("https://arxiv.org/abs/math.GT/0309136")
	if err != nil {
		t.Fatal(err)
	}
	found, missing, err := c.Fetch(context.Background(), []string{"2301.12345", "2312.99999", id, "hep-th/9901001"})
	if err != nil {
		t.Fatalf("the batch failed: %v", err)
	}
	if len(found) != 3 || found[id].Title != "A Paper Filed Under a Subject Class" || len(missing) != 1 || missing[0] != "2312.99999" {
		t.Fatalf("found %v, missing %v", found, missing)
	}
	if n := box.Calls(sandbox.ArxivQuery); n != 1 {
		t.Fatalf("%d requests for one batch", n)
	}
}
