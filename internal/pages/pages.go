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

// Package pages renders the HTML a person's browser gets from the webhook
// server (issue 36): the OAuth walk's pages, the share link's refusals
// and its Discord sign-in. Every page is one layout — a phone's viewport,
// self-contained styles under a strict Content-Security-Policy, icons
// drawn inline rather than taken from the reader's fonts, the language
// served in `lang` — and every text comes from one catalogue
// (messages.json, the file a translator edits; hack/msggen checks it and
// makes its Go) in each language served, chosen from Accept-Language.
package pages

import (
	"fmt"
	"strings"
)

// Lang is a language the pages are written in.
type Lang string

const (
	// En is English.
	En Lang = "en"
	// Ja is Japanese, the seeds' language.
	Ja Lang = "ja"
)

// Langs are the languages served, in the order a tie is broken.
var Langs = []Lang{En, Ja}

// ParseLang is the served language named s ("en", "ja", "en-GB", "ja-JP"),
// or false.
func ParseLang(s string) (Lang, bool) {
	base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "-")
	for _, l := range Langs {
		if base == string(l) {
			return l, true
		}
	}
	return "", false
}

// Negotiate picks the served language the Accept-Language header prefers
// (RFC 9110 §12.5.4: quality values, a primary tag matching its
// subtags), or def when it names none of them.
func Negotiate(acceptLanguage string, def Lang) Lang {
	best, bestQ := def, 0.0
	for _, part := range strings.Split(acceptLanguage, ",") {
		tag, params, _ := strings.Cut(part, ";")
		l, ok := ParseLang(tag)
		if !ok {
			continue
		}
		if q := quality(params); q > bestQ {
			best, bestQ = l, q
		}
	}
	return best
}

// Text is one message of the catalogue in every language served: a
// format (fmt's verbs; %[n]s where a language orders its arguments
// otherwise) per language.
type Text struct{ En, Ja string }

// In is t in l with args.
func (t Text) In(l Lang, args ...any) string { return sprintf(t.format(l), args) }

// format is t's format in l (English where t has no Japanese).
func (t Text) format(l Lang) string {
	if l == Ja && t.Ja != "" {
		return t.Ja
	}
	return t.En
}

// sprintf is fmt.Sprintf, and f itself without arguments.
func sprintf(f string, args []any) string {
	if len(args) == 0 {
		return f
	}
	return fmt.Sprintf(f, args...)
}

// Line is a Text with its arguments.
type Line struct {
	Text Text
	Args []any
}

// Say is a Line.
func Say(t Text, args ...any) Line { return Line{Text: t, Args: args} }

// Mark is the icon beside a page's heading.
type Mark int

const (
	// Info is a page that is neither done nor refused.
	Info Mark = iota
	// Done is a success.
	Done
	// Wait is a page that retries, or work still under way.
	Wait
	// Refused is an error.
	Refused
)

// Link is a link the page offers.
type Link struct {
	Href  string
	Label Line
}

// Page is what one answer shows.
type Page struct {
	// Status is the HTTP status.
	Status int
	Mark   Mark
	Title  Line
	// Lines are paragraphs; Link, when set, follows them.
	Lines []Line
	Link  *Link
	// Sections follow, each with a heading and numbered steps.
	Sections []Section
	// Admin are lines for a platform engineer (kubectl commands), shown
	// folded under a heading that says who they are for.
	Admin []string
	// RetryIn, when positive, is the seconds after which the page loads
	// itself again (a countdown shows it; Retry-After says it to clients).
	RetryIn int
}

// Section is a heading with paragraphs and numbered steps.
type Section struct {
	Heading Line
	Lines   []Line
	Steps   []Line
	// Code, when set, is shown after the steps as text to copy.
	Code string
}
