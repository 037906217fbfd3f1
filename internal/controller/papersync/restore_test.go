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

package papersync

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxiv"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// restored makes sync i of f as a restore brings it back: no owner
// reference (Velero's restore and a re-applied manifest carry none).
func (f *fixture) restored(t *testing.T, i int) {
	t.Helper()
	ps := f.sync(t, i)
	ps.OwnerReferences = nil
	if err := f.c.Update(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
}

// A sync a restore re-created reads its page first: a page that holds its
// paper is not written again (Succeeded, Skipped), one that does not —
// empty, or filled with the paper its Link held before — is written.
// Syncs the integration made itself are written without a read.
func TestARestoredSyncWritesOnlyAPageThatLacksItsPaper(t *testing.T) {
	const year = 2026 // the fixtures' papers are published at t0
	withAuthors := func(id string) arxiv.Paper {
		p := paper(id)
		p.Authors = []string{"Ada Lovelace", "Alan Turing"}
		return p
	}
	for _, c := range []struct {
		name  string
		page  notion.Page
		write bool
	}{
		{name: "the page holds its paper", page: notion.Page{Title: "Paper 2301.00001", Authors: "Ada Lovelace, Alan Turing", Year: year}},
		{name: "a person corrected the title since", page: notion.Page{Title: "Paper one", Authors: "Ada Lovelace, Alan Turing", Year: year}},
		{name: "the page is empty", page: notion.Page{}, write: true},
		{name: "the page holds the paper its Link held before", page: notion.Page{Title: "Paper 2301.00009", Authors: "Grace Hopper", Year: year}, write: true},
		{name: "the same title in another year", page: notion.Page{Title: "Paper 2301.00001", Year: 2019}, write: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, "2301.00001", "2301.00002")
			f.arxiv.fetch = func(ids []string) (map[string]arxiv.Paper, []string, error) {
				found := map[string]arxiv.Paper{}
				for _, id := range ids {
					found[id] = withAuthors(id)
				}
				return found, nil, nil
			}
			f.restored(t, 0)
			var read []string
			f.notion.read = func(page string) (notion.Page, error) {
				read = append(read, page)
				return c.page, nil
			}
			f.reconcile(t, 0)
			ps := f.sync(t, 0)
			wrote := len(f.notion.pages) == 2
			if ps.Status.Phase != v1alpha1.SyncSucceeded || wrote != c.write || len(read) != 1 || read[0] != "page-0" {
				t.Fatalf("phase %s, pages written %v, pages read %v: want Succeeded, page-0 written %v, page-0 read once",
					ps.Status.Phase, f.notion.pages, read, c.write)
			}
			if f.sync(t, 1).Status.Phase != v1alpha1.SyncSucceeded || f.notion.pages[len(f.notion.pages)-1] != "page-1" {
				t.Fatalf("the integration's own sync: pages written %v, want page-1 written without a read", f.notion.pages)
			}
			reason := status.Get(ps, v1alpha1.ReadyCondition).Reason
			if c.write != (reason == v1alpha1.SucceededReason) || c.write != (ps.Status.Skipped == "") ||
				ps.Status.Title != "Paper 2301.00001" || ps.Status.PublicationYear != year {
				t.Fatalf("Ready reason %s, skipped %q, title %q %d", reason, ps.Status.Skipped, ps.Status.Title, ps.Status.PublicationYear)
			}
		})
	}
}

// A page read that fails counts an attempt and is retried, as a failed
// page update is: nothing is written meanwhile.
func TestARestoredSyncWhosePageReadFailsWritesNothing(t *testing.T) {
	f := newFixture(t, "2301.00001")
	f.restored(t, 0)
	f.notion.read = func(string) (notion.Page, error) {
		return notion.Page{}, &outbound.Error{Upstream: upstream.Notion, Class: outbound.Transient, Status: 503, Reason: "unavailable"}
	}
	f.reconcile(t, 0)
	ps := f.sync(t, 0)
	if ps.Status.Phase != v1alpha1.SyncPending || ps.Status.Attempts != 1 || len(f.notion.pages) != 0 || f.arxiv.calls.Load() != 0 {
		t.Fatalf("phase %s, attempts %d, pages %v, arXiv calls %d: want pending after 1 attempt, nothing written or fetched",
			ps.Status.Phase, ps.Status.Attempts, f.notion.pages, f.arxiv.calls.Load())
	}
}

// An event's sync a restore re-created may hand over a page its first run
// had filled: the sync it creates reads the page first, and writes
// nothing when the page holds the paper.
func TestARestoredEventSyncsHandOverReadsThePageFirst(t *testing.T) {
	f, _ := eventFixture(t, v1alpha1.NotionPageEvent{ID: "e1", Type: "page.created"})
	f.restored(t, 0)
	page := filled("https://arxiv.org/abs/2301.12345")
	page.Title, page.Year = "Paper 2301.12345", 2026
	f.notion.read = func(string) (notion.Page, error) { return page, nil }
	f.reconcile(t, 0)
	ev := f.sync(t, 0)
	var next v1alpha1.PaperSync
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: ev.Status.HandedTo}, &next); err != nil {
		t.Fatalf("handed to %q: %v", ev.Status.HandedTo, err)
	}
	if next.Annotations[papers.ReadFirstAnnotation] == "" || !unsure(&next, &v1alpha1.NotionIntegration{}) {
		t.Fatalf("the handed-over sync's annotations %v: want %s", next.Annotations, papers.ReadFirstAnnotation)
	}
	f.syncs = append(f.syncs, &next)
	f.reconcile(t, 1)
	if ps := f.sync(t, 1); ps.Status.Phase != v1alpha1.SyncSucceeded || !strings.Contains(ps.Status.Skipped, "already holds") ||
		len(f.notion.pages) != 0 || f.notion.reads != 2 {
		t.Fatalf("phase %s, skipped %q, pages written %v, reads %d: want Succeeded, skipped, none, 2",
			ps.Status.Phase, ps.Status.Skipped, f.notion.pages, f.notion.reads)
	}
}
