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

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
)

// load plays the walk's Notion Automation and time tracker against the
// webhook's node port while a platform operation runs: each Notion event
// names a fresh page of the integration's database, each session a fresh
// id. A request answered 503 or 429 with Retry-After is sent again after
// that long, as the senders would; any other 5xx, a 503 without
// Retry-After, or a request the Service did not answer at all breaks the
// operation's invariant. Afterwards every accepted event must have landed
// exactly once: its page written by one PaperSync in one update, its
// session in one row.
type load struct {
	sandboxURL                                string
	notionURL, workspaceID, databaseID        string
	ingestURL                                 string
	hc                                        *http.Client
	notionEvery, sessionEvery                 time.Duration
	mu                                        sync.Mutex
	seq                                       int
	pages, sessions                           []string // accepted
	answers                                   map[string]int
	broken                                    []string
	notionWorkers, sessionWorkers, minEachWay int
}

// newLoad reads where to send from the walk's integration (named
// integration) and connection.
func newLoad(ctx context.Context, c client.Client, sandboxURL, integration string) (*load, error) {
	var ni v1alpha1.NotionIntegration
	if err := c.Get(ctx, client.ObjectKey{Namespace: scenario.Namespace, Name: integration}, &ni); err != nil {
		return nil, err
	}
	var sc v1alpha1.SheetConnection
	if err := c.Get(ctx, client.ObjectKey{Namespace: scenario.Namespace, Name: scenario.SheetConnectionName}, &sc); err != nil {
		return nil, err
	}
	if ni.Status.WebhookPath == "" || ni.Status.DatabaseID == "" || sc.Status.IngestPath == "" {
		return nil, errors.New("the walk's NotionIntegration or SheetConnection has no route yet")
	}
	return &load{
		sandboxURL: sandboxURL,
		notionURL:  publicURL + ni.Status.WebhookPath, workspaceID: ni.Status.WorkspaceID, databaseID: ni.Status.DatabaseID,
		ingestURL: publicURL + sc.Status.IngestPath,
		// Keep-alive connections, as a real sender's: a pod that stops
		// must close them well.
		hc: &http.Client{Timeout: 15 * time.Second},
		// Notion's rate limit (3 requests/s on average) paces the manager's
		// page updates; the time tracker has none.
		notionWorkers: 1, notionEvery: 300 * time.Millisecond,
		sessionWorkers: 2, sessionEvery: 100 * time.Millisecond,
		minEachWay: 5,
	}, nil
}

// phase is one operation under load: its own tallies and accepted events.
type phase struct {
	name            string
	pages, sessions []string
	answers         map[string]int
	broken          []string
}

// during runs op while the load runs: the load starts first and has
// events accepted each way before op, and goes on until as many more are
// accepted after it, so the operation happens in the middle of traffic.
func (l *load) during(ctx context.Context, name string, op func(context.Context) error) (*phase, error) {
	l.mu.Lock()
	l.pages, l.sessions, l.answers, l.broken = nil, nil, map[string]int{}, nil
	l.mu.Unlock()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range l.notionWorkers {
		wg.Go(func() { l.worker(ctx, stop, l.notionEvery, l.notionEvent) })
	}
	for range l.sessionWorkers {
		wg.Go(func() { l.worker(ctx, stop, l.sessionEvery, l.session) })
	}
	accepted := func() (int, int) {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.pages), len(l.sessions)
	}
	waitAccepted := func(pages, sessions int) error {
		return poll.Until(ctx, "events accepted", pollEvery, 2*time.Minute, func() (bool, error) {
			p, s := accepted()
			return p >= pages && s >= sessions, fmt.Errorf("%d Notion events and %d sessions accepted, want %d and %d", p, s, pages, sessions)
		})
	}
	err := waitAccepted(l.minEachWay, l.minEachWay)
	if err == nil {
		err = op(ctx)
	}
	if err == nil {
		p, s := accepted()
		err = waitAccepted(p+l.minEachWay, s+l.minEachWay)
	}
	close(stop)
	wg.Wait()
	l.mu.Lock()
	ph := &phase{name: name, pages: l.pages, sessions: l.sessions, answers: maps.Clone(l.answers), broken: l.broken}
	l.mu.Unlock()
	keys := slices.Sorted(maps.Keys(ph.answers))
	var tally []string
	for _, k := range keys {
		tally = append(tally, fmt.Sprintf("%s ×%d", k, ph.answers[k]))
	}
	fmt.Printf("    load during %s: %s\n", name, strings.Join(tally, ", "))
	if err != nil {
		return ph, err
	}
	if len(ph.broken) > 0 {
		return ph, fmt.Errorf("%d requests broke the invariant during %s:\n  %s", len(ph.broken), name, strings.Join(first(ph.broken, 10), "\n  "))
	}
	return ph, nil
}

