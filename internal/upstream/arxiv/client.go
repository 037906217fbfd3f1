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

// Package arxiv reads arXiv: the Atom feed of the export API (seed 000
// §3.4–3.5), and a client that asks for many papers in one request, no
// more often than arXiv's terms allow. The syntax of identifiers and links
// is package arxivid's.
package arxiv

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxivid"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// MinInterval is arXiv's rule for API clients: no more than one request
// every three seconds (seed 000 §9.4).
const MinInterval = 3 * time.Second

// MaxBatch bounds the identifiers asked for in one request.
const MaxBatch = 100

// maxFeedBytes caps one answer (100 entries with long abstracts).
const maxFeedBytes = 4 << 20

// Pacer lets one request through per interval, across every goroutine of
// the manager.
type Pacer struct {
	Interval time.Duration
	Clock    clock.Clock

	mu   sync.Mutex
	next time.Time
}

// Wait blocks until a request may go.
func (p *Pacer) Wait(ctx context.Context) error {
	if p == nil || p.Interval <= 0 {
		return nil
	}
	clk := p.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	p.mu.Lock()
	now := clk.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.Interval)
	p.mu.Unlock()
	if d := at.Sub(now); d > 0 {
		t := clk.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C():
		}
	}
	return nil
}

// Client asks the export API for papers.
type Client struct {
	Out   *outbound.Client
	Pacer *Pacer
}

// Fetch asks arXiv for up to MaxBatch identifiers in one request and sorts
// them into found and missing; err is for the request as a whole.
//
//   - found maps each identifier as the caller gave it to its paper.
//     Identifiers are matched in their canonical form (arxivid.CanonicalID), so
//     "math.GT/0309136" and "math/0309136v2" both find the paper arXiv
//     files as math/0309136.
//   - missing lists, in the caller's order, every given identifier with no
//     paper in the answer: well-formed ones arXiv does not have (it answers
//     them with an entry without an <id>, or leaves them out; see
//     Feed.Unidentified) and malformed ones, which are never sent, because
//     one malformed identifier makes arXiv refuse the whole request with
//     400. Every given identifier is in exactly one of found and missing.
//   - err is non-nil only when the request failed: transient (5xx, 429,
//     timeouts; outbound.IsTransient) or permanent (a 400 error entry, an
//     answer that is not a feed). Then found and missing are nil.
//
// Identifiers beyond MaxBatch are neither sent nor reported.
func (c *Client) Fetch(ctx context.Context, ids []string) (found map[string]Paper, missing []string, err error) {
	if len(ids) > MaxBatch {
		ids = ids[:MaxBatch]
	}
	// The request carries each canonical identifier once.
	var query []string
	canonical := make(map[string]string, len(ids)) // given → canonical
	for _, id := range ids {
		cid, ok := arxivid.CanonicalID(strings.TrimSpace(id))
		if !ok {
			continue
		}
		if _, dup := canonical[id]; !dup && !slices.Contains(query, cid) {
			query = append(query, cid)
		}
		canonical[id] = cid
	}
	var papers map[string]Paper
	if len(query) > 0 {
		if papers, err = c.query(ctx, query); err != nil {
			return nil, nil, err
		}
	}
	found = make(map[string]Paper, len(ids))
	for _, id := range ids {
		if p, ok := papers[canonical[id]]; ok {
			found[id] = p
		} else if !slices.Contains(missing, id) {
			missing = append(missing, id)
		}
	}
	return found, missing, nil
}

// query sends one id_list request and indexes the answer's papers by their
// canonical identifier (entries come back in arXiv's order, not the
// request's).
func (c *Client) query(ctx context.Context, ids []string) (map[string]Paper, error) {
	if err := c.Pacer.Wait(ctx); err != nil {
		return nil, err
	}
	// No outbound.Classifier: arXiv bends no status. It throttles with 429
	// and sheds load with 503 (https://info.arxiv.org/help/api/tou.html#rate-limits;
	// https://groups.google.com/a/arxiv.org/g/api/c/JuA7VkOhl1A), both
	// transient by default, and refuses a malformed request with 400 and an
	// Atom error entry, permanent by default.
	resp, err := c.Out.Do(ctx, outbound.Request{
		Upstream: upstream.Arxiv, Path: "/api/query",
		Query:    url.Values{"id_list": {strings.Join(ids, ",")}, "max_results": {strconv.Itoa(len(ids))}},
		Header:   http.Header{"Accept": {"application/atom+xml"}},
		MaxBytes: maxFeedBytes,
	})
	if err != nil {
		if oe, ok := outbound.Classify(err); ok && len(oe.Body) > 0 {
			if f, perr := ParseFeed(oe.Body); perr == nil && len(f.Errors) > 0 {
				oe.Reason += ": " + f.Errors[0].Message
			}
		}
		return nil, err
	}
	feed, err := ParseFeed(resp.Body)
	if err != nil {
		return nil, outbound.PermanentError(upstream.Arxiv, err.Error(), err)
	}
	if len(feed.Errors) > 0 {
		return nil, outbound.PermanentError(upstream.Arxiv, feed.Errors[0].Message, nil)
	}
	papers := make(map[string]Paper, len(feed.Papers))
	for _, p := range feed.Papers {
		papers[p.ID] = p
	}
	return papers, nil
}
