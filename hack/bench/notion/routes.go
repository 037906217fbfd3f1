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

package notion

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// The Notion routes side by side on one rig (routesTable), and the time
// from a person's edit, by way of a connection event, to the page filled
// (eventFill).

// benchLink is the arXiv link every request of the table carries.
const benchLink, benchArxivID = "https://arxiv.org/abs/2301.12345", "2301.12345"

// startNotionHookRig is startNotionRig with the webhook routes on a
// client and cache of their own, as cmd/webhook builds them: the events
// route reads its verification Secret from that cache, where the
// manager's client reads Secrets from the API server.
func startNotionHookRig(ctx context.Context, cfg *rest.Config, wsID string) (*notionRig, error) {
	r, err := newNotionRig(ctx, cfg, wsID)
	if err != nil {
		return nil, err
	}
	if r.HookCluster, err = setup.WebhookCluster(ctx, cfg, nil, []string{"default"}); err != nil {
		r.Close()
		return nil, err
	}
	return r, r.Start(ctx)
}

// routeRow is one row of the table: prepare does the sender's work for a
// new page (the object or the request body, an event's signature) before
// the clock starts, and returns the send, timed, which reports whether
// the request was accepted (queued).
type routeRow struct {
	name    string
	prepare func(page string) (send func() (bool, error))
}

// routeRows are the four rows, the baseline first.
func routeRows(ctx context.Context, c client.Client, ni *v1alpha1.NotionIntegration, auto notionHook, ev eventsHook, eventSeq *atomic.Int64) []routeRow {
	return []routeRow{
		{name: "bare PaperSync creates (baseline)", prepare: func(page string) func() (bool, error) {
			ps := papers.NewSync(ni, page, benchLink, benchArxivID)
			return func() (bool, error) { return c.Create(ctx, ps) == nil, nil }
		}},
		{name: "Automation route, seed body", prepare: func(page string) func() (bool, error) {
			return queued(auto.httpc, auto.seedRequest(page))
		}},
		{name: "Automation route, Notion envelope", prepare: func(page string) func() (bool, error) {
			return queued(auto.httpc, auto.nativeRequest(fmt.Sprintf("a0000000-0000-4000-8000-%012x", eventSeq.Add(1)), page, ev.database))
		}},
		{name: "events route, signed event", prepare: func(page string) func() (bool, error) {
			return queued(ev.httpc, ev.request(ev.event("page.properties_updated", fmt.Sprintf("e0000000-0000-4000-8000-%012x", eventSeq.Add(1)), page)))
		}},
	}
}

// queued is the send of req, built: it sends req and reads the answer,
// accepted when 2xx with status "queued" (a PaperSync stored). A
// transport error counts as not accepted.
func queued(c *http.Client, req *http.Request) func() (bool, error) {
	return func() (bool, error) {
		resp, err := c.Do(req)
		if err != nil {
			return false, nil
		}
		defer func() { _ = resp.Body.Close() }()
		var body struct {
			Status string `json:"status"`
		}
		raw, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(raw, &body)
		return resp.StatusCode/100 == 2 && body.Status == "queued", nil
	}
}

// routesTable runs the four rows interleaved (routemix.go) at each client
// count, requests cycles each, and prints their latencies and each
// route's ratio to the baseline.
func routesTable(ctx context.Context, c client.Client, cache client.Reader, ni *v1alpha1.NotionIntegration, auto notionHook, ev eventsHook, requests int) error {
	per := max(requests/routeWindows, 1)
	printMixHeader(per)
	var seq, eventSeq, accepted atomic.Int64
	// The syncs of the suite's earlier parts, in the same namespace.
	var before v1alpha1.PaperSyncList
	if err := cache.List(ctx, &before, client.InNamespace(ni.Namespace)); err != nil {
		return err
	}
	base := int64(len(before.Items))
	rows := routeRows(ctx, c, ni, auto, ev, &eventSeq)
	for _, clients := range []int{1, 16, 64} {
		page := func() string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", clients, seq.Add(1)) }
		var mix routeMix
		for w := range routeWindows {
			cycles, took, err := runWindow(rows, clients, w*per, per, page)
			if err != nil {
				return err
			}
			mix.add(cycles, took)
			accepted.Add(int64(countAccepted(cycles)))
			if err := settleSyncs(ctx, cache, ni.Namespace, base+accepted.Load()); err != nil {
				return err
			}
		}
		printMix(clients, rows, &mix)
	}
	return nil
}

// settleSyncs waits, outside the timed windows, until the controllers have
// written the status of every PaperSync the windows created (want in
// all, one a request accepted), so that no window pays for the backlog of
// the one before it: each window starts on a quiet rig.
func settleSyncs(ctx context.Context, cache client.Reader, ns string, want int64) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var list v1alpha1.PaperSyncList
		// The manager's cache: a List of the API server every poll would
		// cost it thousands of objects' worth of work between windows.
		if err := cache.List(ctx, &list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		var handled int64
		for i := range list.Items {
			if len(list.Items[i].Status.Conditions) > 0 {
				handled++
			}
		}
		if handled >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the controllers handled %d of %d PaperSyncs in 5 minutes", handled, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// seedRequest is the seed's body for page, as notionHook.post sends it.
func (h notionHook) seedRequest(page string) *http.Request {
	body, _ := json.Marshal(map[string]string{"workspace_id": h.workspace, "page_id": page, "link": benchLink})
	return jsonRequest(h.url, body)
}

// nativeRequest is Notion's "Send webhook" envelope for page in database
// db, its Link property ticked.
func (h notionHook) nativeRequest(eventID, page, db string) *http.Request {
	body, _ := json.Marshal(map[string]any{
		"source": map[string]any{"type": "automation", "automation_id": "a", "action_id": "b", "event_id": eventID, "attempt": 1},
		"data": map[string]any{"object": "page", "id": page,
			"parent":     map[string]any{"type": "data_source_id", "data_source_id": "x", "database_id": db},
			"properties": map[string]any{"Link": map[string]any{"id": "%3AUPp", "type": "url", "url": benchLink}}},
	})
	return jsonRequest(h.url, body)
}

// jsonRequest is a POST of body to url.
func jsonRequest(url string, body []byte) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body)) // the rig's own URL
	req.Header.Set("Content-Type", "application/json")
	return req
}
