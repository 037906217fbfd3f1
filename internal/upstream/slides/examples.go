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

import "strings"

// Example is a URL and what Parse makes of it. The tables are the
// parser's test cases, exported so that the API tests send the same URLs
// through a real API server and check that admission agrees.
type Example struct {
	URL string
	// Canonical is the canonical URL of an accepted example.
	Canonical string
	// Reason is a part of Parse's refusal message for a refused example.
	Reason string
}

// exampleGoogleID is a real-looking Google file id (the Sheets API's
// sample spreadsheet).
const exampleGoogleID = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"

// AcceptedExamples are URLs people copy, each with its canonical URL.
func AcceptedExamples() []Example {
	const gid = exampleGoogleID
	const sd, dw, gs = "https://speakerdeck.com/jnunemaker/atom", "https://www.docswell.com/s/takai/59VDWM", "https://docs.google.com/presentation/d/" + gid
	return []Example{
		// SpeakerDeck: address bar, share menu, http, www, slashes, ?slide=, #fragment.
		{URL: "https://speakerdeck.com/jnunemaker/atom", Canonical: sd},
		{URL: "http://speakerdeck.com/jnunemaker/atom", Canonical: sd},
		{URL: "https://www.speakerdeck.com/jnunemaker/atom/", Canonical: sd},
		{URL: "https://speakerdeck.com/jnunemaker/atom?slide=3", Canonical: sd},
		{URL: "https://speakerdeck.com/jnunemaker/atom#slide-2", Canonical: sd},
		{URL: "https://speakerdeck.com//jnunemaker//atom//", Canonical: sd},
		{URL: "https://speakerdeck.com/drsprime/dokutazupuraimude-dong-kukotonixing-wei-gaarufang-he", Canonical: "https://speakerdeck.com/drsprime/dokutazupuraimude-dong-kukotonixing-wei-gaarufang-he"},
		{URL: "https://speakerdeck.com/a.b_c-d/v1.2_final-deck", Canonical: "https://speakerdeck.com/a.b_c-d/v1.2_final-deck"},
		// Scheme and host in any case (RFC 3986 §3.1, §3.2.2); the path keeps its case.
		{URL: "https://SpeakerDeck.com/user/deck", Canonical: "https://speakerdeck.com/user/deck"},
		{URL: "  HTTPS://SpeakerDeck.com/jnunemaker/atom  ", Canonical: sd},
		{URL: "Https://WWW.SPEAKERDECK.COM/JNunemaker/Atom", Canonical: "https://speakerdeck.com/JNunemaker/Atom"},
		// Surrounding white space of any kind, and the default ports.
		{URL: "\thttps://speakerdeck.com/jnunemaker/atom\n", Canonical: sd},
		{URL: "https://speakerdeck.com:443/jnunemaker/atom", Canonical: sd},
		{URL: "http://www.speakerdeck.com:80/jnunemaker/atom", Canonical: sd},
		// Docswell: with and without www and title slug, page fragments.
		{URL: "https://www.docswell.com/s/takai/59VDWM", Canonical: dw},
		{URL: "https://www.docswell.com/s/takai/59VDWM-2024-12-04-windows-server-2025", Canonical: dw},
		{URL: "https://docswell.com/s/takai/59VDWM-windows#p12", Canonical: dw},
		{URL: "http://www.docswell.com/s/takai/59VDWM/", Canonical: dw},
		{URL: "https://www.docswell.com/s/takai/59VDWM-%E3%82%B9%E3%83%A9%E3%82%A4%E3%83%89", Canonical: dw},
		{URL: "https://www.docswell.com/s/takai/59VDWM-スライド", Canonical: dw},
		{URL: "HTTPS://WWW.DOCSWELL.COM/s/takai/59VDWM", Canonical: dw},
		{URL: "https://Docswell.com:443/s/takai/59VDWM?from=share", Canonical: dw},
		// Google Slides: edit, view, present, preview, embed, pub, account switcher, query and fragment.
		{URL: gs + "/edit#slide=id.p", Canonical: gs},
		{URL: gs + "/edit?usp=sharing", Canonical: gs},
		{URL: gs + "/view", Canonical: gs},
		{URL: gs + "/present?slide=id.g1", Canonical: gs},
		{URL: gs + "/preview", Canonical: gs},
		{URL: gs + "/embed?start=false&loop=false", Canonical: gs},
		{URL: gs, Canonical: gs},
		{URL: gs + "#slide=id.p3", Canonical: gs},
		{URL: "https://docs.google.com/presentation/u/1/d/" + gid + "/edit", Canonical: gs},
		{URL: "http://docs.google.com/presentation/d/" + gid + "/", Canonical: gs},
		{URL: "https://Docs.Google.COM/presentation/d/" + gid + "/edit", Canonical: gs},
		{URL: "https://docs.google.com/presentation/d/e/2PACX-1vQexampleexampleexampleexample/pub?start=false", Canonical: "https://docs.google.com/presentation/d/e/2PACX-1vQexampleexampleexampleexample"},
		{URL: "https://docs.google.com/presentation/u/0/d/e/2PACX-1vQexampleexampleexampleexample/pub", Canonical: "https://docs.google.com/presentation/d/e/2PACX-1vQexampleexampleexampleexample"},
		// At the length limit, counted in characters.
		{URL: "https://speakerdeck.com/jnunemaker/atom?" + strings.Repeat("é", MaxURLLength-len("https://speakerdeck.com/jnunemaker/atom?")), Canonical: sd},
	}
}

