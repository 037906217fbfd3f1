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

// Package outbound is the one outbound HTTP policy every integration uses:
// only the configured upstreams' hosts (redirects elsewhere refused), a
// per-request timeout, response size caps, a User-Agent, Retry-After read,
// every failure classified as transient or permanent, and per-upstream
// metrics. Integrations build their requests; this package decides what a
// failure means.
package outbound

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// Defaults, from seed 001 §9 (10 s) and §10.2 (100 KB JSON, 500 KB HTML).
const (
	DefaultTimeout = 10 * time.Second
	MaxJSONBytes   = 100 << 10
	MaxHTMLBytes   = 500 << 10
	// maxErrorBody is how much of a non-2xx answer is kept for the caller.
	maxErrorBody = 4 << 10
	// DefaultUserAgent names the operator to the providers.
	DefaultUserAgent = "Switchboard/0.1 (+https://github.com/switchboard-dev/switchboard)"
)

// Options configure a Client.
type Options struct {
	// Timeout per request (DefaultTimeout when zero).
	Timeout time.Duration
	// UserAgent sent with every request (DefaultUserAgent when empty).
	UserAgent string
	// Registerer receives the metrics (none when nil).
	Registerer prometheus.Registerer
	// Transport under the host allowlist (a tuned clone of
	// http.DefaultTransport when nil). Sink requests do not use it: they
	// have their own transport, whose dialer enforces Sink.
	Transport http.RoundTripper
	// Sink says which addresses a Request.SinkURL may reach; the zero
	// value refuses loopback, link-local and unspecified addresses.
	Sink SinkPolicy
}

// Client sends requests under the policy.
type Client struct {
	ups    *upstream.Set
	hc     *http.Client
	sinkHC *http.Client
	// sinkPolicy is what sinkHC's dialer enforces.
	sinkPolicy SinkPolicy
	timeout    time.Duration
	ua         string
	metrics    *metrics
}

// New builds a Client for the configured upstreams.
func New(ups *upstream.Set, opts Options) (*Client, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	base := opts.Transport
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 32
		base = t
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	return &Client{
		ups: ups,
		hc:  &http.Client{Transport: ups.Transport(base), CheckRedirect: ups.CheckRedirect},
		// A sink is not followed anywhere else: a redirect is its answer
		// (following one would let a sink send the manager to an address
		// nobody checked before the request was sent).
		sinkHC:     &http.Client{Transport: sinkTransport(opts.Sink), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		sinkPolicy: opts.Sink,
		timeout:    opts.Timeout,
		ua:         opts.UserAgent,
		metrics:    m,
	}, nil
}

// Endpoint is the URL of path on an upstream.
func (c *Client) Endpoint(u upstream.Name, path string) string { return c.ups.Endpoint(u, path) }

// HTTPClientFor is HTTPClient for an SDK that has its base URL built in
// (jomei/notionapi has no base-URL option): requests to realBase are sent
// to the upstream's configured URL instead, path appended. With the default
// upstream the rewrite changes nothing.
func (c *Client) HTTPClientFor(u upstream.Name, realBase string) *http.Client {
	from, err := url.Parse(realBase)
	if err != nil {
		panic(fmt.Sprintf("outbound: bad base URL %q: %v", realBase, err))
	}
	to := c.ups.URL(u)
	return &http.Client{
		Transport:     &rewrite{from: from, to: to, next: c.hc.Transport},
		CheckRedirect: c.hc.CheckRedirect,
		Timeout:       c.timeout,
	}
}

type rewrite struct {
	from, to *url.URL
	next     http.RoundTripper
}

func (rw *rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == rw.from.Host && req.URL.Scheme == rw.from.Scheme {
		r := req.Clone(req.Context())
		r.URL.Scheme, r.URL.Host = rw.to.Scheme, rw.to.Host
		r.URL.Path = strings.TrimSuffix(rw.to.Path, "/") + req.URL.Path
		r.URL.RawPath = ""
		r.Host = ""
		req = r
	}
	return rw.next.RoundTrip(req)
}

// HTTPClient is the underlying client (allowlist and redirect rule, no
// size cap or classification) for client libraries that must own the
// request, such as the Notion and Google SDKs.
func (c *Client) HTTPClient() *http.Client { return c.hc }

// Request is one outbound call.
type Request struct {
	Upstream upstream.Name
	// Method defaults to GET.
	Method string
	// Path is joined to the upstream's base URL.
	Path  string
	Query url.Values
	// Header is added to the request (User-Agent is set by the policy).
	Header http.Header
	Body   io.Reader
	// MaxBytes caps the response body (MaxJSONBytes when zero).
	MaxBytes int64
	// Truncate keeps the first MaxBytes of a larger body instead of failing:
	// for HTML read only for its <title> (seed 001 §10.2).
	Truncate bool
	// Timeout overrides the client's per-request timeout.
	Timeout time.Duration
	// Classify is the upstream's own reading of a non-2xx answer (nil: the
	// default rule, DefaultClass).
	Classify Classifier
	// SinkURL, instead of Upstream and Path, is an absolute URL a
	// resource's owner configured to receive notifications (a
	// CalendarWatch's HTTP sink). It is not an upstream, so the host
	// allowlist does not apply; the timeout, the size cap and the error
	// classification do, redirects are not followed, and the address
	// dialed must pass Options.Sink (a refusal wraps
	// ErrSinkAddressRefused). Errors and metrics name the upstream "sink".
	SinkURL string
}

// outcomeSuccess is the outcome label of a request that succeeded; the
// others are a Class's.
const outcomeSuccess = "success"

// SinkUpstream labels errors and metrics of requests to a SinkURL.
const SinkUpstream upstream.Name = "sink"

// Response is a successful (2xx) answer, read in full.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// URL is the final URL after redirects.
	URL *url.URL
	// Truncated is set when Request.Truncate cut the body at MaxBytes.
	Truncated bool
}

