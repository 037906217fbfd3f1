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

package oembed

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

func TestPageTitle(t *testing.T) {
	for page, want := range map[string]string{
		"<html><head><title>Deck - Google Slides</title>":        "Deck",
		"<title>デッキ - Google スライド</title>":                       "デッキ",
		"<TITLE lang=en>\n  A &amp; B - Google Slides\n</TITLE>": "A & B",
		"<title></title>":                 "",
		"<title> - Google Slides</title>": "",
		"no title here":                   "",
		"<title>Slides about Google Slides</title><title>second</title>": "Slides about Google Slides",
		"<title>Keep - Google Slides - Google Slides</title>":            "Keep - Google Slides",
		"<title>unterminated": "",
	} {
		if got := pageTitle([]byte(page)); got != want {
			t.Errorf("pageTitle(%q) = %q, want %q", page, got, want)
		}
	}
}

func jsonResponse(body string) *outbound.Response {
	return &outbound.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: []byte(body)}
}

func TestParseOEmbedVersions(t *testing.T) {
	for body, ok := range map[string]bool{
		`{"type":"rich","version":"1.0"}`: true,
		`{"type":"rich","version":1}`:     true,
		`{"type":"rich"}`:                 true,
		`{"type":"rich","version":{}}`:    false,
		`{"type":"link","version":"1.0"}`: false,
		`[]`:                              false,
	} {
		_, err := parseOEmbed(upstream.Docswell, jsonResponse(body))
		if (err == nil) != ok {
			t.Errorf("%s: err = %v, want ok=%v", body, err, ok)
		}
		if err != nil && !outbound.IsPermanent(err) {
			t.Errorf("%s: %v is not permanent", body, err)
		}
	}
}

// FuzzParseOEmbed: any body either parses or fails permanently; nothing
// panics.
func FuzzParseOEmbed(f *testing.F) {
	f.Add(`{"type":"rich","version":1,"url":"https://www.docswell.com/slide/X/embed"}`, "application/json")
	f.Add(`{"type":"rich","html":"<iframe src=\"https://speakerdeck.com/player/ab\">"}`, "application/json; charset=utf-8")
	f.Add(`{"status": 404, "errors": "Slide not found or private"}`, "text/html")
	f.Fuzz(func(t *testing.T, body, contentType string) {
		resp := &outbound.Response{Status: 200, Header: http.Header{"Content-Type": {contentType}}, Body: []byte(body)}
		r, err := parseOEmbed(upstream.SpeakerDeck, resp)
		if err != nil {
			if !outbound.IsPermanent(err) {
				t.Fatalf("non-permanent error %v", err)
			}
			return
		}
		if r.Type != "rich" {
			t.Fatalf("accepted type %q", r.Type)
		}
		_ = speakerDeckPlayer.FindStringSubmatch(r.HTML)
	})
}

// FuzzPageTitle: the title extractor never panics and returns valid UTF-8
// for valid UTF-8 input, trimmed.
func FuzzPageTitle(f *testing.F) {
	f.Add("<title>Deck - Google Slides</title>")
	f.Add("<title>x - Google スライド - Google スライド</title>")
	f.Fuzz(func(t *testing.T, page string) {
		got := pageTitle([]byte(page))
		if utf8.ValidString(page) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 title %q", got)
		}
		if got != strings.TrimSpace(got) {
			t.Fatalf("untrimmed title %q", got)
		}
	})
}
