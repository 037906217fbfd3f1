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

package pages

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestNegotiatePicksTheReadersLanguage(t *testing.T) {
	for _, c := range []struct {
		header string
		def    Lang
		want   Lang
	}{
		{"", En, En},
		{"", Ja, Ja},
		{"ja", En, Ja},
		{"ja-JP,ja;q=0.9,en-US;q=0.8,en;q=0.7", En, Ja},
		{"en-US,en;q=0.9,ja;q=0.8", Ja, En},
		{"fr-FR,fr;q=0.9", Ja, Ja},
		{"fr, ja;q=0.5, en;q=0.4", En, Ja},
		{"en;q=0, ja;q=0.1", En, Ja},
		{"*", Ja, Ja},
	} {
		if got := Negotiate(c.header, c.def); got != c.want {
			t.Errorf("Accept-Language %q (default %s) chose %s, want %s", c.header, c.def, got, c.want)
		}
	}
}

func TestWantsHTMLTellsBrowsersFromAPIClients(t *testing.T) {
	for accept, want := range map[string]bool{
		"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8": true,
		"application/json": false,
		"*/*":              false,
		"":                 false,
		"text/html;q=0":    false,
	} {
		r := httptest.NewRequest(http.MethodGet, "/r/x", nil)
		r.Header.Set("Accept", accept)
		if got := WantsHTML(r); got != want {
			t.Errorf("Accept %q: WantsHTML %v, want %v", accept, got, want)
		}
	}
}

// What fills a text is escaped; the page carries its language, a
// viewport, the CSP whose hashes match its own style and script, and no
// Referer or cache.
func TestAPageEscapesWhatFillsItAndCarriesItsGuarantees(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/oauth/notion/callback", nil)
	r.Header.Set("Accept-Language", "ja")
	r = r.WithContext(WithDefault(context.Background(), En))
	w := httptest.NewRecorder()
	p := Page{Status: http.StatusServiceUnavailable, Mark: Wait, Title: Say(NotionDoneTitle),
		Lines: []Line{Say(NotionWorkspaceLine, Strong(`<script>alert(1)</script>`))}, RetryIn: 7, Admin: []string{"kubectl get x"}}
	if err := Write(w, r, p); err != nil {
		t.Fatal(err)
	}
	body, h := w.Body.String(), w.Header()
	for _, want := range []string{`<html lang="ja">`, `name="viewport"`, "連携が完了しました", "&lt;script&gt;alert(1)&lt;/script&gt;",
		`<span id="retry-in">7</span>`, "運用担当の方へ", "kubectl get x"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("an argument was written as HTML")
	}
	for k, want := range map[string]string{"Content-Security-Policy": csp, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
		"Content-Language": "ja", "Retry-After": "7", "X-Content-Type-Options": "nosniff"} {
		if got := h.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if !strings.Contains(csp, hash(style)) || !strings.Contains(csp, hash(countdown)) || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q", csp)
	}
	if !strings.Contains(body, "<style>"+style+"</style>") || !strings.Contains(body, "<script>"+countdown+"</script>") {
		t.Error("the style or script on the page is not the one whose hash the CSP allows")
	}
}
