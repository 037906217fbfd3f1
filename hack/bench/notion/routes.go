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
	"sort"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// The Notion routes side by side on one rig (routesTable), and the time
// from a person's edit, by way of a connection event, to the page filled
// (eventFill).

// benchLink is the arXiv link every request of the table carries.
const benchLink, benchArxivID = "https://arxiv.org/abs/2301.12345", "2301.12345"

// routeRounds split each row's requests at a client count into rounds
// run in the order a b c d, d c b a, …: a steady drift of the rig (etcd
// growing) weighs on every row alike, and each round starts once the
// controllers have caught up with the last (settleSyncs).
const routeRounds = 8

// startNotionHookRig is startNotionRig with the webhook routes on a
// client and cache of their own, as cmd/webhook builds them: the events
// route reads its verification Secret from that cache, where the
// manager's client reads Secrets from the API server.
func startNotionHookRig(ctx context.Context, cfg *rest.Config, wsID string) (*notionRig, error) {
	r, err := newNotionRig(ctx, cfg, wsID)
	if err != nil {
		return nil, err
	}
	if r.HookCluster, err = webhookCluster(ctx, cfg); err != nil {
		r.Close()
		return nil, err
	}
	return r, r.Start(ctx)
}

// webhookCluster is cmd/webhook's cluster: Secrets cached only in its own
// namespace ("default" here), conditions without messages, its indexes.
func webhookCluster(ctx context.Context, cfg *rest.Config) (cluster.Cluster, error) {
	scheme := setup.Scheme()
	cl, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = scheme
		o.Cache = setup.Scope{Own: []string{"default"}, SecretsOnlyInOwn: true, ConditionStatusOnly: true}.CacheOptions(scheme)
	})
	if err != nil {
		return nil, err
	}
	return cl, index.RegisterFor(ctx, cl.GetCache(), index.Webhook)
}

// routeRow is one row of the table: send makes the request for a new
// page and reports whether it was accepted (queued).
type routeRow struct {
	name    string
	send    func(page string) (bool, error)
	lat     []time.Duration
	took    time.Duration
	refused int
	// rates are each round's accepted requests per second, in order.
	rates []float64
}

// round sends count requests from clients goroutines, each a new page.
func (row *routeRow) round(clients, count int, seq *atomic.Int64) error {
	var lat []time.Duration
	var refused int
	took, err := bench.Timed(func() error {
		var err error
		_, lat, refused, err = bench.Drive(clients, count, func(int) (bool, error) {
			return row.send(fmt.Sprintf("%08x-0000-4000-8000-%012x", clients, seq.Add(1)))
		})
		return err
	})
	row.lat, row.took, row.refused = append(row.lat, lat...), row.took+took, row.refused+refused
	row.rates = append(row.rates, float64(len(lat))/took.Seconds())
	return err
}

// pairedRatio is the median, over the rounds, of row's rate over the
// baseline's in the same round: a round that a pause of the rig (a
// garbage collection, an etcd compaction) slowed weighs on one pair, not
// on the whole row.
func (row *routeRow) pairedRatio(base *routeRow) float64 {
	ratios := make([]float64, 0, len(row.rates))
	for i := range min(len(row.rates), len(base.rates)) {
		ratios = append(ratios, row.rates[i]/base.rates[i])
	}
	if len(ratios) == 0 {
		return 0
	}
	sort.Float64s(ratios)
	if n := len(ratios); n%2 == 0 {
		return (ratios[n/2-1] + ratios[n/2]) / 2
	}
	return ratios[len(ratios)/2]
}

func (row *routeRow) rate() float64 { return float64(len(row.lat)) / row.took.Seconds() }

