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

package arxiv_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxiv"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxivid"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

func FuzzParseFeed(f *testing.F) {
	f.Add(`<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/2301.12345v1</id><title>T</title><published>2023-01-29T18:04:11Z</published></entry></feed>`)
	f.Add(`<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/api/errors#x</id><title>Error</title></entry></feed>`)
	f.Add(`<html>not a feed</html>`)
	f.Add(`<feed xmlns="http://www.w3.org/2005/Atom"><entry></entry><entry><id>http://arxiv.org/abs/math.GT/0309136v1</id><title>T</title><published>2003-09-08T12:00:00Z</published></entry></feed>`)
	f.Fuzz(func(t *testing.T, data string) {
		feed, err := arxiv.ParseFeed([]byte(data))
		if err != nil {
			return
		}
		for _, p := range feed.Papers {
			if c, ok := arxivid.CanonicalID(p.ID); !ok || c != p.ID || p.Title == "" || p.Title != strings.Join(strings.Fields(p.Title), " ") {
				t.Fatalf("bad paper %+v", p)
			}
		}
	})
}

func newClient(t *testing.T, pacer *arxiv.Pacer) (*arxiv.Client, *sandbox.Server, *sandbox.Arxiv) {
	t.Helper()
	a := sandbox.NewArxiv()
	box := sandbox.New(a)
	srv := httptest.NewServer(box)
	t.Cleanup(srv.Close)
	out := testenv.OutboundTo(t, upstream.Arxiv, srv.URL+"/arxiv")
	return &arxiv.Client{Out: out, Pacer: pacer}, box, a
}

func TestFetchABatchNormalisesAndFindsUnknownIDs(t *testing.T) {
	c, box, _ := newClient(t, nil)
	found, missing, err := c.Fetch(context.Background(), []string{"hep-th/9901001", "2301.12345", "2312.99999"})
	if err != nil {
		t.Fatal(err)
	}
	p := found["2301.12345"]
	if p.Title != "A Study of Examples in Practice" || p.Summary != "We study examples. They are wrapped over lines as arXiv wraps them." {
		t.Fatalf("not normalised: %q / %q", p.Title, p.Summary)
	}
	if strings.Join(p.Authors, ", ") != "Ada Lovelace, Alan Turing" || p.Year() != 2023 || p.Link != "http://arxiv.org/abs/2301.12345v2" {
		t.Fatalf("paper %+v", p)
	}
	if found["hep-th/9901001"].Year() != 1999 {
		t.Fatalf("old-style paper %+v", found["hep-th/9901001"])
	}
	if len(missing) != 1 || missing[0] != "2312.99999" {
		t.Fatalf("missing = %v", missing)
	}
	if n := box.Calls(sandbox.ArxivQuery); n != 1 {
		t.Fatalf("%d requests for one batch", n)
	}
}

// arXiv answers an unknown id in a batch with an entry without <id>
// (lukasschwab/arxiv.py#80), or, as recorded in 2026, leaves it out. Either
// way the other papers of the request are found and only the unknown ones
// are missing.
func TestOneUnknownPaperDoesNotFailItsBatch(t *testing.T) {
	for _, omit := range []bool{false, true} {
		name := map[bool]string{false: "answered by an entry without an id", true: "left out of the answer"}[omit]
		t.Run(name, func(t *testing.T) {
			c, box, emu := newClient(t, nil)
			emu.OmitUnknown = omit
			ids := []string{"2301.12345", "2312.99999", "hep-th/9901001", "math/0309136", "0808.05394"}
			found, missing, err := c.Fetch(context.Background(), ids)
			if err != nil {
				t.Fatalf("one unknown id failed the batch: %v", err)
			}
			for _, id := range []string{"2301.12345", "hep-th/9901001", "math/0309136"} {
				if found[id].Title == "" {
					t.Errorf("%s not found among %v", id, found)
				}
			}
			if strings.Join(missing, " ") != "2312.99999 0808.05394" || len(found) != 3 {
				t.Fatalf("found %d, missing %v; want 3 and [2312.99999 0808.05394]", len(found), missing)
			}
			if n := box.Calls(sandbox.ArxivQuery); n != 1 {
				t.Fatalf("%d requests for one batch", n)
			}
		})
	}
}

func TestFetchFindsOldStyleIDsWrittenWithASubjectClass(t *testing.T) {
	c, _, _ := newClient(t, nil)
	// The link as a person pastes it, and ids as older PaperSyncs hold them.
	id, err := arxivid.ParseLink("https://arxiv.org/abs/math.GT/0309136v1")
	if err != nil || id != "math/0309136" {
		t.Fatalf("ParseLink = %q, %v", id, err)
	}
	found, missing, err := c.Fetch(context.Background(), []string{id, "math.GT/0309136", "math/0309136v1"})
	if err != nil || len(missing) != 0 {
		t.Fatalf("missing %v, err %v", missing, err)
	}
	for _, given := range []string{"math/0309136", "math.GT/0309136", "math/0309136v1"} {
		p := found[given]
		if p.ID != "math/0309136" || p.Title != "A Paper Filed Under a Subject Class" || p.Year() != 2003 {
			t.Errorf("found[%q] = %+v", given, p)
		}
	}
}

