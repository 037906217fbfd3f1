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

package slides

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

const gid = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"

func TestAcceptsWhatPeopleCopy(t *testing.T) {
	for _, tc := range []struct{ in, canonical string }{
		// SpeakerDeck: address bar, share menu, http, www, slashes, ?slide=, #fragment.
		{"https://speakerdeck.com/jnunemaker/atom", "https://speakerdeck.com/jnunemaker/atom"},
		{"http://speakerdeck.com/jnunemaker/atom", "https://speakerdeck.com/jnunemaker/atom"},
		{"https://www.speakerdeck.com/jnunemaker/atom/", "https://speakerdeck.com/jnunemaker/atom"},
		{"https://speakerdeck.com/jnunemaker/atom?slide=3", "https://speakerdeck.com/jnunemaker/atom"},
		{"https://speakerdeck.com/jnunemaker/atom#slide-2", "https://speakerdeck.com/jnunemaker/atom"},
		{"  HTTPS://SpeakerDeck.com/jnunemaker/atom  ", "https://speakerdeck.com/jnunemaker/atom"},
		{"https://speakerdeck.com/drsprime/dokutazupuraimude-dong-kukotonixing-wei-gaarufang-he", "https://speakerdeck.com/drsprime/dokutazupuraimude-dong-kukotonixing-wei-gaarufang-he"},
		// Docswell: with and without www and title slug, page fragments.
		{"https://www.docswell.com/s/takai/59VDWM", "https://www.docswell.com/s/takai/59VDWM"},
		{"https://www.docswell.com/s/takai/59VDWM-2024-12-04-windows-server-2025", "https://www.docswell.com/s/takai/59VDWM"},
		{"https://docswell.com/s/takai/59VDWM-windows#p12", "https://www.docswell.com/s/takai/59VDWM"},
		{"http://www.docswell.com/s/takai/59VDWM/", "https://www.docswell.com/s/takai/59VDWM"},
		// Google Slides: edit, view, present, preview, embed, pub, account switcher, query and fragment.
		{"https://docs.google.com/presentation/d/" + gid + "/edit#slide=id.p", "https://docs.google.com/presentation/d/" + gid},
		{"https://docs.google.com/presentation/d/" + gid + "/edit?usp=sharing", "https://docs.google.com/presentation/d/" + gid},
		{"https://docs.google.com/presentation/d/" + gid + "/view", "https://docs.google.com/presentation/d/" + gid},
		{"https://docs.google.com/presentation/d/" + gid + "/present?slide=id.g1", "https://docs.google.com/presentation/d/" + gid},
		{"https://docs.google.com/presentation/d/" + gid + "/embed?start=false&loop=false", "https://docs.google.com/presentation/d/" + gid},
		{"https://docs.google.com/presentation/d/" + gid, "https://docs.google.com/presentation/d/" + gid},
		{"https://docs.google.com/presentation/u/1/d/" + gid + "/edit", "https://docs.google.com/presentation/d/" + gid},
		{"http://docs.google.com/presentation/d/" + gid + "/", "https://docs.google.com/presentation/d/" + gid},
		{"https://docs.google.com/presentation/d/e/2PACX-1vQexampleexampleexampleexample/pub?start=false", "https://docs.google.com/presentation/d/e/2PACX-1vQexampleexampleexampleexample"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			ref, err := Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if ref.CanonicalURL != tc.canonical {
				t.Fatalf("canonical = %s, want %s", ref.CanonicalURL, tc.canonical)
			}
		})
	}
}

func TestProviderAndParts(t *testing.T) {
	ref, _ := Parse("https://www.docswell.com/s/takai/59VDWM-x")
	if ref.Provider != v1alpha1.ProviderDocswell || ref.User != "takai" || ref.ID != "59VDWM" {
		t.Fatalf("docswell ref = %+v", ref)
	}
	ref, _ = Parse("https://speakerdeck.com/jnunemaker/atom")
	if ref.Provider != v1alpha1.ProviderSpeakerDeck || ref.User != "jnunemaker" || ref.ID != "atom" {
		t.Fatalf("speakerdeck ref = %+v", ref)
	}
	ref, _ = Parse("https://docs.google.com/presentation/d/" + gid + "/edit")
	if ref.Provider != v1alpha1.ProviderGoogleSlides || ref.ID != gid || ref.User != "" {
		t.Fatalf("google ref = %+v", ref)
	}
}

