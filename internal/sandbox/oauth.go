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
	"net/http"
	"net/url"
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
