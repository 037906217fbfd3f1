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

package notion

import (
	"strings"
	"unicode/utf16"

	"github.com/jomei/notionapi"
)

// MaxText is Notion's limit for one text object (seed 000 §3.6.2, §9.3),
// in UTF-16 code units: Notion measures "2000 characters" as JavaScript's
// String.length, so a character outside the Basic Multilingual Plane (an
// emoji, the mathematical letters 𝒪 and 𝔽 of arXiv abstracts) counts
// twice (https://developers.notion.com/reference/request-limits; users'
// reports: dwarvesf/dwarves-kit#403).
const MaxText = 2000

// maxRichText is Notion's limit of rich text objects in one property
// (https://developers.notion.com/reference/request-limits: "any array of
// rich text objects: 100 elements").
const maxRichText = 100

func plain(rt []notionapi.RichText) string {
	var b strings.Builder
	for _, t := range rt {
		b.WriteString(t.PlainText)
	}
	return b.String()
}

// Chunks splits text into text objects of at most MaxText UTF-16 code
// units (seed 000 §3.6.2), never inside a character, and at most Notion's
// 100 objects (the rest is dropped: 200,000 units, far beyond any
// abstract, reached only by the longest author lists).
func Chunks(text string) []notionapi.RichText {
	var out []notionapi.RichText
	for text != "" && len(out) < maxRichText {
		cut := fit(text)
		out = append(out, notionapi.RichText{Type: notionapi.ObjectTypeText, Text: &notionapi.Text{Content: text[:cut]}})
		text = text[cut:]
	}
	return out
}

// Truncate cuts text to MaxText UTF-16 code units, never inside a
// character (seed 000 §3.6.2, titles).
func Truncate(text string) string { return text[:fit(text)] }

// fit is the length in bytes of the longest prefix of text that Notion
// counts as at most MaxText characters: UTF-16 code units, two for a
// character beyond U+FFFF. Bytes that are not UTF-8 are sent as U+FFFD,
// one unit each.
func fit(text string) int {
	units := 0
	for i, r := range text {
		n := utf16.RuneLen(r)
		if n < 0 {
			n = 1
		}
		if units+n > MaxText {
			return i
		}
		units += n
	}
	return len(text)
}

// authorsText is the Authors property's text as UpdatePaper writes it:
// the names joined with ", ", within Notion's 100 text objects.
func authorsText(authors []string) string {
	var b strings.Builder
	for _, c := range Chunks(strings.Join(authors, ", ")) {
		b.WriteString(c.Text.Content)
	}
	return b.String()
}
