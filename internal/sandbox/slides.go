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
	"html"
	"net/http"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// Route names of the slide providers.
const (
	SpeakerDeckOEmbed = "speakerdeck.oembed"
	DocswellOEmbed    = "docswell.oembed"
	GoogleSlidesPage  = "googleslides.page"
)

// SpeakerDeckDeck is a deck the SpeakerDeck emulator knows.
type SpeakerDeckDeck struct {
	User, Slug, Title, AuthorName string
	// PlayerID is the hex id in https://speakerdeck.com/player/{id}.
	PlayerID string
	// HTML overrides the oEmbed html (to test a missing player URL).
	HTML *string
	// Type overrides "rich" (to test §6.4 validation).
	Type string
}

// SpeakerDeck emulates https://speakerdeck.com/oembed.json (seed 001 §2).
// Like the real endpoint it matches the deck URL exactly (it follows no
// renames), answers JSON with the player iframe in html, and answers an
// HTML "not found" page for anything else.
type SpeakerDeck struct {
	mu    sync.Mutex
	decks map[string]SpeakerDeckDeck // by canonical URL
}

var _ = unseeded(NewSpeakerDeck)

// NewSpeakerDeck returns an emulator knowing the seed's example deck
// (seed 001 §2.2).
func NewSpeakerDeck() *SpeakerDeck {
	s := &SpeakerDeck{decks: map[string]SpeakerDeckDeck{}}
	s.AddDeck(SpeakerDeckDeck{User: "jnunemaker", Slug: "atom", Title: "Atom", AuthorName: "John Nunemaker",
		PlayerID: "31f86a9069ae0132dede22511952b5a3"})
	return s
}

// AddDeck publishes a deck.
func (s *SpeakerDeck) AddDeck(d SpeakerDeckDeck) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.decks["https://speakerdeck.com/"+d.User+"/"+d.Slug] = d
}

// Upstream implements Emulator.
func (s *SpeakerDeck) Upstream() upstream.Name { return upstream.SpeakerDeck }

// Register implements Emulator.
func (s *SpeakerDeck) Register(srv *Server) {
	srv.Handle(SpeakerDeckOEmbed, "GET /speakerdeck/oembed.json", s.oembed)
}

func (s *SpeakerDeck) oembed(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	d, ok := s.decks[r.URL.Query().Get("url")]
	s.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<!DOCTYPE html>\n<html><head><title>Speaker Deck - Not Found</title></head><body><h1>Not Found</h1></body></html>\n"))
		return
	}
	frame := fmt.Sprintf(`<iframe id="talk_frame_282032" class="speakerdeck-iframe" src="https://speakerdeck.com/player/%s" width="710" height="399" style="aspect-ratio:710/399; border:0; padding:0; margin:0; background:transparent;" frameborder="0" allowtransparency="true" allowfullscreen="allowfullscreen"></iframe>`, d.PlayerID)
	if d.HTML != nil {
		frame = *d.HTML
	}
	typ := "rich"
	if d.Type != "" {
		typ = d.Type
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"type": typ, "version": "1.0", "provider_name": "Speaker Deck", "provider_url": "https://speakerdeck.com/",
		"title": d.Title, "author_name": d.AuthorName, "author_url": "https://speakerdeck.com/" + d.User,
		"html": frame, "width": 710, "height": 399, "ratio": 1.7777777777777777,
	})
}

// DocswellSlide is a slide the Docswell emulator knows.
type DocswellSlide struct {
	User, ID, Title, AuthorName string
	// Thumbnail, when set, is returned as thumbnail_url.
	Thumbnail string
	// OmitURL drops the url field (to test §6.4 validation).
	OmitURL bool
	// VersionString answers "1.0" instead of Docswell's number 1.
	VersionString bool
}

// Docswell emulates https://www.docswell.com/service/oembed (seed 001 §3):
// version as the number 1, the embed URL in url, and
// {"status": 404, "errors": "Slide not found or private"} for an unknown
// or private slide.
type Docswell struct {
	mu     sync.Mutex
	slides map[string]DocswellSlide // by "user/ID"
}

var _ = unseeded(NewDocswell)

// NewDocswell returns an emulator knowing the seed's example slide (§3.2).
func NewDocswell() *Docswell {
	d := &Docswell{slides: map[string]DocswellSlide{}}
	d.AddSlide(DocswellSlide{User: "takai", ID: "59VDWM", Title: "Windows Server 2025 新機能おさらい", AuthorName: "Kazuki Takai"})
	return d
}

// AddSlide publishes a slide.
func (d *Docswell) AddSlide(s DocswellSlide) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.slides[s.User+"/"+s.ID] = s
}

// Upstream implements Emulator.
func (d *Docswell) Upstream() upstream.Name { return upstream.Docswell }