func first(l []string, n int) []string { return l[:min(n, len(l))] }

// worker sends one event every interval until stop.
func (l *load) worker(ctx context.Context, stop <-chan struct{}, every time.Duration, send func(context.Context)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			send(ctx)
		}
	}
}

func (l *load) next() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	return l.seq
}

// notionEvent adds a page to the integration's database, as a person
// would, and posts the Automation's request for it.
func (l *load) notionEvent(ctx context.Context) {
	page, err := scenario.AddPage(l.sandboxURL, l.databaseID, scenario.ArxivLink)
	if err != nil {
		l.breaks(err.Error())
		return
	}
	body, _ := json.Marshal(map[string]string{"workspace_id": l.workspaceID, "page_id": page, "link": scenario.ArxivLink})
	if l.send(ctx, "notion", l.notionURL, "", body) {
		l.mu.Lock()
		l.pages = append(l.pages, page)
		l.mu.Unlock()
	}
}

// session posts one work session with a fresh id.
func (l *load) session(ctx context.Context) {
	n := l.next()
	id := fmt.Sprintf("e2e-load-%06d", n)
	start := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute)
	body, _ := json.Marshal(scenario.Session(id, "load "+strconv.Itoa(n), start, 30*time.Second, "e2e"))
	if l.send(ctx, "sheets", l.ingestURL, scenario.SheetIngestToken, body) {
		l.mu.Lock()
		l.sessions = append(l.sessions, id)
		l.mu.Unlock()
	}
}

// send posts body until it is accepted (200 or 202) or refused for good,
// honouring Retry-After, and tallies every answer.
func (l *load) send(ctx context.Context, kind, url, token string, body []byte) bool {
	for attempt := 0; attempt < 30 && ctx.Err() == nil; attempt++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		// Which connection carried it, for a request that gets no answer:
		// a new one, or one kept alive from an earlier request (and how
		// long it sat idle).
		var conn httptrace.GotConnInfo
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { conn = i },
		}))
		sent := time.Now()
		resp, err := l.hc.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			how := "no connection"
			if conn.Conn != nil {
				how = fmt.Sprintf("new connection %s", conn.Conn.LocalAddr())
				if conn.Reused {
					how = fmt.Sprintf("connection %s kept alive, idle %s", conn.Conn.LocalAddr(), conn.IdleTime.Round(time.Millisecond))
				}
			}
			l.tally(kind + " no answer")
			l.breaks(fmt.Sprintf("%s: no answer (sent %s on %s): %v", kind, sent.UTC().Format("15:04:05.000"), how, err))
			time.Sleep(200 * time.Millisecond) // then the same event again: the routes are idempotent
			continue
		}
		answer, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		retryAfter, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		switch {
		case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusAccepted:
			l.tally(fmt.Sprintf("%s %d", kind, resp.StatusCode))
			return true
		case (resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests) && retryAfter > 0:
			l.tally(fmt.Sprintf("%s %d Retry-After", kind, resp.StatusCode))
			time.Sleep(min(time.Duration(retryAfter)*time.Second, 5*time.Second))
		default:
			l.tally(fmt.Sprintf("%s %d", kind, resp.StatusCode))
			l.breaks(fmt.Sprintf("%s: %d %s", kind, resp.StatusCode, bytes.TrimSpace(answer)))
			if resp.StatusCode < 500 {
				return false
			}
		}
	}
	return false
}

func (l *load) tally(key string) {
	l.mu.Lock()
	l.answers[key]++
	l.mu.Unlock()
}

func (l *load) breaks(what string) {
	// The routes' paths are capabilities (status shows them; logs never
	// do): net/http's errors name the URL.
	what = strings.NewReplacer(l.notionURL, "<the integration's webhook URL>", l.ingestURL, "<the connection's ingest URL>").Replace(what)
	l.mu.Lock()
	l.broken = append(l.broken, what)
	l.mu.Unlock()
}
