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
	"regexp"
	"strings"
)

// The accepted URLs are one grammar, written once here as regular
// expressions and read twice: by Parse, and by the API server, which runs
// the same expressions in the SlideStock CRD's CEL rule (AdmissionRule).
// Both sides use Go's regexp engine (CEL's matches() is RE2 through Go),
// strings.TrimSpace (CEL's trim()) and ASCII-only lower-casing (CEL's
// lowerAscii()), so a URL is admitted exactly when Parse accepts it; a
// test compares the rule in config/crd with AdmissionRule, another sends
// every example through a real API server.
//
// Each site is matched in two parts:
//   - scheme, host and port on the ASCII-lower-cased URL, because they are
//     case-insensitive (RFC 3986 §3.1 and §3.2.2). Only ASCII letters are
//     folded: a host with other characters is not one of the three.
//   - the path on the URL as written, because paths are case-sensitive.
//     Its authority part is [^/?#]+, which spans exactly the characters
//     the host pattern matched, as neither contains '/', '?' or '#'.
//
// After the path, a query or fragment of anything but control characters
// is allowed and dropped from the canonical URL.
const (
	port       = `(:(80|443))?`
	authority  = `^[A-Za-z]+://[^/?#]+`
	queryOrTag = `([?#][^[:cntrl:]]*)?$`

	speakerDeckHost = `^https?://(www\.)?speakerdeck\.com` + port + `/`
	speakerDeckPath = authority + `/+([A-Za-z0-9][A-Za-z0-9_.-]*)/+([A-Za-z0-9][A-Za-z0-9_.-]*)/*` + queryOrTag
	// Docswell: the slide id leads the last segment, optionally followed by
	// "-" and a title slug: /s/takai/59VDWM-windows-server-2025.
	docswellHost = `^https?://(www\.)?docswell\.com` + port + `/`
	docswellPath = authority + `/+s/+([A-Za-z0-9_-]+)/+([A-Za-z0-9]+)(-[^/?#[:cntrl:]]*)?/*` + queryOrTag

	// Google Slides: /presentation/d/{id}, optionally behind the account
	// switcher /u/{n}, or /d/e/{id} for a copy published to the web,
	// followed by anything (/edit, /pub, …). Google file ids are long
	// URL-safe base64 strings.
	googleSlidesHost = `^https?://docs\.google\.com` + port + `/`
	googleSlidesPath = authority + `/+presentation(/+u/+[0-9]+)?/+d/+(e/+)?([A-Za-z0-9_-]{20,})([/?#][^[:cntrl:]]*)?$`
)

// speakerDeckReservedNames are first path segments that are SpeakerDeck's
// own pages, not accounts, compared without case as SpeakerDeck routes
// them. speakerDeckReserved refuses them in the grammar.
var speakerDeckReservedNames = []string{
	"player", "embed", "c", "signin", "signup", "login", "logout", "search", "features", "pro", "faq", "terms",
	"privacy", "assets", "oembed.json", "oembed", "account", "new", "users", "categories", "about", "help",
}

var speakerDeckReserved = func() string {
	alts := make([]string, len(speakerDeckReservedNames))
	for i, n := range speakerDeckReservedNames {
		alts[i] = regexp.QuoteMeta(n)
	}
	return `^https?://(www\.)?speakerdeck\.com` + port + `/+(` + strings.Join(alts, "|") + `)/`
}()

// site is one provider's part of the grammar.
type site struct {
	provider       Provider
	host, path     string
	reserved       string // optional: refused although host and path match
	hostRE, pathRE *regexp.Regexp
	reservedRE     *regexp.Regexp
	// ref builds the Ref from the path's submatches.
	ref func(m []string) Ref
}

var sites = []*site{
	{provider: SpeakerDeck, host: speakerDeckHost, path: speakerDeckPath, reserved: speakerDeckReserved,
		ref: func(m []string) Ref {
			return Ref{Provider: SpeakerDeck, CanonicalURL: "https://speakerdeck.com/" + m[1] + "/" + m[2], User: m[1], ID: m[2]}
		}},
	{provider: Docswell, host: docswellHost, path: docswellPath,
		ref: func(m []string) Ref {
			return Ref{Provider: Docswell, CanonicalURL: "https://www.docswell.com/s/" + m[1] + "/" + m[2], User: m[1], ID: m[2]}
		}},
	{provider: GoogleSlides, host: googleSlidesHost, path: googleSlidesPath,
		ref: func(m []string) Ref {
			id := m[3]
			if m[2] != "" {
				id = "e/" + id
			}
			return Ref{Provider: GoogleSlides, CanonicalURL: "https://docs.google.com/presentation/d/" + id, ID: id}
		}},
}

func init() {
	for _, s := range sites {
		s.hostRE, s.pathRE = regexp.MustCompile(s.host), regexp.MustCompile(s.path)
		if s.reserved != "" {
			s.reservedRE = regexp.MustCompile(s.reserved)
		}
	}
}

// match runs the grammar on a URL.
func match(raw string) (Ref, bool) {
	s := strings.TrimSpace(raw)
	l := lowerASCII(s)
	for _, st := range sites {
		if !st.hostRE.MatchString(l) {
			continue
		}
		m := st.pathRE.FindStringSubmatch(s)
		if m == nil || (st.reservedRE != nil && st.reservedRE.MatchString(l)) {
			return Ref{}, false
		}
		return st.ref(m), true
	}
	return Ref{}, false
}

// lowerASCII folds A–Z only, as CEL's lowerAscii() does.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// AdmissionMessage is what the API server answers for a URL the grammar
// refuses.
const AdmissionMessage = "url must be a presentation on SpeakerDeck (https://speakerdeck.com/{user}/{slug}), Docswell (https://www.docswell.com/s/{user}/{slideId}) or Google Slides (https://docs.google.com/presentation/d/{id})"

// AdmissionRule is the CEL rule of SlideStock's spec.url: the grammar in
// CEL. It is written into the +kubebuilder:validation:XValidation marker
// of api/v1alpha1/slidestock_types.go (with each backslash doubled), and a
// test fails when the two differ. Patterns are CEL raw strings (r'…'), so
// they read as they do here.
func AdmissionRule() string {
	const s, l = "self.trim()", "self.trim().lowerAscii()"
	alts := make([]string, 0, len(sites))
	for _, st := range sites {
		alt := l + ".matches(r'" + st.host + "') && " + s + ".matches(r'" + st.path + "')"
		if st.reserved != "" {
			alt += " && !" + l + ".matches(r'" + st.reserved + "')"
		}
		alts = append(alts, "("+alt+")")
	}
	return strings.Join(alts, " || ")
}