// Do sends the request and reads the answer under the policy. A non-2xx
// answer, a transport failure or an oversized body is an *Error.
func (c *Client) Do(ctx context.Context, r Request) (*Response, error) {
	began := time.Now()
	if r.SinkURL != "" {
		r.Upstream = SinkUpstream
	}
	resp, err := c.do(ctx, r)
	outcome := outcomeSuccess
	if e, ok := Classify(err); ok {
		outcome = e.Class.String()
	} else if err != nil {
		outcome = Permanent.String()
	}
	c.metrics.observe(r.Upstream, outcome, time.Since(began))
	return resp, err
}

func (c *Client) do(ctx context.Context, r Request) (*Response, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = c.timeout
	}
	maxBytes := r.MaxBytes
	if maxBytes <= 0 {
		maxBytes = MaxJSONBytes
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	target, hc := r.SinkURL, c.sinkHC
	if r.SinkURL == "" {
		target, hc = c.ups.Endpoint(r.Upstream, r.Path), c.hc
	}
	if len(r.Query) > 0 {
		target += "?" + r.Query.Encode()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target, r.Body)
	if err != nil {
		return nil, PermanentError(r.Upstream, "cannot build request", err)
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("User-Agent", c.ua)

	resp, err := hc.Do(req)
	if err != nil {
		return nil, transportError(r.Upstream, err, timeout)
	}
	defer func() { _ = resp.Body.Close() }()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, statusError(r.Upstream, r.Classify, resp, body)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, transportError(r.Upstream, err, timeout)
	}
	truncated := false
	if int64(len(body)) > maxBytes && r.Truncate {
		body, truncated = body[:maxBytes], true
	}
	if int64(len(body)) > maxBytes {
		return nil, &Error{Upstream: r.Upstream, Class: Permanent, Status: resp.StatusCode,
			Reason: fmt.Sprintf("response body larger than %d bytes", maxBytes)}
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body, URL: resp.Request.URL, Truncated: truncated}, nil
}
