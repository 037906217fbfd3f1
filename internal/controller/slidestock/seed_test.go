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

package slidestock_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

const (
	atomURL   = "https://speakerdeck.com/jnunemaker/atom"
	atomEmbed = "https://speakerdeck.com/player/31f86a9069ae0132dede22511952b5a3"
	docsURL   = "https://www.docswell.com/s/takai/59VDWM-2024-windows-server"
	docsEmbed = "https://www.docswell.com/slide/59VDWM/embed"
	gid       = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"
	gURL      = "https://docs.google.com/presentation/d/" + gid + "/edit?usp=sharing"
)

func strptr(s string) *string { return &s }

type row struct {
	name    string
	url     string
	setup   func()
	phase   v1alpha1.SlidePhase
	reason  string         // Ready's reason when Ready, Stalled's when Failed
	calls   map[string]int // upstream calls per sandbox route
	event   string         // the Warning Event expected, if any
	check   func(t *testing.T, s *v1alpha1.SlideStock)
	elapsed time.Duration // at least this long from create to settled
}

func fields(title, author, embed string) func(*testing.T, *v1alpha1.SlideStock) {
	return func(t *testing.T, s *v1alpha1.SlideStock) {
		t.Helper()
		if s.Status.Title != title || s.Status.AuthorName != author || s.Status.EmbedURL != embed || s.Status.ThumbnailURL != "" {
			t.Fatalf("metadata = %q / %q / %q / %q, want %q / %q / %q / empty thumbnail",
				s.Status.Title, s.Status.AuthorName, s.Status.EmbedURL, s.Status.ThumbnailURL, title, author, embed)
		}
	}
}

func lastErrorHas(sub string) func(*testing.T, *v1alpha1.SlideStock) {
	return func(t *testing.T, s *v1alpha1.SlideStock) {
		t.Helper()
		if !strings.Contains(s.Status.LastError, sub) {
			t.Fatalf("lastError %q lacks %q", s.Status.LastError, sub)
		}
	}
}

func calls(route string, n int) map[string]int { return map[string]int{route: n} }