func TestFetchNeverSendsAMalformedID(t *testing.T) {
	c, box, _ := newClient(t, nil)
	// arXiv refuses a whole request with 400 for one malformed id
	// (sandbox.Arxiv); such an id is reported missing and left out.
	found, missing, err := c.Fetch(context.Background(), []string{"2301.12345", "not-an-id", "2301.123"})
	if err != nil {
		t.Fatal(err)
	}
	if found["2301.12345"].Title == "" || strings.Join(missing, " ") != "not-an-id 2301.123" {
		t.Fatalf("found %v, missing %v", found, missing)
	}
	// Nothing well-formed: no request at all.
	box.ResetCalls()
	found, missing, err = c.Fetch(context.Background(), []string{"x"})
	if err != nil || len(found) != 0 || len(missing) != 1 || box.Calls(sandbox.ArxivQuery) != 0 {
		t.Fatalf("found %v, missing %v, err %v, %d requests", found, missing, err, box.Calls(sandbox.ArxivQuery))
	}
}

func TestFetchFailures(t *testing.T) {
	c, box, _ := newClient(t, nil)
	// A 400 error entry (an id arXiv finds malformed although this client
	// does not) is permanent, and names the id.
	box.SetFault(sandbox.ArxivQuery, sandbox.Fault{Status: 400, ContentType: "application/atom+xml", Body: errorFeed("https")})
	_, _, err := c.Fetch(context.Background(), []string{"2301.12345"})
	if !outbound.IsPermanent(err) || !strings.Contains(err.Error(), "incorrect id format for 2301.12345") {
		t.Fatalf("400: %v", err)
	}
	box.SetFault(sandbox.ArxivQuery, sandbox.Fault{Status: 503, RetryAfter: "3", ContentType: "text/html", Body: "<html>Service Unavailable</html>"})
	_, _, err = c.Fetch(context.Background(), []string{"2301.12345"})
	if e, ok := outbound.Classify(err); !ok || e.Class != outbound.Transient || e.RetryAfter != 3*time.Second {
		t.Fatalf("503: %v", err)
	}
	box.SetFault(sandbox.ArxivQuery, sandbox.Fault{Malformed: true})
	if _, _, err = c.Fetch(context.Background(), []string{"2301.12345"}); !outbound.IsPermanent(err) {
		t.Fatalf("malformed feed: %v", err)
	}
}

// errorFeed is arXiv's answer to a malformed id, with the errors URL in
// the given scheme (http in the user manual, https in 2026 recordings).
func errorFeed(scheme string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>https://arxiv.org/</id>
  <title>arXiv Search Results</title>
  <entry>
    <id>` + scheme + `://arxiv.org/api/errors#incorrect_id_format_for_2301.12345</id>
    <title>Error</title>
    <summary>incorrect id format for 2301.12345</summary>
    <author><name>arXiv api core</name></author>
  </entry>
</feed>`
}

func TestParseFeed(t *testing.T) {
	for _, scheme := range []string{"http", "https"} {
		f, err := arxiv.ParseFeed([]byte(errorFeed(scheme)))
		if err != nil || len(f.Errors) != 1 || f.Errors[0].Message != "incorrect id format for 2301.12345" || len(f.Papers) != 0 {
			t.Errorf("%s error entry: %+v, %v", scheme, f, err)
		}
	}
	// An id-less entry with whatever else in it, before and after a paper.
	f, err := arxiv.ParseFeed([]byte(`<feed xmlns="http://www.w3.org/2005/Atom">
  <entry><title></title><published>1969-12-31T19:00:00-05:00</published><author><name></name></author></entry>
  <entry><id>http://arxiv.org/abs/math.GT/0309136v3</id><title>T</title><published>2003-09-08T12:00:00Z</published></entry>
  <entry><id> </id></entry>
</feed>`))
	if err != nil || f.Unidentified != 2 || len(f.Papers) != 1 || f.Papers[0].ID != "math/0309136" || f.Papers[0].Link != "http://arxiv.org/abs/math.GT/0309136v3" {
		t.Fatalf("feed %+v, %v", f, err)
	}
	// An entry that names a paper but is not one still fails the answer.
	if _, err := arxiv.ParseFeed([]byte(`<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/2301.12345v1</id><published>2023-01-29T18:04:11Z</published></entry></feed>`)); err == nil {
		t.Fatal("an entry without a title was read as a paper")
	}
}

func TestPacerSpacesRequestsThreeSecondsApart(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0))
	p := &arxiv.Pacer{Interval: arxiv.MinInterval, Clock: clk}
	var mu sync.Mutex
	var at []time.Time
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Wait(context.Background()); err != nil {
				t.Error(err)
			}
			mu.Lock()
			at = append(at, clk.Now())
			mu.Unlock()
		}()
	}
	// Step the fake clock until all three got through. A deadline, not a
	// count of turns: on a loaded machine 100 turns of 5 ms could end
	// before the third request, and wg.Wait would then wait forever.
	testenv.EventuallyReport(t, 30*time.Second, "3 requests to get through while stepping the clock", func() (bool, string) {
		mu.Lock()
		n := len(at)
		mu.Unlock()
		if n == 3 {
			return true, ""
		}
		if clk.HasWaiters() {
			clk.Step(time.Second)
		}
		return false, fmt.Sprintf("%d of 3 got through", n)
	})
	wg.Wait()
	start := time.Unix(1_700_000_000, 0)
	if len(at) != 3 || !at[0].Equal(start) || at[1].Sub(start) < 3*time.Second || at[2].Sub(start) < 6*time.Second {
		t.Fatalf("requests at %v, want 0 s, ≥3 s, ≥6 s", at)
	}
}
