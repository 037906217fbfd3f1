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

package sandbox

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"html/template"
	"net/http"
	"net/url"
	"sync/atomic"
)

// Pieces the OAuth emulators (GoogleOAuth, Notion, Discord) share.

// consentRedirect reads the client's redirect_uri from a consent page
// request. It answers 400 with refusal and returns false for an unknown
// client (known is false), a missing or malformed redirect_uri, or a
// response_type other than code.
func consentRedirect(w http.ResponseWriter, r *http.Request, known bool, refusal string) (*url.URL, bool) {
	q := r.URL.Query()
	back, err := url.Parse(q.Get("redirect_uri"))
	if !known || err != nil || q.Get("redirect_uri") == "" || q.Get("response_type") != "code" {
		http.Error(w, refusal, http.StatusBadRequest)
		return nil, false
	}
	return back, true
}

// redirectToClient sends the browser back to the client's redirect_uri
// with params as its query, and the request's state if it has one.
func redirectToClient(w http.ResponseWriter, r *http.Request, back *url.URL, params url.Values) {
	if st := r.URL.Query().Get("state"); st != "" {
		params.Set("state", st)
	}
	back.RawQuery = params.Encode()
	// Redirecting to the client's redirect_uri is what a consent page does;
	// the sandbox serves tests and the demo only.
	http.Redirect(w, r, back.String(), http.StatusFound) //nolint:gosec // G710: a consent page redirects to the client's redirect_uri by design
}

// formClient reads a form-encoded token request's client credentials: the
// Basic Authorization header, else client_id and client_secret in the body
// (RFC 6749 §2.3.1; Google and Discord take both). The form must be parsed.
func formClient(r *http.Request) (id, secret string) {
	if id, secret, ok := r.BasicAuth(); ok {
		return id, secret
	}
	return r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
}

// pkceMatches checks a PKCE code_verifier against the S256
// code_challenge (RFC 7636 §4.6).
func pkceMatches(challenge, verifier string) bool {
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// ConsentPrompt makes a consent page ask, as the real ones do: with it on,
// GET on the authorize route answers an HTML page whose form posts the
// person's decision back to the same URL — the button #allow ("allow") or
// #deny ("deny") — and only that POST redirects to the client. Off (the
// default), the page approves at once, which is what HTTP-level tests and
// the demo want; browser tests turn it on to click through the page as a
// person would. The three OAuth emulators embed it.
type ConsentPrompt struct{ on atomic.Bool }

// SetConsentPrompt turns the asking page on or off.
func (p *ConsentPrompt) SetConsentPrompt(on bool) { p.on.Store(on) }

// decided is called by a consent page once the request is known good:
// it reports whether the person approved. Otherwise it has answered — the
// page asking (GET with the prompt on), the redirect carrying denial (a
// POST deciding "deny": the provider's own error parameters), or 405 (a
// POST with the prompt off, or a decision it does not know: 400).
func (p *ConsentPrompt) decided(w http.ResponseWriter, r *http.Request, back *url.URL, app string, denial url.Values) bool {
	on := p.on.Load()
	switch {
	case r.Method == http.MethodGet && !on:
		return true
	case r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_ = consentPage.Execute(w, map[string]string{"App": app, "Action": r.URL.RequestURI(), "Client": r.URL.Query().Get("client_id")})
		return false
	case !on:
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return false
	}
	switch r.PostFormValue("decision") {
	case "allow":
		return true
	case "deny":
		v := back.Query()
		for k, vs := range denial {
			v[k] = vs
		}
		redirectToClient(w, r, back, v)
		return false
	default:
		http.Error(w, "no decision", http.StatusBadRequest)
		return false
	}
}

// consentPage is the asking page: two submit buttons of one form, which
// posts to the page's own URL (its query carries the request).
var consentPage = template.Must(template.New("consent").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.App}} — authorize access</title></head>
<body><h1>{{.App}}</h1>
<p id="ask">The application <b>{{.Client}}</b> asks for access to your account.</p>
<form method="post" action="{{.Action}}">
<button id="allow" type="submit" name="decision" value="allow">Allow access</button>
<button id="deny" type="submit" name="decision" value="deny">Cancel</button>
</form></body></html>
`))