func TestRefusesWithAReason(t *testing.T) {
	for _, tc := range []struct{ in, reason string }{
		{"", "empty"},
		{"https://example.com/jnunemaker/atom", "is none of these"},
		{"https://speakerdeck.com.evil.example/jnunemaker/atom", "is none of these"},
		{"ftp://speakerdeck.com/jnunemaker/atom", "only http and https"},
		{"https://user:pw@speakerdeck.com/jnunemaker/atom", "user name or password"},
		{"https://speakerdeck.com:8443/jnunemaker/atom", "must not name a port"},
		{"https://speakerdeck.com/", "home page"},
		{"https://speakerdeck.com/jnunemaker", "is a SpeakerDeck profile"},
		{"https://speakerdeck.com/player/31f86a9069ae0132dede22511952b5a3", "player URL"},
		{"https://speakerdeck.com/c/technology/atom", "is a SpeakerDeck page, not a deck"},
		{"https://speakerdeck.com/jnunemaker/atom/stats", "two path segments"},
		{"https://www.docswell.com/slide/59VDWM/embed", "Docswell embed URL"},
		{"https://www.docswell.com/s/takai", "Docswell profile"},
		{"https://www.docswell.com/user/takai", "https://www.docswell.com/s/{user}/{slideId}"},
		{"https://docs.google.com/document/d/" + gid + "/edit", "Google document is not a presentation"},
		{"https://docs.google.com/spreadsheets/d/" + gid + "/edit", "Google spreadsheet is not a presentation"},
		{"https://docs.google.com/presentation/d/short/edit", "is not a Google Slides presentation id"},
		{"https://docs.google.com/presentation/", "names its presentation"},
		{"https://drive.google.com/file/d/" + gid + "/view", "Google Drive"},
		{"https://speakerdeck.com/" + strings.Repeat("a", 2050), "longer than 2048"},
		{"http://[::1", "cannot be parsed"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := Parse(tc.in)
			if !errors.Is(err, ErrNotPresentation) {
				t.Fatalf("got %v, want ErrNotPresentation", err)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("reason %q lacks %q", err, tc.reason)
			}
		})
	}
}

// FuzzParse: Parse never panics; whatever it accepts has a canonical URL
// on one of the three fixed hosts (the SSRF guard of seed 001 §10.1), with
// no query, fragment or credentials, that parses back to the same Ref.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"https://speakerdeck.com/jnunemaker/atom", "https://www.docswell.com/s/takai/59VDWM-x#p2",
		"https://docs.google.com/presentation/u/0/d/" + gid + "/edit?usp=sharing",
		"https://docs.google.com/presentation/d/e/2PACX-1vQexampleexampleexample/pub",
		"http://speakerdeck.com/a/b?c=d", "https://docswell.com/slide/X/embed", "javascript:alert(1)",
	} {
		f.Add(s)
	}
	hosts := map[string]bool{"speakerdeck.com": true, "www.docswell.com": true, "docs.google.com": true}
	f.Fuzz(func(t *testing.T, in string) {
		ref, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrNotPresentation) {
				t.Fatalf("error %v does not wrap ErrNotPresentation", err)
			}
			return
		}
		u, perr := url.Parse(ref.CanonicalURL)
		if perr != nil || u.Scheme != "https" || !hosts[u.Host] || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			t.Fatalf("%q → canonical %q is not a fixed-host https URL", in, ref.CanonicalURL)
		}
		again, err := Parse(ref.CanonicalURL)
		if err != nil || again != ref {
			t.Fatalf("canonical %q does not parse back: %+v, %v (first %+v)", ref.CanonicalURL, again, err, ref)
		}
	})
}
