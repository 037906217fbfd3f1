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

// Package slides recognises the presentation URLs people copy from
// SpeakerDeck, Docswell and Google Slides, and reduces each to one
// canonical URL per presentation (seed 001 §5.1, the provider spec it
// refers to; the rules are written down in docs/slidestock.md).
package slides

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Provider is the site a deck is hosted on. Its values are those of the
// SlideStock API's status.provider (seed 001 §5.1); the API converts.
type Provider string

// The providers.
const (
	SpeakerDeck  Provider = "speakerdeck"
	Docswell     Provider = "docswell"
	GoogleSlides Provider = "google_slides"
)

// Ref is a recognised presentation.
type Ref struct {
	Provider Provider
	// CanonicalURL is the one URL for the presentation: the only URL sent
	// upstream (seed 001 §10.1).
	CanonicalURL string
	// User is the SpeakerDeck or Docswell account (empty for Google Slides).
	User string
	// ID is the deck slug (SpeakerDeck), slide id (Docswell) or
	// presentation id (Google Slides; "e/{id}" for a published copy).
	ID string
}

// ErrNotPresentation is wrapped by every refusal; the message says why and
// what to copy instead.
var ErrNotPresentation = errors.New("not a presentation URL")

// MaxURLLength bounds the input in characters, as the CRD's maxLength
// does (it counts characters, not bytes, and before trimming).
const MaxURLLength = 2048

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotPresentation, fmt.Sprintf(format, args...))
}

// Parse recognises a presentation URL. Whether it is accepted is decided by
// the grammar in grammar.go, which the API server also runs at admission,
// so a SlideStock that was admitted always parses; why a URL is refused is
// worked out afterwards, for the message.
func Parse(raw string) (Ref, error) {
	if utf8.RuneCountInString(raw) > MaxURLLength {
		return Ref{}, refuse("the URL is longer than %d characters", MaxURLLength)
	}
	if ref, ok := match(raw); ok {
		return ref, nil
	}
	return Ref{}, explain(strings.TrimSpace(raw))
}

var (
	speakerDeckName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	docswellSlide   = regexp.MustCompile(`^[A-Za-z0-9]+(?:-.*)?$`)
	docswellUser    = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	googleID        = regexp.MustCompile(`^[A-Za-z0-9_-]{20,}$`)
)

// explain says why the grammar refused s: what is wrong and what to copy
// instead. It never accepts; where it finds nothing specific it names the
// form the site's URLs have.
func explain(s string) error {
	if s == "" {
		return refuse("the URL is empty")
	}
	u, err := url.Parse(s)
	if err != nil {
		return refuse("the URL cannot be parsed")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return refuse("only http and https URLs are accepted")
	}
	if u.User != nil {
		return refuse("the URL must not carry a user name or password")
	}
	if _, port, found := strings.Cut(u.Host, ":"); found && port != "80" && port != "443" {
		return refuse("the URL must not name a port")
	}
	segs := segments(u.EscapedPath())
	switch host := lowerASCII(u.Hostname()); host {
	case "speakerdeck.com", "www.speakerdeck.com":
		return explainSpeakerDeck(segs)
	case "docswell.com", "www.docswell.com":
		return explainDocswell(segs)
	case "docs.google.com":
		return explainGoogleSlides(segs)
	case "drive.google.com":
		return refuse("a file in Google Drive is not a Google Slides presentation; open it in Google Slides and copy that address")
	default:
		return refuse("accepted URLs are SpeakerDeck (https://speakerdeck.com/{user}/{slug}), Docswell (https://www.docswell.com/s/{user}/{slideId}) and Google Slides (https://docs.google.com/presentation/d/{id}); %q is none of these", host)
	}
}

// segments splits an escaped path, dropping empty segments (doubled and
// trailing slashes).
func segments(escaped string) []string {
	var out []string
	for _, s := range strings.Split(escaped, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func explainSpeakerDeck(segs []string) error {
	switch {
	case len(segs) == 0:
		return refuse("the SpeakerDeck home page is not a deck")
	case strings.EqualFold(segs[0], "player") || strings.EqualFold(segs[0], "embed"):
		return refuse("a SpeakerDeck player URL has no owner or slug; open the deck on speakerdeck.com and copy the address of its page")
	case slices.Contains(speakerDeckReservedNames, lowerASCII(segs[0])):
		return refuse("https://speakerdeck.com/%s/… is a SpeakerDeck page, not a deck", segs[0])
	case len(segs) == 1:
		return refuse("https://speakerdeck.com/%s is a SpeakerDeck profile; open one of its decks and copy that address", segs[0])
	case len(segs) > 2:
		return refuse("a SpeakerDeck deck URL has two path segments, /{user}/{slug}")
	case !speakerDeckName.MatchString(segs[0]) || !speakerDeckName.MatchString(segs[1]):
		return refuse("SpeakerDeck user names and deck slugs are letters, digits, '-', '_' and '.'")
	}
	return refuse("a SpeakerDeck deck URL looks like https://speakerdeck.com/{user}/{slug}")
}

func explainDocswell(segs []string) error {
	switch {
	case len(segs) >= 2 && segs[0] == "slide":
		return refuse("a Docswell embed URL does not name the owner; open the slide on docswell.com and copy the address of its page (https://www.docswell.com/s/{user}/{slideId})")
	case len(segs) == 0 || segs[0] != "s":
		return refuse("a Docswell slide URL looks like https://www.docswell.com/s/{user}/{slideId}")
	case len(segs) == 2:
		return refuse("https://www.docswell.com/s/%s is a Docswell profile; open one of its slides and copy that address", segs[1])
	case len(segs) != 3:
		return refuse("a Docswell slide URL has the form /s/{user}/{slideId}")
	case !docswellUser.MatchString(segs[1]) || !docswellSlide.MatchString(segs[2]):
		return refuse("a Docswell slide URL has the form /s/{user}/{slideId}, the id in letters and digits")
	}
	return refuse("a Docswell slide URL looks like https://www.docswell.com/s/{user}/{slideId}")
}

func explainGoogleSlides(segs []string) error {
	if len(segs) == 0 {
		return refuse("the Google Docs home page is not a presentation")
	}
	switch segs[0] {
	case "presentation":
	case "document", "spreadsheets", "forms", "drawings":
		return refuse("a Google %s is not a presentation", strings.TrimSuffix(segs[0], "s"))
	default:
		return refuse("a Google Slides URL looks like https://docs.google.com/presentation/d/{id}")
	}
	rest := segs[1:]
	// Account switcher: /presentation/u/0/d/{id}.
	if len(rest) >= 2 && rest[0] == "u" {
		rest = rest[2:]
	}
	switch {
	case len(rest) < 2 || rest[0] != "d":
		return refuse("a Google Slides URL names its presentation: https://docs.google.com/presentation/d/{id}")
	case rest[1] == "e" && (len(rest) < 3 || !googleID.MatchString(rest[2])):
		return refuse("a published Google Slides URL looks like https://docs.google.com/presentation/d/e/{id}/pub")
	case rest[1] != "e" && !googleID.MatchString(rest[1]):
		return refuse("%q is not a Google Slides presentation id", rest[1])
	}
	return refuse("a Google Slides URL looks like https://docs.google.com/presentation/d/{id}, optionally behind /u/{number}")
}
