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
	"strings"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// Ref is a recognised presentation.
type Ref struct {
	Provider v1alpha1.SlideProvider
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

// MaxURLLength bounds the input, as the CRD does.
const MaxURLLength = 2048

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotPresentation, fmt.Sprintf(format, args...))
}

var (
	// SpeakerDeck account names and deck slugs.
	speakerDeckName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	// Docswell: the slide id leads the last segment, optionally followed by
	// "-" and a title slug: /s/takai/59VDWM-windows-server-2025.
	docswellSlide = regexp.MustCompile(`^([A-Za-z0-9]+)(?:-.*)?$`)
	docswellUser  = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	// Google file ids are long URL-safe base64 strings.
	googleID = regexp.MustCompile(`^[A-Za-z0-9_-]{20,}$`)
)

// speakerDeckReserved are first path segments that are SpeakerDeck's own
// pages, not accounts.
var speakerDeckReserved = map[string]bool{
	"player": true, "embed": true, "c": true, "signin": true, "signup": true, "login": true,
	"logout": true, "search": true, "features": true, "pro": true, "faq": true, "terms": true,
	"privacy": true, "assets": true, "oembed.json": true, "oembed": true, "account": true,
	"new": true, "users": true, "categories": true, "about": true, "help": true,
}

// Parse recognises a presentation URL.
func Parse(raw string) (Ref, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return Ref{}, refuse("the URL is empty")
	}
	if len(raw) > MaxURLLength {
		return Ref{}, refuse("the URL is longer than %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Ref{}, refuse("the URL cannot be parsed")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return Ref{}, refuse("only http and https URLs are accepted")
	}
	if u.User != nil {
		return Ref{}, refuse("the URL must not carry a user name or password")
	}
	if p := u.Port(); p != "" && p != "80" && p != "443" {
		return Ref{}, refuse("the URL must not name a port")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	segs := segments(u.EscapedPath())

	switch host {
	case "speakerdeck.com", "www.speakerdeck.com":
		return speakerDeck(segs)
	case "docswell.com", "www.docswell.com":
		return docswell(segs)
	case "docs.google.com":
		return googleSlides(segs)
	case "drive.google.com":
		return Ref{}, refuse("a file in Google Drive is not a Google Slides presentation; open it in Google Slides and copy that address")
	default:
		return Ref{}, refuse("accepted URLs are SpeakerDeck (https://speakerdeck.com/{user}/{slug}), Docswell (https://www.docswell.com/s/{user}/{slideId}) and Google Slides (https://docs.google.com/presentation/d/{id}); %q is none of these", host)
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

func speakerDeck(segs []string) (Ref, error) {
	switch {
	case len(segs) == 0:
		return Ref{}, refuse("the SpeakerDeck home page is not a deck")
	case segs[0] == "player" || segs[0] == "embed":
		return Ref{}, refuse("a SpeakerDeck player URL has no owner or slug; open the deck on speakerdeck.com and copy the address of its page")
	case speakerDeckReserved[strings.ToLower(segs[0])]:
		return Ref{}, refuse("https://speakerdeck.com/%s/… is a SpeakerDeck page, not a deck", segs[0])
	case len(segs) == 1:
		return Ref{}, refuse("https://speakerdeck.com/%s is a SpeakerDeck profile; open one of its decks and copy that address", segs[0])
	case len(segs) > 2:
		return Ref{}, refuse("a SpeakerDeck deck URL has two path segments, /{user}/{slug}")
	}
	user, slug := segs[0], segs[1]
	if !speakerDeckName.MatchString(user) || !speakerDeckName.MatchString(slug) {
		return Ref{}, refuse("SpeakerDeck user names and deck slugs are letters, digits, '-', '_' and '.'")
	}
	return Ref{
		Provider:     v1alpha1.ProviderSpeakerDeck,
		CanonicalURL: "https://speakerdeck.com/" + user + "/" + slug,
		User:         user, ID: slug,
	}, nil
}

func docswell(segs []string) (Ref, error) {
	if len(segs) >= 2 && segs[0] == "slide" {
		return Ref{}, refuse("a Docswell embed URL does not name the owner; open the slide on docswell.com and copy the address of its page (https://www.docswell.com/s/{user}/{slideId})")
	}
	if len(segs) == 0 || segs[0] != "s" {
		return Ref{}, refuse("a Docswell slide URL looks like https://www.docswell.com/s/{user}/{slideId}")
	}
	if len(segs) != 3 {
		if len(segs) == 2 {
			return Ref{}, refuse("https://www.docswell.com/s/%s is a Docswell profile; open one of its slides and copy that address", segs[1])
		}
		return Ref{}, refuse("a Docswell slide URL has the form /s/{user}/{slideId}")
	}
	user := segs[1]
	m := docswellSlide.FindStringSubmatch(segs[2])
	if !docswellUser.MatchString(user) || m == nil {
		return Ref{}, refuse("a Docswell slide URL has the form /s/{user}/{slideId}, the id in letters and digits")
	}
	return Ref{
		Provider:     v1alpha1.ProviderDocswell,
		CanonicalURL: "https://www.docswell.com/s/" + user + "/" + m[1],
		User:         user, ID: m[1],
	}, nil
}

func googleSlides(segs []string) (Ref, error) {
	if len(segs) == 0 {
		return Ref{}, refuse("the Google Docs home page is not a presentation")
	}
	switch segs[0] {
	case "presentation":
	case "document", "spreadsheets", "forms", "drawings":
		return Ref{}, refuse("a Google %s is not a presentation", strings.TrimSuffix(segs[0], "s"))
	default:
		return Ref{}, refuse("a Google Slides URL looks like https://docs.google.com/presentation/d/{id}")
	}
	rest := segs[1:]
	// Account switcher: /presentation/u/0/d/{id}.
	if len(rest) >= 2 && rest[0] == "u" {
		rest = rest[2:]
	}
	if len(rest) < 2 || rest[0] != "d" {
		return Ref{}, refuse("a Google Slides URL names its presentation: https://docs.google.com/presentation/d/{id}")
	}
	// Published to the web: /presentation/d/e/{publishedId}/pub.
	if rest[1] == "e" {
		if len(rest) < 3 || !googleID.MatchString(rest[2]) {
			return Ref{}, refuse("a published Google Slides URL looks like https://docs.google.com/presentation/d/e/{id}/pub")
		}
		return Ref{
			Provider:     v1alpha1.ProviderGoogleSlides,
			CanonicalURL: "https://docs.google.com/presentation/d/e/" + rest[2],
			ID:           "e/" + rest[2],
		}, nil
	}
	if !googleID.MatchString(rest[1]) {
		return Ref{}, refuse("%q is not a Google Slides presentation id", rest[1])
	}
	return Ref{
		Provider:     v1alpha1.ProviderGoogleSlides,
		CanonicalURL: "https://docs.google.com/presentation/d/" + rest[1],
		ID:           rest[1],
	}, nil
}
