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

package arxiv

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/upstream"
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

// Fetch asks for up to MaxBatch identifiers in one request. Identifiers
// the feed does not hold (arXiv omits a well-formed but unknown one) are
// returned as missing. A malformed identifier makes arXiv answer 400 with
// an error entry: a permanent error.
func (c *Client) Fetch(ctx context.Context, ids []string) (found map[string]Paper, missing []string, err error) {
	if len(ids) > MaxBatch {
		ids = ids[:MaxBatch]
	}
	if err := c.Pacer.Wait(ctx); err != nil {
		return nil, nil, err
	}
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
		return nil, nil, err
	}
	feed, err := ParseFeed(resp.Body)
	if err != nil {
		return nil, nil, outbound.PermanentError(upstream.Arxiv, err.Error(), err)
	}
	if len(feed.Errors) > 0 {
		return nil, nil, outbound.PermanentError(upstream.Arxiv, feed.Errors[0].Message, nil)
	}
	// Entries come back in arXiv's order, not the request's: index by id.
	found = make(map[string]Paper, len(feed.Papers))
	for _, p := range feed.Papers {
		found[p.ID] = p
	}
	for _, id := range ids {
		if _, ok := found[id]; !ok {
			missing = append(missing, id)
		}
	}
	return found, missing, nil
}
