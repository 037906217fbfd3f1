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

// Package notion is the Notion benchmarks: the webhook's routes (-suite
// notion) and the PaperSync drain (-suite papersync), each against a
// bare client in the same run, on one rig (rig.go).
package notion

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// Suite is the Notion webhook benchmark (-suite notion).
type Suite struct{ requests, pages, burst int }

// Name is the suite's -suite name.
func (*Suite) Name() string { return "notion" }

// BindFlags registers -requests, -pages and -page-burst.
func (s *Suite) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.requests, "requests", 1000, "Requests per row of the Notion routes table (each route, and the bare PaperSync creates) per client count, or, if more, 320 a client within 2,560–10,240: at one client in rounds of 256 turns, at more in blocks of 4 requests a client; rounds a multiple of 10.")
	fs.IntVar(&s.pages, "pages", 50, "Notion events timed from webhook to filled page, one at a time (Automation requests, and as many connection events).")
	fs.IntVar(&s.burst, "page-burst", 30, "Pages edited at once, timed from their connection events to the last page filled (at least N/3 s at Notion's 3 requests/s).")
}

// Run runs the benchmark.
func (s *Suite) Run(e bench.Env) error { return benchNotion(e, s.requests, s.pages, s.burst) }

// benchNotion measures the Notion webhook, with an instant sandbox and
// arXiv pacing off: the time from an Automation's request to its page
// filled; the time from a person's edit, by way of a connection event, to
// the page filled, one at a time and in a burst of burst pages; then the
// routes' accepted requests per second and answer latency at several
// client counts against bare PaperSync creates (routes.go).
func benchNotion(e bench.Env, requests, pages, burst int) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctrl.SetLogger(logr.Discard())
	scheme := setup.Scheme()
	c, err := client.New(e.Config, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}

	rig, err := startNotionHookRig(ctx, e, "be4c0000-0000-4000-8000-000000000001")
	if err != nil {
		return err
	}
	defer rig.Close()

	// One connected integration.
	ni, err := benchIntegration(ctx, c, "bench-notion", rig.notion, rig.ws)
	if err != nil {
		return err
	}
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	hook := notionHook{url: rig.HookURL + ni.Status.WebhookPath, workspace: rig.ws.ID, httpc: httpc}
	if err := hook.known(ctx); err != nil {
		return err
	}
	if err := pageFill(ctx, rig.notion, ni.Status.DatabaseID, hook, pages); err != nil {
		return err
	}
	// The connection events' rows exist before the subscription, and the
	// table's events (made-up pages, whose reads the pacer spaces) come
	// after the timed fills: neither waits behind the other's page reads.
	rows := emptyRows(rig.notion, ni.Status.DatabaseID, pages+burst)
	events, err := subscribe(ctx, c, rig, ni, httpc)
	if err != nil {
		return err
	}
	if err := eventFill(ctx, rig.notion, events.sub, rows, pages); err != nil {
		return err
	}
	// The controllers stop for the table (routemix.go says why): each
	// request is one PaperSync created, whatever its row.
	rig.StopManager()
	if err := routesTable(ctx, e.Config, c, ni, hook, events, requests, rig.hook); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr)
	return nil
}

// notionHook is where a Notion Automation posts: the integration's webhook
// URL, for its workspace.
type notionHook struct {
	url, workspace string
	httpc          *http.Client
}

// post sends the Automation's request for page and link.
func (h notionHook) post(page, link string) (*http.Response, error) {
	body, _ := json.Marshal(map[string]string{"workspace_id": h.workspace, "page_id": page, "link": link})
	return h.httpc.Post(h.url, "application/json", bytes.NewReader(body))
}

// known waits until the webhook knows the integration's route: until
// then (its cache has not seen the integration's webhook path) it answers
// 404. The request names no link, which the route answers 200 "ignored",
// creating nothing.
func (h notionHook) known(ctx context.Context) error {
	return poll.Until(ctx, "the webhook knowing the integration", 20*time.Millisecond, 30*time.Second, func() (bool, error) {
		resp, err := h.post("00000000-0000-4000-8000-000000000000", "")
		if err != nil {
			return false, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode/100 == 2, fmt.Errorf("answered %d", resp.StatusCode)
	})
}

// pageFill times event → page filled, one event at a time, on rows that
// exist in the database db.
func pageFill(ctx context.Context, notionEmu *sandbox.Notion, db string, hook notionHook, pages int) error {
	e2e := make([]time.Duration, 0, pages)
	for i := 0; i < pages; i++ {
		link := "https://arxiv.org/abs/hep-th/9901001"
		page := notionEmu.AddRow(db, map[string]any{"Link": link})
		t0 := time.Now()
		resp, err := hook.post(page, link)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if poll.Until(ctx, "", 2*time.Millisecond, 30*time.Second, func() (bool, error) {
			return notionEmu.Row(page)["Title"] != "" && notionEmu.Row(page)["Title"] != nil, nil
		}) != nil {
			return fmt.Errorf("page %d not filled after 30s", i)
		}
		e2e = append(e2e, time.Since(t0))
	}
	bench.SortDurations(e2e)
	fmt.Printf("event → page filled (%d events, one at a time, instant sandbox, arXiv pacing off): mean %s, p50 %s, p95 %s (seed: ≤ 2 s on average)\n",
		pages, bench.MeanD(e2e).Round(100*time.Microsecond), bench.PctMs(e2e, 50), bench.PctMs(e2e, 95))
	return nil
}
