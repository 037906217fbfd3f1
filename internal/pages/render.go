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
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
)

// style is every page's CSS: a single column readable at 360 px, text
// that wraps rather than scrolls sideways (long links and commands
// included), contrast above WCAG AA, a visible focus ring.
const style = `*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:1rem/1.6 system-ui,-apple-system,"Segoe UI","Hiragino Sans","Noto Sans JP",sans-serif;color:#1b1b1f;background:#f6f7f9}
main{max-width:40rem;margin:0 auto;padding:1.5rem 1rem 3rem;background:#fff;min-height:100vh}
h1{display:flex;gap:.6rem;align-items:center;font-size:1.5rem;line-height:1.3;margin:.5rem 0 1rem}
h1 svg{flex:none;width:2rem;height:2rem}
h2{font-size:1.15rem;margin:1.75rem 0 .5rem}
p,li{overflow-wrap:anywhere}
ol{padding-left:1.4rem}
li{margin:.35rem 0}
a{color:#0b57d0;text-decoration:underline}
a:focus-visible,summary:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
code,pre{font:.9rem/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#eef0f3;border-radius:4px}
code{padding:.1rem .25rem;overflow-wrap:anywhere}
pre{padding:.75rem;white-space:pre-wrap;overflow-wrap:anywhere}
.button{display:inline-block;margin:.5rem 0;padding:.6rem 1rem;border-radius:6px;background:#0b57d0;color:#fff;text-decoration:none;font-weight:600}
details{margin-top:2rem;border-top:1px solid #d0d4da;padding-top:.75rem;color:#3c3f44}
.status{color:#50545b;font-size:.875rem}`

// countdown counts a waiting page's seconds down and loads it again; a
// browser without scripts reloads by the meta refresh in <noscript>.
const countdown = `(function(){var e=document.getElementById("retry-in");if(!e)return;var n=parseInt(e.textContent,10);var t=setInterval(function(){n--;if(n<=0){clearInterval(t);location.reload();}else{e.textContent=String(n);}},1000);})();`

// csp allows the page's own style and script, by hash, and nothing else:
// no other script, no external font, image or frame, no form posting
// away, no embedding.
var csp = "default-src 'none'; style-src '" + hash(style) + "'; script-src '" + hash(countdown) +
	"'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// CSP is the Content-Security-Policy every page is sent with.
func CSP() string { return csp }

// icons are drawn inline: a glyph from the reader's fonts (✅ was an empty
// box without an emoji font) says nothing the heading does not.
var icons = map[Mark]template.HTML{
	Done:    `<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><circle cx="12" cy="12" r="11" fill="#137333"/><path d="M6.5 12.5l3.5 3.5 7.5-8" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round" stroke-linejoin="round"/></svg>`,
	Wait:    `<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><circle cx="12" cy="12" r="11" fill="#8a5a00"/><path d="M12 6v6l4 2.5" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/></svg>`,
	Refused: `<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><circle cx="12" cy="12" r="11" fill="#b3261e"/><path d="M8 8l8 8M16 8l-8 8" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/></svg>`,
	Info:    `<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><circle cx="12" cy="12" r="11" fill="#0b57d0"/><path d="M12 11v6M12 7.2v.1" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/></svg>`,
}

