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
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// The Notion routes side by side on one rig (routesTable), and the time
// from a person's edit, by way of a connection event, to the page filled
// (eventFill).

// benchLink is the arXiv link every request of the table carries.
const benchLink, benchArxivID = "https://arxiv.org/abs/2301.12345", "2301.12345"

// startNotionHookRig is startNotionRig with the webhook routes served by
// bin/webhook in a process of its own, as a pod runs it (its own client,
// cache and Go runtime): the events route reads its verification Secret
// from that cache, where the manager's client reads Secrets from the API
// server. The rig's Close stops it.
func startNotionHookRig(ctx context.Context, e bench.Env, wsID string) (*notionRig, error) {
	r, err := newNotionRig(ctx, e.Config, wsID)
	if err != nil {
		return nil, err
	}
	hook, url, err := bench.StartWebhook(ctx, e.ControlPlane, e.Bin, r.SandboxURL, "default")
	if err != nil {
		r.Close()
		return nil, err
	}
	closeRig := r.Close
	r.Close = func() { hook.Stop(10 * time.Second); closeRig() }
	r.ExternalHook, r.hook = url, hook
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

// routeRows are the baseline, bare creates over the webhook's own HTTP
// client (HTTP/1.1, bare11), and the three routes, the baseline first.
func routeRows(ctx context.Context, c, bare11 client.Client, ni *v1alpha1.NotionIntegration, auto notionHook, ev eventsHook, eventSeq *atomic.Int64) []routeRow {
	bare := func(c client.Client) func(page string) func() (bool, error) {
		return func(page string) func() (bool, error) {
			ps := papers.NewSync(ni, page, benchLink, benchArxivID)
			return func() (bool, error) { return c.Create(ctx, ps) == nil, nil }
		}
	}
	return []routeRow{
		{name: "a bare PaperSync creates (baseline)", prepare: bare(c)},
		{name: "b bare creates over HTTP/1.1", prepare: bare(bare11)},
		{name: "c Automation route, seed body", prepare: func(page string) func() (bool, error) {
			return queued(auto.httpc, auto.seedRequest(page))
		}},
		{name: "d Automation route, Notion envelope", prepare: func(page string) func() (bool, error) {
			return queued(auto.httpc, auto.nativeRequest(fmt.Sprintf("a0000000-0000-4000-8000-%012x", eventSeq.Add(1)), page, ev.database))
		}},
		{name: "e events route, signed event", prepare: func(page string) func() (bool, error) {
			return queued(ev.httpc, ev.request(ev.event("page.properties_updated", fmt.Sprintf("e0000000-0000-4000-8000-%012x", eventSeq.Add(1)), page)))
		}},
	}
}

// routeClients are the client counts of the routes table.
var routeClients = []int{1, 16, 64}

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

// routesTable runs the five rows in blocks (routemix.go) at each client
// count, the control plane and the clients on CPUs of their own
// (cpus.go), and prints their latencies and each row's rate over the
// baseline's. Row b's client sends over the HTTP client of the webhook's
// own creates (HTTP/1.1, as many idle connections kept as it may open).
func routesTable(ctx context.Context, cfg *rest.Config, c client.Client, ni *v1alpha1.NotionIntegration, auto notionHook, ev eventsHook, requests int, hook *local.Process) error {
	httpc11, err := setup.RecordsHTTPClient(cfg)
	if err != nil {
		return err
	}
	bare11, err := client.New(cfg, client.Options{Scheme: c.Scheme(), HTTPClient: httpc11})
	if err != nil {
		return err
	}
	split, err := splitCPUs(hook.Pid())
	if err != nil {
		return err
	}
	defer split.undo()
	printMixHeader(requests, split.said)
	// Each block's PaperSyncs, and those before the table, go before the
	// next block.
	reset := func() error { return c.DeleteAllOf(ctx, &v1alpha1.PaperSync{}, client.InNamespace(ni.Namespace)) }
	if err := reset(); err != nil {
		return err
	}
	var seq, eventSeq atomic.Int64
	rows := routeRows(ctx, c, bare11, ni, auto, ev, &eventSeq)
	meter := processMeter(split.plane, hook)
	for _, clients := range routeClients {
		page := func() string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", clients, seq.Add(1)) }
		size, rounds := schedule(requests, clients)
		blocks, err := runRounds(rows, clients, size, rounds, page, meter, reset)
		if err != nil {
			return err
		}
		printMix(clients, rows, blocks)
	}
	return nil
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