// TestSeedRows drives every row of seed 001's tables through the
// controller: §2.5 (SpeakerDeck), §3.4 (Docswell), §4.3–4.5 (Google
// Slides), §6.4 (validation), §7.2 (what is retried), §9 (timeouts) and
// §10 (size caps, allowed hosts, redirects).
func TestSeedRows(t *testing.T) {
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a request left the upstream hosts")
	}))
	defer elsewhere.Close()

	sd.AddDeck(sandbox.SpeakerDeckDeck{User: "someone", Slug: "video-deck", Title: "V", AuthorName: "A", PlayerID: "ab", Type: "video"})
	sd.AddDeck(sandbox.SpeakerDeckDeck{User: "someone", Slug: "no-player", Title: "N", AuthorName: "A", HTML: strptr(`<div>no iframe</div>`)})
	dw.AddSlide(sandbox.DocswellSlide{User: "someone", ID: "NOURL1", Title: "T", AuthorName: "A", OmitURL: true})
	dw.AddSlide(sandbox.DocswellSlide{User: "someone", ID: "STRVER", Title: "Version as string", AuthorName: "A", VersionString: true})
	dw.AddSlide(sandbox.DocswellSlide{User: "someone", ID: "THUMB1", Title: "With thumbnail", AuthorName: "A", Thumbnail: "https://www.docswell.com/thumbnail/THUMB1.jpg"})
	const (
		private = "1PrivatePrivatePrivatePrivatePrivatePrivate0"
		empty   = "1EmptyTitleEmptyTitleEmptyTitleEmptyTitle000"
		big     = "1BigPageBigPageBigPageBigPageBigPageBigPage00"
		late    = "1LateTitleLateTitleLateTitleLateTitleLateTi00"
	)
	gs.AddPresentation(sandbox.GooglePresentation{ID: private, Title: "Secret", Private: true})
	gs.AddPresentation(sandbox.GooglePresentation{ID: empty, Title: "x", EmptyTitle: true})
	gs.AddPresentation(sandbox.GooglePresentation{ID: big, Title: "Big & <Bold>", PadAfterTitle: 800 << 10})
	gs.AddPresentation(sandbox.GooglePresentation{ID: late, Title: "Too late", PadBeforeTitle: 600 << 10})

	gpage := func(id string) string { return "https://docs.google.com/presentation/d/" + id + "/edit" }
	rows := []row{
		// §2.5 SpeakerDeck.
		{name: "SpeakerDeck 200 is Ready with title, author and the iframe src", url: atomURL,
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.SpeakerDeckOEmbed, 1),
			check: fields("Atom", "John Nunemaker", atomEmbed)},
		{name: "SpeakerDeck 404 fails at once", url: "https://speakerdeck.com/jnunemaker/gone",
			phase: v1alpha1.SlideFailed, reason: v1alpha1.UpstreamRejectedReason, calls: calls(sandbox.SpeakerDeckOEmbed, 1),
			event: slidestockFetchFailed, check: lastErrorHas("HTTP 404")},
		{name: "SpeakerDeck 5xx is retried four times in all, then Failed with a dead-letter Event", url: atomURL,
			setup: func() { box.SetFault(sandbox.SpeakerDeckOEmbed, sandbox.Fault{Status: 503}) },
			phase: v1alpha1.SlideFailed, reason: v1alpha1.RetriesExhaustedReason, calls: calls(sandbox.SpeakerDeckOEmbed, 4),
			event: slidestockRetriesExhausted, check: lastErrorHas("HTTP 503")},
		{name: "SpeakerDeck 5xx twice then 200 is Ready after three attempts", url: atomURL,
			setup: func() { box.SetFault(sandbox.SpeakerDeckOEmbed, sandbox.Fault{Status: 502, Times: 2}) },
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.SpeakerDeckOEmbed, 3),
			check: func(t *testing.T, s *v1alpha1.SlideStock) {
				if s.Status.Attempts != 3 || s.Status.LastError != "" {
					t.Fatalf("attempts %d lastError %q", s.Status.Attempts, s.Status.LastError)
				}
			}},
		// §3.4 Docswell.
		{name: "Docswell 200 is Ready with the url field as embed URL and version 1 as a number", url: docsURL,
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.DocswellOEmbed, 1),
			check: fields("Windows Server 2025 新機能おさらい", "Kazuki Takai", docsEmbed)},
		{name: "Docswell version as the string 1.0 is accepted too", url: "https://www.docswell.com/s/someone/STRVER",
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.DocswellOEmbed, 1),
			check: fields("Version as string", "A", "https://www.docswell.com/slide/STRVER/embed")},
		{name: "Docswell thumbnail_url is kept when the provider returns one", url: "https://www.docswell.com/s/someone/THUMB1",
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.DocswellOEmbed, 1),
			check: func(t *testing.T, s *v1alpha1.SlideStock) {
				if s.Status.ThumbnailURL != "https://www.docswell.com/thumbnail/THUMB1.jpg" {
					t.Fatalf("thumbnail %q", s.Status.ThumbnailURL)
				}
			}},
		{name: "Docswell 404 (not found or private) fails at once", url: "https://www.docswell.com/s/takai/ZZZZZZ",
			phase: v1alpha1.SlideFailed, reason: v1alpha1.UpstreamRejectedReason, calls: calls(sandbox.DocswellOEmbed, 1),
			event: slidestockFetchFailed, check: lastErrorHas("HTTP 404")},
		{name: "Docswell 5xx once is retried and then Ready", url: docsURL,
			setup: func() { box.SetFault(sandbox.DocswellOEmbed, sandbox.Fault{Status: 500, Times: 1}) },
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.DocswellOEmbed, 2)},
		// §4.3–4.5 Google Slides: always Ready once the embed URL is built.
		{name: "Google Slides public page gives the title without the Japanese suffix", url: gURL,
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.GoogleSlidesPage, 1),
			check: fields("Quarterly review", "", "https://docs.google.com/presentation/d/"+gid+"/embed")},
		{name: "Google Slides private page (sign-in redirect off the host) is Ready without a title", url: gpage(private),
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.GoogleSlidesPage, 1),
			check: fields("", "", "https://docs.google.com/presentation/d/"+private+"/embed")},
		{name: "Google Slides unknown id (404) is Ready without a title", url: gpage("1NoSuchNoSuchNoSuchNoSuchNoSuchNoSuchNoSuch00"),
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.GoogleSlidesPage, 1),
			check: fields("", "", "https://docs.google.com/presentation/d/1NoSuchNoSuchNoSuchNoSuchNoSuchNoSuchNoSuch00/embed")},
		{name: "Google Slides empty title tag is Ready without a title", url: gpage(empty),
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.GoogleSlidesPage, 1),
			check: fields("", "", "https://docs.google.com/presentation/d/"+empty+"/embed")},
		{name: "Google Slides 5xx on the page is Ready without a title and is not retried", url: gURL,
			setup: func() { box.SetFault(sandbox.GoogleSlidesPage, sandbox.Fault{Status: 503}) },
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.GoogleSlidesPage, 1),
			check: fields("", "", "https://docs.google.com/presentation/d/"+gid+"/embed")},
		{name: "Google Slides page over 500 KB still gives a title near its top, unescaped", url: gpage(big),
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.GoogleSlidesPage, 1),
			check: fields("Big & <Bold>", "", "https://docs.google.com/presentation/d/"+big+"/embed")},
		{name: "Google Slides title past the first 500 KB is not read", url: gpage(late),
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.GoogleSlidesPage, 1),
			check: fields("", "", "https://docs.google.com/presentation/d/"+late+"/embed")},
		// §6.4 validation: an answer that fails it is permanent (§7.2: parse failure is not retried).
		{name: "oEmbed 200 with a content type other than application/json fails at once", url: atomURL,
			setup: func() {
				box.SetFault(sandbox.SpeakerDeckOEmbed, sandbox.Fault{Status: 200, ContentType: "text/html", Body: `{"type":"rich"}`})
			},
			phase: v1alpha1.SlideFailed, reason: v1alpha1.UpstreamRejectedReason, calls: calls(sandbox.SpeakerDeckOEmbed, 1),
			event: slidestockFetchFailed, check: lastErrorHas("want application/json")},
		{name: "oEmbed status other than 200 fails at once", url: docsURL,
			setup: func() {
				box.SetFault(sandbox.DocswellOEmbed, sandbox.Fault{Status: 203, Body: `{"type":"rich","url":"https://x"}`})
			},
			phase: v1alpha1.SlideFailed, reason: v1alpha1.UpstreamRejectedReason, calls: calls(sandbox.DocswellOEmbed, 1),
			check: lastErrorHas("want 200")},
		{name: "oEmbed type other than rich fails at once", url: "https://speakerdeck.com/someone/video-deck",
			phase: v1alpha1.SlideFailed, reason: v1alpha1.UpstreamRejectedReason, calls: calls(sandbox.SpeakerDeckOEmbed, 1),
			check: lastErrorHas(`want "rich"`)},
		{name: "SpeakerDeck html without a player iframe fails at once", url: "https://speakerdeck.com/someone/no-player",
			phase: v1alpha1.SlideFailed, reason: v1alpha1.UpstreamRejectedReason, calls: calls(sandbox.SpeakerDeckOEmbed, 1),
			check: lastErrorHas("no https://speakerdeck.com/player/ iframe")},
		{name: "Docswell answer without url fails at once", url: "https://www.docswell.com/s/someone/NOURL1",
			phase: v1alpha1.SlideFailed, reason: v1alpha1.UpstreamRejectedReason, calls: calls(sandbox.DocswellOEmbed, 1),
			check: lastErrorHas("no https embed url")},
		{name: "oEmbed body that does not parse fails at once", url: atomURL,
			setup: func() { box.SetFault(sandbox.SpeakerDeckOEmbed, sandbox.Fault{Malformed: true}) },
			phase: v1alpha1.SlideFailed, reason: v1alpha1.UpstreamRejectedReason, calls: calls(sandbox.SpeakerDeckOEmbed, 1),
			check: lastErrorHas("not valid JSON")},
		// §7.2: the other rows.
		{name: "oEmbed 403 fails at once", url: atomURL,
			setup: func() { box.SetFault(sandbox.SpeakerDeckOEmbed, sandbox.Fault{Status: 403}) },
			phase: v1alpha1.SlideFailed, reason: v1alpha1.UpstreamRejectedReason, calls: calls(sandbox.SpeakerDeckOEmbed, 1),
			event: slidestockFetchFailed, check: lastErrorHas("HTTP 403")},
		{name: "429 with Retry-After waits that long, then Ready", url: docsURL,
			setup: func() { box.SetFault(sandbox.DocswellOEmbed, sandbox.Fault{Status: 429, RetryAfter: "1", Times: 1}) },
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.DocswellOEmbed, 2), elapsed: time.Second},
		// §9: a 10 s timeout in production, testTimeout here.
		{name: "a timeout is retried, then Ready", url: docsURL,
			setup: func() {
				box.SetFault(sandbox.DocswellOEmbed, sandbox.Fault{Delay: sandbox.Duration(3 * testTimeout), Times: 1})
			},
			phase: v1alpha1.SlideReady, reason: v1alpha1.SucceededReason, calls: calls(sandbox.DocswellOEmbed, 2)},
		{name: "timeouts on every attempt end Failed", url: atomURL,
			setup: func() {
				box.SetFault(sandbox.SpeakerDeckOEmbed, sandbox.Fault{Delay: sandbox.Duration(3 * testTimeout)})
			},
			phase: v1alpha1.SlideFailed, reason: v1alpha1.RetriesExhaustedReason, calls: calls(sandbox.SpeakerDeckOEmbed, 4),
			event: slidestockRetriesExhausted, check: lastErrorHas("no answer within")},
		// §10: size caps and hosts.
		{name: "an oEmbed answer over 100 KB fails at once", url: atomURL,
			setup: func() { box.SetFault(sandbox.SpeakerDeckOEmbed, sandbox.Fault{OversizedBytes: 200 << 10}) },
			phase: v1alpha1.SlideFailed, reason: v1alpha1.UpstreamRejectedReason, calls: calls(sandbox.SpeakerDeckOEmbed, 1),
			check: lastErrorHas("larger than 102400 bytes")},
		{name: "a redirect off the provider's host is refused", url: docsURL,
			setup: func() {
				box.SetFault(sandbox.DocswellOEmbed, sandbox.Fault{Status: 302, Location: elsewhere.URL + "/steal"})
			},
			phase: v1alpha1.SlideFailed, reason: v1alpha1.UpstreamRejectedReason, calls: calls(sandbox.DocswellOEmbed, 1),
			check: lastErrorHas("not a configured upstream")},
		// No row for a URL that passes admission but not the parser: the CRD's
		// rule is the parser's grammar (api/v1alpha1 tests), so only a stock
		// created under an older CRD can reach InvalidSpec.
	}

	ns, err := env.Namespace("seed")
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			box.ClearFaults()
			box.ResetCalls()
			if tc.setup != nil {
				tc.setup()
			}
			defer box.ClearFaults()
			key := types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("row-%02d", i)}
			began := time.Now()
			create(t, key, tc.url)
			s := waitFor(t, key, "Ready or Failed", settled)
			if el := time.Since(began); el < tc.elapsed {
				t.Fatalf("settled after %s, want at least %s", el, tc.elapsed)
			}
			if s.Status.Phase != tc.phase {
				t.Fatalf("phase %s (lastError %q), want %s", s.Status.Phase, s.Status.LastError, tc.phase)
			}
			condType := v1alpha1.ReadyCondition
			if tc.phase == v1alpha1.SlideFailed {
				condType = v1alpha1.StalledCondition
				if status.IsTrue(s, v1alpha1.ReadyCondition) {
					t.Fatal("a Failed stock is Ready")
				}
			}
			if c := status.Get(s, condType); c == nil || c.Status != metav1.ConditionTrue || c.Reason != tc.reason {
				t.Fatalf("%s condition = %+v, want True/%s", condType, c, tc.reason)
			}
			for route, n := range tc.calls {
				if got := box.Calls(route); got != n {
					t.Fatalf("%s called %d times, want %d", route, got, n)
				}
			}
			if tc.check != nil {
				tc.check(t, s)
			}
			if tc.event != "" {
				waitEvent(t, key, tc.event, s.Spec.URL)
			}
		})
	}
}

func create(t *testing.T, key types.NamespacedName, url string) {
	t.Helper()
	s := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	s.Spec.URL = url
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

const (
	slidestockFetchFailed      = "FetchFailed"
	slidestockRetriesExhausted = "RetriesExhausted"
)

// waitEvent waits for a Warning Event about the stock whose note holds its
// URL: the dead-letter record a person reads with kubectl events.
func waitEvent(t *testing.T, key types.NamespacedName, reason, url string) {
	t.Helper()
	testenv.EventuallyWithin(t, 10*time.Second, fmt.Sprintf("a Warning Event %s with the URL for %s", reason, key.Name), func() bool {
		var list eventsv1.EventList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(key.Namespace)); err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Items {
			if e.Regarding.Name == key.Name && e.Reason == reason && e.Type == "Warning" && strings.Contains(e.Note, url) {
				return true
			}
		}
		return false
	})
}