// Register implements Emulator.
func (d *Docswell) Register(srv *Server) {
	srv.Handle(DocswellOEmbed, "GET /docswell/service/oembed", d.oembed)
}

func (d *Docswell) oembed(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if f := q.Get("format"); f != "" && f != "json" {
		writeJSON(w, http.StatusNotImplemented, map[string]any{"status": 501, "errors": "Not Implemented"})
		return
	}
	key := strings.TrimPrefix(q.Get("url"), "https://www.docswell.com/s/")
	if i := strings.IndexByte(key, '-'); i > 0 {
		key = key[:i]
	}
	d.mu.Lock()
	s, ok := d.slides[key]
	d.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"status": 404, "errors": "Slide not found or private"})
		return
	}
	embed := "https://www.docswell.com/slide/" + s.ID + "/embed"
	body := map[string]any{
		"type": "rich", "version": 1, "provider_name": "ドクセル", "provider_url": "https://www.docswell.com/",
		"title": s.Title, "author_name": s.AuthorName, "author_url": "https://www.docswell.com/user/" + s.User,
		"html":  `<iframe src="` + embed + `" allowfullscreen="true" class="docswell-iframe" width="620" height="349" style="border: 1px solid #ccc; display: block; margin: 0px auto; padding: 0px; aspect-ratio: 620/349;"></iframe>`,
		"width": 620, "height": 349,
	}
	if !s.OmitURL {
		body["url"] = embed
	}
	if s.VersionString {
		body["version"] = "1.0"
	}
	if s.Thumbnail != "" {
		body["thumbnail_url"] = s.Thumbnail
	}
	writeJSON(w, http.StatusOK, body)
}

// GooglePresentation is a presentation the Google Slides emulator knows.
type GooglePresentation struct {
	ID, Title string
	// Private presentations redirect to Google's sign-in page, off the
	// docs.google.com host, as the real service does.
	Private bool
	// EmptyTitle serves <title></title>, as a page that renders its title
	// with JavaScript does (seed 001 §4.3).
	EmptyTitle bool
	// PadBeforeTitle puts this many bytes of markup before <title>.
	PadBeforeTitle int
	// PadAfterTitle puts this many bytes after it (real pages are large).
	PadAfterTitle int
}

// GoogleSlides emulates the public presentation pages on docs.google.com
// (seed 001 §4): the title with " - Google Slides" or, for Japanese,
// " - Google スライド"; a 302 to accounts.google.com for a private one; a
// 404 page for an unknown id.
type GoogleSlides struct {
	mu    sync.Mutex
	decks map[string]GooglePresentation
}

var _ = unseeded(NewGoogleSlides)

// NewGoogleSlides returns an emulator knowing one public presentation.
func NewGoogleSlides() *GoogleSlides {
	g := &GoogleSlides{decks: map[string]GooglePresentation{}}
	g.AddPresentation(GooglePresentation{ID: "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms", Title: "Quarterly review"})
	return g
}

// AddPresentation publishes a presentation.
func (g *GoogleSlides) AddPresentation(p GooglePresentation) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.decks[p.ID] = p
}

// Upstream implements Emulator.
func (g *GoogleSlides) Upstream() upstream.Name { return upstream.GoogleSlides }

// Register implements Emulator.
func (g *GoogleSlides) Register(srv *Server) {
	srv.Handle(GoogleSlidesPage, "GET /googleslides/presentation/d/{id}", g.page)
	srv.Handle(GoogleSlidesPage, "GET /googleslides/presentation/d/{id}/{rest...}", g.page)
}

func (g *GoogleSlides) page(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if id == "e" { // published to the web: /presentation/d/e/{id}/pub
		pub, _, _ := strings.Cut(r.PathValue("rest"), "/")
		id = "e/" + pub
	}
	g.mu.Lock()
	p, ok := g.decks[id]
	g.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<!DOCTYPE html><html lang=en><meta charset=utf-8><title>Error 404 (Not Found)!!1</title><p><b>404.</b> <ins>That’s an error.</ins>"))
		return
	}
	if p.Private {
		http.Redirect(w, r, "https://accounts.google.com/ServiceLogin?service=wise&continue=https://docs.google.com/presentation/d/"+p.ID, http.StatusFound)
		return
	}
	suffix := " - Google Slides"
	if strings.HasPrefix(strings.ToLower(r.Header.Get("Accept-Language")), "ja") {
		suffix = " - Google スライド"
	}
	title := html.EscapeString(p.Title) + suffix
	if p.EmptyTitle {
		title = ""
	}
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">`)
	b.WriteString(strings.Repeat(" ", p.PadBeforeTitle))
	b.WriteString("<title>" + title + "</title>")
	b.WriteString(`<meta property="og:title" content="` + html.EscapeString(p.Title) + `"></head><body><script>`)
	b.WriteString(strings.Repeat("x", p.PadAfterTitle))
	b.WriteString("</script></body></html>")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}