// routeRows are the four rows, fresh for one client count.
func routeRows(ctx context.Context, c client.Client, ni *v1alpha1.NotionIntegration, auto notionHook, ev eventsHook, eventSeq *atomic.Int64) []*routeRow {
	return []*routeRow{
		{name: "bare PaperSync creates (baseline)", send: func(page string) (bool, error) {
			err := c.Create(ctx, papers.NewSync(ni, page, benchLink, benchArxivID))
			return err == nil, nil
		}},
		{name: "Automation route, seed body", send: func(page string) (bool, error) {
			return queued(auto.httpc, auto.seedRequest(page))
		}},
		{name: "Automation route, Notion envelope", send: func(page string) (bool, error) {
			return queued(auto.httpc, auto.nativeRequest(fmt.Sprintf("a0000000-0000-4000-8000-%012x", eventSeq.Add(1)), page, ev.database))
		}},
		{name: "events route, signed event", send: func(page string) (bool, error) {
			return queued(ev.httpc, ev.request(ev.event("page.properties_updated", fmt.Sprintf("e0000000-0000-4000-8000-%012x", eventSeq.Add(1)), page)))
		}},
	}
}

// queued sends req and reads the answer: accepted when 2xx with status
// "queued" (a PaperSync stored). A transport error counts as not
// accepted.
func queued(c *http.Client, req *http.Request) (bool, error) {
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

// routesTable runs the four rows at each client count, requests each, and
// prints their rates, latencies and each route's rate over the baseline's.
func routesTable(ctx context.Context, c client.Client, cache client.Reader, ni *v1alpha1.NotionIntegration, auto notionHook, ev eventsHook, requests int) error {
	per := max(requests/routeRounds, 1)
	fmt.Printf("\nNotion routes: %d requests per row per client count, each a new page (one PaperSync per request), in %d rounds of %d (rows a b c d, then d c b a, …, each round started once the controllers had written every sync's status), loopback, real API server.\n",
		per*routeRounds, routeRounds, per)
	fmt.Println("Running meanwhile: the NotionIntegration and PaperSync controllers in process on every sync created, the integration suspended —")
	fmt.Println("so each row's syncs cost the controller alike (one status write, waiting for their integration);")
	fmt.Println("the webhook routes in process with cmd/webhook's client and cache (the verification Secret read from it), per-client rate limit off.")
	fmt.Println("To baseline: the row's whole rate over the bare creates', and the median of its rounds' rates over the bare creates' in the same round.")
	fmt.Printf("%-8s %-36s %12s %9s %9s %9s %28s\n", "clients", "row", "accepted/s", "p50", "p95", "p99", "to baseline: whole / rounds")
	var seq, eventSeq atomic.Int64
	// The syncs of the suite's earlier parts, in the same namespace.
	var before v1alpha1.PaperSyncList
	if err := cache.List(ctx, &before, client.InNamespace(ni.Namespace)); err != nil {
		return err
	}
	base := int64(len(before.Items))
	for _, clients := range []int{1, 16, 64} {
		rows := routeRows(ctx, c, ni, auto, ev, &eventSeq)
		for r := range routeRounds {
			for k := range rows {
				if r%2 == 1 {
					k = len(rows) - 1 - k
				}
				if err := rows[k].round(clients, per, &seq); err != nil {
					return err
				}
				if err := settleSyncs(ctx, cache, ni.Namespace, base+seq.Load()); err != nil {
					return err
				}
			}
		}
		printRouteRows(clients, rows)
	}
	return nil
}

// settleSyncs waits, outside the timed rounds, until the controllers have
// written the status of every PaperSync the rounds created (want in all),
// so that no round pays for the backlog of the one before it: the four
// rows' syncs cost the controllers alike, and each row's round runs on a
// quiet rig.
func settleSyncs(ctx context.Context, cache client.Reader, ns string, want int64) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var list v1alpha1.PaperSyncList
		// The manager's cache: a List of the API server every poll would
		// cost it thousands of objects' worth of work between rounds.
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

// printRouteRows prints one client count's rows; the first is the baseline.
func printRouteRows(clients int, rows []*routeRow) {
	base := rows[0]
	for i, row := range rows {
		bench.SortDurations(row.lat)
		ratio := "-"
		if i > 0 {
			ratio = fmt.Sprintf("%.2f / %.2f (≥ 0.9)", row.rate()/base.rate(), row.pairedRatio(base))
		}
		fmt.Printf("%-8d %-36s %12.0f %9s %9s %9s %28s", clients, row.name, row.rate(), bench.PctMs(row.lat, 50), bench.PctMs(row.lat, 95), bench.PctMs(row.lat, 99), ratio)
		if row.refused > 0 {
			fmt.Printf("   (%d not accepted)", row.refused)
		}
		fmt.Println()
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
