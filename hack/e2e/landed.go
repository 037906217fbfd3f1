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
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
)

// After each operation: did every event the load had accepted land, and
// land exactly once?

// landed waits until every event the phase had accepted has landed, then
// checks each landed exactly once: one PaperSync for the page and one
// saved update of it in Notion; one row for the session.
func (l *load) landed(ctx context.Context, c client.Client, ph *phase) error {
	if err := l.pagesWritten(ctx, ph); err != nil {
		return err
	}
	rows, err := l.sessionsInSheet(ctx, ph)
	if err != nil {
		return err
	}
	twice, err := l.landedTwice(ctx, c, ph, rows)
	if err != nil {
		return err
	}
	if len(twice) > 0 {
		return fmt.Errorf("%d accepted events did not land exactly once:\n  %s", len(twice), strings.Join(first(twice, 10), "\n  "))
	}
	fmt.Printf("    %d Notion events and %d sessions accepted during %s, each landed exactly once\n", len(ph.pages), len(ph.sessions), ph.name)
	return nil
}

// pagesWritten waits until the sandbox saw an update of every page the
// phase's accepted Notion events named.
func (l *load) pagesWritten(ctx context.Context, ph *phase) error {
	updates := map[string]int{}
	return poll.Until(ctx, "every accepted Notion event's page written", pollEvery, 5*time.Minute, func() (bool, error) {
		waiting := 0
		for _, p := range ph.pages {
			if updates[p] > 0 {
				continue
			}
			n, err := pageUpdates(l.sandboxURL, p)
			if err != nil {
				return false, err
			}
			updates[p] = n
			if n == 0 {
				waiting++
			}
		}
		return waiting == 0, fmt.Errorf("%d of %d pages not written yet", waiting, len(ph.pages))
	})
}

// sessionsInSheet waits until every session the phase had accepted is a
// row of the sheet, and returns the rows.
func (l *load) sessionsInSheet(ctx context.Context, ph *phase) ([][]string, error) {
	var rows [][]string
	err := poll.Until(ctx, "every accepted session in the sheet", pollEvery, 3*time.Minute, func() (bool, error) {
		var err error
		if rows, err = scenario.SheetRows(l.sandboxURL); err != nil {
			return false, err
		}
		have := map[string]bool{}
		for _, r := range rows {
			if len(r) > 0 {
				have[r[0]] = true
			}
		}
		missing := 0
		for _, id := range ph.sessions {
			if !have[id] {
				missing++
			}
		}
		return missing == 0, fmt.Errorf("%d of %d sessions not in the sheet yet", missing, len(ph.sessions))
	})
	return rows, err
}

// landedTwice lists the phase's accepted events that did not land exactly
// once: a page read again now (a second write would have come with the
// first), the PaperSyncs that fill it, the session's rows.
func (l *load) landedTwice(ctx context.Context, c client.Client, ph *phase, rows [][]string) ([]string, error) {
	var syncs v1alpha1.PaperSyncList
	if err := c.List(ctx, &syncs, client.InNamespace(scenario.Namespace)); err != nil {
		return nil, err
	}
	// The PaperSyncs that fill a page: the walk's connection webhook also
	// records each of Notion's events about the load's pages (spec.event),
	// which hands the page to that same one.
	perPage := map[string]int{}
	for _, s := range syncs.Items {
		if s.Spec.Event == nil {
			perPage[pageKey(s.Spec.PageID)]++
		}
	}
	perSession := map[string]int{}
	for _, r := range rows {
		if len(r) > 0 {
			perSession[r[0]]++
		}
	}
	var twice []string
	for _, p := range ph.pages {
		n, err := pageUpdates(l.sandboxURL, p)
		if err != nil {
			return nil, err
		}
		if n != 1 || perPage[pageKey(p)] != 1 {
			twice = append(twice, fmt.Sprintf("page %s: %d updates, %d PaperSyncs", p, n, perPage[pageKey(p)]))
		}
	}
	for _, id := range ph.sessions {
		if perSession[id] != 1 {
			twice = append(twice, fmt.Sprintf("session %s: %d rows", id, perSession[id]))
		}
	}
	return twice, nil
}

// pageKey is a Notion page id without its dashes, as either form names it.
func pageKey(id string) string { return strings.ToLower(strings.ReplaceAll(id, "-", "")) }

// pageUpdates asks the sandbox how many times the Notion API updated a
// page.
func pageUpdates(sandboxURL, page string) (int, error) {
	resp, err := http.Get(sandboxURL + "/_sandbox/notion/pages/" + page + "/updates") //nolint:noctx // the sandbox on the host
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out struct {
		Updates int `json:"updates"`
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("sandbox: updates of page %s: %s", page, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, fmt.Errorf("sandbox: updates of page %s: %w", page, err)
	}
	return out.Updates, nil
}
