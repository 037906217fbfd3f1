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

// Package upstream holds the base URLs of every outside API Switchboard
// talks to, set with the repeatable flag `--upstream NAME=URL`, and refuses
// outbound requests to any other host. Both binaries use it: the manager for
// every SaaS call, the webhook server for the OAuth code exchange.
package upstream

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Name is an upstream's key in `--upstream NAME=URL`.
type Name string

// endpoint is an upstream's real public endpoint, and further hosts it
// reaches while it has its default URL (the Google client libraries call
// Sheets on its own host).
type endpoint struct {
	url        string
	extraHosts []string
}

// defaults are the declared upstreams' real endpoints.
var defaults = map[Name]endpoint{}

// declare adds an upstream and its real endpoint. Each service is declared
// where it is written (a new one in a file of its own in this package), so
// Names, the --upstream flag and the outbound policy know it with no list
// to edit. A name declared twice is a programming error.
func declare(n Name, url string, extraHosts ...string) Name {
	if _, dup := defaults[n]; dup {
		panic("upstream " + string(n) + " declared twice")
	}
	defaults[n] = endpoint{url: url, extraHosts: extraHosts}
	return n
}

// The upstreams. Each default is the real public endpoint.
var (
	Notion       = declare("notion", "https://api.notion.com")             // Notion API and OAuth token endpoint
	Arxiv        = declare("arxiv", "https://export.arxiv.org")            // arXiv Atom API (export.arxiv.org)
	SpeakerDeck  = declare("speakerdeck", "https://speakerdeck.com")       // SpeakerDeck oEmbed
	Docswell     = declare("docswell", "https://www.docswell.com")         // Docswell oEmbed
	GoogleSlides = declare("googleslides", "https://docs.google.com")      // Google Slides pages (title scraping)
	GoogleOAuth  = declare("googleoauth", "https://oauth2.googleapis.com") // Google OAuth 2.0 token endpoint
	// GoogleAccounts is Google's consent page. No outbound call goes there
	// (a person's browser does), but the OAuth routes build the authorize
	// URL on it, so the sandbox can stand in for it
	// (https://developers.google.com/identity/protocols/oauth2/web-server,
	// "Redirect to Google's OAuth 2.0 server").
	GoogleAccounts = declare("googleaccounts", "https://accounts.google.com")
	// GoogleAPIs is the Google Calendar and Sheets APIs.
	GoogleAPIs = declare("googleapis", "https://www.googleapis.com", "sheets.googleapis.com")
	S3         = declare("s3", "https://s3.amazonaws.com") // S3-compatible object storage
	Discord    = declare("discord", "https://discord.com") // Discord OAuth (seed 003's sessions)
)

// Names lists every upstream, sorted.
func Names() []Name {
	names := make([]Name, 0, len(defaults))
	for n := range defaults {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ErrHostNotAllowed is returned for a request to a host that no upstream
// names (an SSRF guard, seed 001 §10.1).
var ErrHostNotAllowed = errors.New("host is not a configured upstream")

// Set is the configured upstreams. The zero value is not usable: call
// NewSet. It implements flag.Value for `--upstream NAME=URL`.
type Set struct {
	mu         sync.RWMutex
	urls       map[Name]*url.URL
	overridden map[Name]bool
}

// NewSet returns the real public endpoints.
func NewSet() *Set {
	s := &Set{urls: map[Name]*url.URL{}, overridden: map[Name]bool{}}
	for n, d := range defaults {
		u, err := url.Parse(d.url)
		if err != nil {
			panic(err)
		}
		s.urls[n] = u
	}
	return s
}

// Set parses one `NAME=URL`; it is the flag.Value method.
func (s *Set) Set(value string) error {
	name, raw, ok := strings.Cut(value, "=")
	if !ok {
		return fmt.Errorf("want NAME=URL, got %q", value)
	}
	n := Name(strings.TrimSpace(name))
	if _, known := defaults[n]; !known {
		return fmt.Errorf("unknown upstream %q: want one of %s", n, joinNames())
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return fmt.Errorf("upstream %s: %w", n, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("upstream %s: %q is not an absolute http(s) URL", n, raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("upstream %s: %q must not carry a query, fragment or user info", n, raw)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.urls[n] = u
	s.overridden[n] = true
	return nil
}

// String lists the upstreams as NAME=URL, comma-separated (flag.Value).
func (s *Set) String() string {
	if s == nil {
		return ""
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	parts := make([]string, 0, len(s.urls))
	for _, n := range Names() {
		// flag.PrintDefaults calls String on a zero Set (no URLs) to tell
		// whether the flag has a default; skip what is not set.
		if u := s.urls[n]; u != nil {
			parts = append(parts, string(n)+"="+u.String())
		}
	}
	return strings.Join(parts, ",")
}

// Type names the flag's value for pflag users.
func (s *Set) Type() string { return "NAME=URL" }

// URL returns a copy of an upstream's base URL (no trailing slash).
func (s *Set) URL(n Name) *url.URL {
	s.mu.RLock()
	defer s.mu.RUnlock()
	u, ok := s.urls[n]
	if !ok {
		panic(fmt.Sprintf("upstream: unknown name %q", n))
	}
	c := *u
	return &c
}

// Endpoint joins a path to an upstream's base URL.
func (s *Set) Endpoint(n Name, path string) string {
	return strings.TrimSuffix(s.URL(n).String(), "/") + "/" + strings.TrimPrefix(path, "/")
}

// Hosts lists every host:port outbound requests may reach, sorted.
func (s *Set) Hosts() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	seen := map[string]bool{}
	for n, u := range s.urls {
		seen[hostPort(u)] = true
		if !s.overridden[n] {
			for _, h := range defaults[n].extraHosts {
				seen[hostPort(&url.URL{Scheme: "https", Host: h})] = true
			}
		}
	}
	hosts := make([]string, 0, len(seen))
	for h := range seen {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	return hosts
}

// Allows reports whether a URL's host is one of the upstreams'.
func (s *Set) Allows(u *url.URL) bool {
	return slices.Contains(s.Hosts(), hostPort(u))
}

// Transport wraps base (http.DefaultTransport when nil) so that it refuses
// any request whose host is not an upstream's. Every outbound client is
// built on it.
func (s *Set) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &allowlist{set: s, base: base}
}

// CheckRedirect refuses redirects to hosts that are not upstreams, for
// http.Client.CheckRedirect.
func (s *Set) CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if !s.Allows(req.URL) {
		return fmt.Errorf("redirect to %s: %w", req.URL.Host, ErrHostNotAllowed)
	}
	return nil
}

type allowlist struct {
	set  *Set
	base http.RoundTripper
}

func (a *allowlist) RoundTrip(req *http.Request) (*http.Response, error) {
	if !a.set.Allows(req.URL) {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Host, ErrHostNotAllowed)
	}
	return a.base.RoundTrip(req)
}

// hostPort normalises a URL's host to lower-case host:port with the
// scheme's default port made explicit.
func hostPort(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(host, port)
}

func joinNames() string {
	parts := make([]string, 0, len(defaults))
	for _, n := range Names() {
		parts = append(parts, string(n))
	}
	return strings.Join(parts, ", ")
}