// RefusedExamples are URLs that are not one presentation, each with a part
// of the reason Parse gives.
func RefusedExamples() []Example {
	const gid = exampleGoogleID
	return []Example{
		{URL: "", Reason: "empty"},
		{URL: "   ", Reason: "empty"},
		{URL: "https://example.com/jnunemaker/atom", Reason: "is none of these"},
		{URL: "https://speakerdeck.com.evil.example/jnunemaker/atom", Reason: "is none of these"},
		{URL: "https://speakerdeck.com./jnunemaker/atom", Reason: "is none of these"},
		// A Kelvin sign is a K only to Unicode case folding, not to DNS.
		{URL: "https://spea\u212Aerdeck.com/jnunemaker/atom", Reason: "is none of these"},
		{URL: "ftp://speakerdeck.com/jnunemaker/atom", Reason: "only http and https"},
		{URL: "speakerdeck.com/jnunemaker/atom", Reason: "only http and https"},
		{URL: "https://someone@speakerdeck.com/jnunemaker/atom", Reason: "user name or password"},
		{URL: "https://speakerdeck.com:8443/jnunemaker/atom", Reason: "must not name a port"},
		{URL: "https://speakerdeck.com:/jnunemaker/atom", Reason: "must not name a port"},
		{URL: "https://speakerdeck.com/", Reason: "home page"},
		{URL: "https://speakerdeck.com/jnunemaker", Reason: "is a SpeakerDeck profile"},
		{URL: "https://speakerdeck.com/player/31f86a9069ae0132dede22511952b5a3", Reason: "player URL"},
		{URL: "https://speakerdeck.com/Player/31f86a9069ae0132dede22511952b5a3", Reason: "player URL"},
		{URL: "https://speakerdeck.com/c/technology", Reason: "is a SpeakerDeck page, not a deck"},
		{URL: "https://speakerdeck.com/jnunemaker/atom/stats", Reason: "two path segments"},
		{URL: "https://speakerdeck.com/jnunemaker/at%20om", Reason: "letters, digits"},
		{URL: "https://speakerdeck.com/jnunemaker/atom?slide=\x7f", Reason: "cannot be parsed"},
		{URL: "https://www.docswell.com/slide/59VDWM/embed", Reason: "Docswell embed URL"},
		{URL: "https://www.docswell.com/s/takai", Reason: "Docswell profile"},
		{URL: "https://www.docswell.com/user/takai", Reason: "https://www.docswell.com/s/{user}/{slideId}"},
		{URL: "https://www.docswell.com/S/takai/59VDWM", Reason: "https://www.docswell.com/s/{user}/{slideId}"},
		{URL: "https://www.docswell.com/s/takai/-59VDWM", Reason: "the id in letters and digits"},
		{URL: "https://docs.google.com/document/d/" + gid + "/edit", Reason: "Google document is not a presentation"},
		{URL: "https://docs.google.com/spreadsheets/d/" + gid + "/edit", Reason: "Google spreadsheet is not a presentation"},
		{URL: "https://docs.google.com/presentation/d/short/edit", Reason: "is not a Google Slides presentation id"},
		{URL: "https://docs.google.com/presentation/d/e/short/pub", Reason: "published Google Slides URL"},
		{URL: "https://docs.google.com/presentation/", Reason: "names its presentation"},
		{URL: "https://docs.google.com/Presentation/d/" + gid, Reason: "https://docs.google.com/presentation/d/{id}"},
		{URL: "https://docs.google.com/presentation/u/me/d/" + gid, Reason: "optionally behind /u/{number}"},
		{URL: "https://drive.google.com/file/d/" + gid + "/view", Reason: "Google Drive"},
		{URL: "https://speakerdeck.com/" + strings.Repeat("a", MaxURLLength), Reason: "longer than 2048"},
		{URL: "http://[::1", Reason: "cannot be parsed"},
	}
}
