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

// Package oembed fetches slide metadata (seed 001 §2–4): the SpeakerDeck
// and Docswell oEmbed endpoints, and the Google Slides embed URL with its
// title scraped from the public page. Every request goes through the
// outbound policy to the provider's fixed upstream, and only with the
// canonical URL (seed 001 §10.1).
package oembed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
	"github.com/switchboard-dev/switchboard/internal/upstream/slides"
)

// Metadata is what a stock keeps (seed 001 §6.3 StockMetadata).
type Metadata struct {
	Title, AuthorName, EmbedURL string
	// ThumbnailURL is empty unless the provider returned one.
	ThumbnailURL string
}

// Fetcher gets metadata for a recognised presentation.
type Fetcher interface {
	Fetch(ctx context.Context, ref slides.Ref) (Metadata, error)
}

// Client is the Fetcher over the outbound policy.
type Client struct {
	Out *outbound.Client
}

var _ Fetcher = (*Client)(nil)

// Fetch dispatches on the provider (seed 001 §6.3).
func (c *Client) Fetch(ctx context.Context, ref slides.Ref) (Metadata, error) {
	switch ref.Provider {
	case slides.SpeakerDeck:
		return c.speakerDeck(ctx, ref)
	case slides.Docswell:
		return c.docswell(ctx, ref)
	case slides.GoogleSlides:
		return c.googleSlides(ctx, ref), nil
	default:
		return Metadata{}, fmt.Errorf("unknown provider %q", ref.Provider)
	}
}

// response is the part of an oEmbed answer the stock uses. Version is
// kept raw: Docswell sends the number 1 where the spec says "1.0" (seed
// 001 §3.2), and both are accepted.
type response struct {
	Type         string          `json:"type"`
	Version      json.RawMessage `json:"version"`
	Title        string          `json:"title"`
	AuthorName   string          `json:"author_name"`
	HTML         string          `json:"html"`
	URL          string          `json:"url"`
	ThumbnailURL *string         `json:"thumbnail_url"`
}

// getOEmbed fetches and validates an oEmbed answer (seed 001 §6.4: 200,
// application/json, type "rich"). A body that fails validation is
// permanent: the provider answered, and asking again gives the same answer
// (seed 001 §7.2, "parse failure: no retry").
func (c *Client) getOEmbed(ctx context.Context, u upstream.Name, path string, q url.Values) (*response, error) {
	resp, err := c.Out.Do(ctx, outbound.Request{
		Upstream: u, Path: path, Query: q, MaxBytes: outbound.MaxJSONBytes,
		Header: http.Header{"Accept": {"application/json"}},
	})
	if err != nil {
		return nil, err
	}
	return parseOEmbed(u, resp)
}

// parseOEmbed validates and decodes an answer; every failure is permanent.
func parseOEmbed(u upstream.Name, resp *outbound.Response) (*response, error) {
	if resp.Status != http.StatusOK {
		return nil, outbound.PermanentError(u, fmt.Sprintf("oEmbed answered %d, want 200", resp.Status), nil)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, outbound.PermanentError(u, fmt.Sprintf("oEmbed answered content type %q, want application/json", resp.Header.Get("Content-Type")), err)
	}
	var r response
	if err := json.Unmarshal(resp.Body, &r); err != nil {
		return nil, outbound.PermanentError(u, "oEmbed answer is not valid JSON", err)
	}
	if r.Type != "rich" {
		return nil, outbound.PermanentError(u, fmt.Sprintf("oEmbed type is %q, want \"rich\"", r.Type), nil)
	}
	if err := checkVersion(r.Version); err != nil {
		return nil, outbound.PermanentError(u, err.Error(), nil)
	}
	return &r, nil
}

// checkVersion accepts "1.0" and 1 (and a missing version).
func checkVersion(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return nil
	}
	var n float64
	if json.Unmarshal(raw, &n) == nil {
		return nil
	}
	return fmt.Errorf("oEmbed version %s is neither a string nor a number", raw)
}

// speakerDeckPlayer is the seed's extraction rule (seed 001 §2.4).
var speakerDeckPlayer = regexp.MustCompile(`src="(https://speakerdeck\.com/player/[a-f0-9]+)"`)

func (c *Client) speakerDeck(ctx context.Context, ref slides.Ref) (Metadata, error) {
	r, err := c.getOEmbed(ctx, upstream.SpeakerDeck, "/oembed.json", url.Values{"url": {ref.CanonicalURL}})
	if err != nil {
		return Metadata{}, err
	}
	m := speakerDeckPlayer.FindStringSubmatch(r.HTML)
	if m == nil {
		return Metadata{}, outbound.PermanentError(upstream.SpeakerDeck, "oEmbed html has no https://speakerdeck.com/player/ iframe", nil)
	}
	return Metadata{Title: r.Title, AuthorName: r.AuthorName, EmbedURL: m[1], ThumbnailURL: deref(r.ThumbnailURL)}, nil
}

func (c *Client) docswell(ctx context.Context, ref slides.Ref) (Metadata, error) {
	r, err := c.getOEmbed(ctx, upstream.Docswell, "/service/oembed", url.Values{"url": {ref.CanonicalURL}, "format": {"json"}})
	if err != nil {
		return Metadata{}, err
	}
	// Docswell's url field is the embed URL (seed 001 §3.3: preferred over
	// parsing the iframe).
	if u, perr := url.Parse(r.URL); r.URL == "" || perr != nil || u.Scheme != "https" || u.Host == "" {
		return Metadata{}, outbound.PermanentError(upstream.Docswell, "oEmbed answer has no https embed url", perr)
	}
	return Metadata{Title: r.Title, AuthorName: r.AuthorName, EmbedURL: r.URL, ThumbnailURL: deref(r.ThumbnailURL)}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// titleTag is the seed's rule (seed 001 §4.3): the first <title>…</title>.
var titleTag = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

// googleSuffix is removed from the page title (seed 001 §4.3).
var googleSuffix = regexp.MustCompile(`(^|\s)-\s+Google (スライド|Slides)$`)

// googleSlides builds the embed URL, which always succeeds (seed 001 §4.5),
// and tries for the title: any failure leaves it empty.
func (c *Client) googleSlides(ctx context.Context, ref slides.Ref) Metadata {
	m := Metadata{EmbedURL: ref.CanonicalURL + "/embed"}
	path := strings.TrimPrefix(ref.CanonicalURL, "https://docs.google.com")
	resp, err := c.Out.Do(ctx, outbound.Request{
		Upstream: upstream.GoogleSlides, Path: path, MaxBytes: outbound.MaxHTMLBytes, Truncate: true,
		Header: http.Header{"Accept-Language": {"ja"}, "Accept": {"text/html"}},
	})
	if err != nil {
		return m
	}
	m.Title = pageTitle(resp.Body)
	return m
}

// pageTitle is the first <title> of a page, unescaped, without Google's
// suffix; empty when there is none.
func pageTitle(page []byte) string {
	t := titleTag.FindSubmatch(page)
	if t == nil {
		return ""
	}
	title := strings.TrimSpace(html.UnescapeString(string(t[1])))
	return strings.TrimSpace(googleSuffix.ReplaceAllString(title, ""))
}