var layout = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}}</title>
<style>{{.Style}}</style>
{{if .RetryIn}}<noscript><meta http-equiv="refresh" content="{{.RetryIn}}"></noscript>{{end}}
</head><body><main>
<h1>{{.Icon}}<span>{{.Title}}</span></h1>
{{range .Lines}}<p>{{.}}</p>
{{end}}{{if .Link}}<p><a class="button" href="{{.Link.Href}}" target="_blank" rel="noopener noreferrer">{{.Link.Label}}</a></p>
{{end}}{{if .RetryIn}}<p role="status">{{.RetryText}}</p>
{{end}}{{range .Sections}}<h2>{{.Heading}}</h2>
{{range .Lines}}<p>{{.}}</p>
{{end}}{{if .Steps}}<ol>{{range .Steps}}<li>{{.}}</li>{{end}}</ol>
{{end}}{{if .Code}}<pre><code>{{.Code}}</code></pre>
{{end}}{{end}}{{if .Admin}}<details><summary>{{.AdminHeading}}</summary>
{{range .Admin}}<pre><code>{{.}}</code></pre>
{{end}}</details>
{{end}}<p class="status">HTTP {{.Status}}</p>
</main>{{if .RetryIn}}<script>{{.Script}}</script>{{end}}</body></html>
`))

// Write answers w with p in the language r's Accept-Language prefers (the
// server's default, WithDefault, when it names none served): private (no-store, no Referer), framed by
// nothing, styled and scripted only by itself.
func Write(w http.ResponseWriter, r *http.Request, p Page) error {
	l := Negotiate(r.Header.Get("Accept-Language"), DefaultOf(r.Context()))
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Language", string(l))
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Add("Vary", "Accept-Language")
	if p.RetryIn > 0 {
		h.Set("Retry-After", strconv.Itoa(p.RetryIn))
	}
	w.WriteHeader(p.Status)
	return layout.Execute(w, view(l, p))
}

// view is p in l, as the layout reads it.
func view(l Lang, p Page) map[string]any {
	say := func(ls []Line) []template.HTML {
		out := make([]template.HTML, len(ls))
		for i, x := range ls {
			out[i] = x.html(l)
		}
		return out
	}
	sections := make([]map[string]any, len(p.Sections))
	for i, s := range p.Sections {
		sections[i] = map[string]any{"Heading": s.Heading.html(l), "Lines": say(s.Lines), "Steps": say(s.Steps), "Code": s.Code}
	}
	v := map[string]any{
		"Lang": l, "Title": p.Title.plain(l), "Icon": icons[p.Mark], "Lines": say(p.Lines), "Sections": sections,
		"Admin": p.Admin, "AdminHeading": forPlatformTeam.In(l), "Status": p.Status,
		"Style": template.CSS(style), "Script": template.JS(countdown), //nolint:gosec // G203: both are this file's constants, whose hashes the CSP allows
		"RetryIn": p.RetryIn, "RetryText": retrying(p.RetryIn).html(l),
	}
	if p.Link != nil {
		// A string: html/template refuses a javascript: or other unsafe
		// URL (the database's link comes from Notion's answer).
		v["Link"] = map[string]any{"Href": p.Link.Href, "Label": p.Link.Label.plain(l)}
	}
	return v
}

// plain is the line as text (escaped by the template).
func (x Line) plain(l Lang) string { return x.Text.In(l, x.args(l, false)...) }

// Code is an argument shown as code (a URL to paste, a property name).
type Code string

// Strong is an argument shown in bold.
type Strong string

// markup is an argument that is HTML already (the layout's own).
type markup string

// html is the line with the catalogue's text and its arguments escaped,
// Code and Strong arguments set in <code> and <b>: the catalogue's text is
// the page's, what fills it may come from anyone.
func (x Line) html(l Lang) template.HTML {
	return template.HTML(sprintf(template.HTMLEscapeString(x.Text.format(l)), x.args(l, true))) //nolint:gosec // every argument is escaped by args; the catalogue's text is ours
}

// args are the line's arguments in l: Texts in l's words; as HTML (every
// string escaped, Code and Strong in their elements, markup as it is) or
// as text. Numbers stay numbers.
func (x Line) args(l Lang, html bool) []any {
	esc, wrap := func(s string) string { return s }, func(_, s string) string { return s }
	if html {
		esc = template.HTMLEscapeString
		wrap = func(tag, s string) string { return "<" + tag + ">" + template.HTMLEscapeString(s) + "</" + tag + ">" }
	}
	out := make([]any, len(x.Args))
	for i, a := range x.Args {
		switch v := a.(type) {
		case Code:
			out[i] = wrap("code", string(v))
		case Strong:
			out[i] = wrap("b", string(v))
		case markup:
			out[i] = string(v)
		case Text:
			out[i] = esc(v.In(l))
		case string:
			out[i] = esc(v)
		case fmt.Stringer:
			out[i] = esc(v.String())
		default:
			out[i] = a
		}
	}
	return out
}

// retrying is the line a waiting page shows; its number counts down.
func retrying(n int) Line {
	return Say(retryText, markup(`<span id="retry-in">`+strconv.Itoa(n)+`</span>`))
}

type defaultKey struct{}

// WithDefault is ctx carrying the language a page is written in when the
// reader's Accept-Language names none served (the chart's
// webhook.language).
func WithDefault(ctx context.Context, l Lang) context.Context {
	return context.WithValue(ctx, defaultKey{}, l)
}

// DefaultOf is the default language ctx carries, English when none.
func DefaultOf(ctx context.Context) Lang {
	if l, ok := ctx.Value(defaultKey{}).(Lang); ok && l != "" {
		return l
	}
	return En
}

// WantsHTML reports whether r comes from a browser (its Accept names
// text/html) rather than an API client, which keeps the JSON errors.
func WantsHTML(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		media, params, _ := strings.Cut(part, ";")
		if strings.TrimSpace(media) == "text/html" && quality(params) > 0 {
			return true
		}
	}
	return false
}

// quality is the q parameter of one Accept or Accept-Language entry's
// parameters (1 when absent or unreadable).
func quality(params string) float64 {
	for _, p := range strings.Split(params, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return f
			}
		}
	}
	return 1
}
