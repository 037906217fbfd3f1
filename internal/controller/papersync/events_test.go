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
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

const (
	evDB   = "0c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
	evBot  = "b0b0b0b0-0000-4000-8000-000000000001"
	evLink = "%3AUPp"
	person = "11111111-2222-4333-8444-555555555555"
)

// eventFixture is one Ready integration with its database and bot, and
// the syncs of connection events for pages page-0, page-1…
func eventFixture(t *testing.T, events ...v1alpha1.NotionPageEvent) (*fixture, *testenv.Recorder) {
	t.Helper()
	f := newFixture(t)
	rec := &testenv.Recorder{}
	f.r.Recorder = rec
	ctx := context.Background()
	ni := &v1alpha1.NotionIntegration{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "ni"}, ni); err != nil {
		t.Fatal(err)
	}
	ni.Status.DatabaseID, ni.Status.BotID = strings.ReplaceAll(evDB, "-", ""), evBot
	if err := f.c.Status().Update(ctx, ni); err != nil {
		t.Fatal(err)
	}
	for i, ev := range events {
		ps := &v1alpha1.PaperSync{ObjectMeta: metav1.ObjectMeta{Name: "ev" + string(rune('a'+i)), Namespace: "ns",
			UID: types.UID("ev-uid-" + string(rune('a'+i))), CreationTimestamp: metav1.NewTime(t0), OwnerReferences: ownedByNI()},
			Spec: v1alpha1.PaperSyncSpec{IntegrationRef: v1alpha1.LocalObjectReference{Name: "ni"}, PageID: "page-" + string(rune('0'+i)), Event: &ev}}
		if err := f.c.Create(ctx, ps); err != nil {
			t.Fatal(err)
		}
		f.syncs = append(f.syncs, ps)
	}
	return f, rec
}

func filled(link string) notion.Page {
	return notion.Page{DatabaseID: evDB, Link: link, LinkPropertyID: evLink, HasMetadata: true, LastEditedBy: person}
}

// A connection event's sync reads its page and hands it to the sync of its
// page and paper only when the page needs its paper; every other page
// finishes Succeeded with the reason. The event's sync writes no page.
func TestAnEventsSyncFillsOnlyAPageThatNeedsItsPaper(t *testing.T) {
	updated := v1alpha1.NotionPageEvent{ID: "e1", Type: "page.properties_updated", UpdatedProperties: []string{evLink}}
	other := v1alpha1.NotionPageEvent{ID: "e2", Type: "page.properties_updated", UpdatedProperties: []string{"title"}}
	ours := filled("https://arxiv.org/abs/2301.12345")
	ours.LastEditedBy = evBot
	notFound := &outbound.Error{Upstream: upstream.Notion, Class: outbound.Permanent, Status: http.StatusNotFound, Reason: "object_not_found"}
	for _, c := range []struct {
		name  string
		ev    v1alpha1.NotionPageEvent
		page  notion.Page
		err   error
		fill  bool
		why   string
		event string
	}{
		{name: "empty Link", ev: updated, page: notion.Page{DatabaseID: evDB, LinkPropertyID: evLink}, why: "is empty"},
		{name: "not arXiv", ev: updated, page: notion.Page{DatabaseID: evDB, Link: "https://example.com/x"}, why: "not an arXiv", event: "LinkNotArxiv"},
		{name: "another database", ev: updated, page: notion.Page{DatabaseID: "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", Link: "https://arxiv.org/abs/2301.12345"}, why: "not in the integration's database"},
		{name: "not a row", ev: updated, page: notion.Page{Link: "https://arxiv.org/abs/2301.12345"}, why: "not in the integration's database"},
		{name: "archived", ev: updated, page: notion.Page{DatabaseID: evDB, Gone: true, Link: "https://arxiv.org/abs/2301.12345"}, why: "archived"},
		{name: "gone or unshared", ev: updated, err: notFound, why: "not found"},
		{name: "fresh paper", ev: updated, page: notion.Page{DatabaseID: evDB, Link: "https://arxiv.org/abs/2301.12345v2"}, fill: true},
		{name: "fresh paper, Link not among the changes", ev: other, page: notion.Page{DatabaseID: evDB, Link: "https://arxiv.org/abs/2301.12345"}, fill: true},
		{name: "our own write reported back", ev: updated, page: ours, why: "already holds"},
		{name: "a person changed the Link of a filled page", ev: updated, page: filled("https://arxiv.org/abs/2301.12345"), fill: true},
		{name: "a person edited another property", ev: other, page: filled("https://arxiv.org/abs/2301.12345"), why: "already holds"},
		{name: "a new page holding a link and metadata", ev: v1alpha1.NotionPageEvent{ID: "e3", Type: "page.created"}, page: filled("https://arxiv.org/abs/2301.12345"), fill: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, rec := eventFixture(t, c.ev)
			f.notion.read = func(string) (notion.Page, error) { return c.page, c.err }
			f.reconcile(t, 0)
			ps := f.sync(t, 0)
			if ps.Status.Phase != v1alpha1.SyncSucceeded || f.notion.reads != 1 {
				t.Fatalf("phase %s after %d reads, want Succeeded after 1", ps.Status.Phase, f.notion.reads)
			}
			var handed v1alpha1.PaperSync
			err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: ps.Status.HandedTo}, &handed)
			if len(f.notion.pages) != 0 {
				t.Fatalf("the event's sync wrote pages %v itself", f.notion.pages)
			}
			if c.fill {
				want := papers.SyncName("ni", "page-0", "2301.12345")
				if err != nil || handed.Name != want || handed.Spec.ArxivID != "2301.12345" || handed.Spec.Link != c.page.Link ||
					ps.Status.ArxivID != "2301.12345" || ps.Status.Skipped != "" {
					t.Fatalf("handed to %q (%v), status %+v: want %s for 2301.12345", ps.Status.HandedTo, err, ps.Status, want)
				}
				return
			}
			if ps.Status.HandedTo != "" || !strings.Contains(ps.Status.Skipped, c.why) || ps.Status.ArxivID != "" {
				t.Fatalf("handed to %q, skipped %q: want nothing handed over and %q", ps.Status.HandedTo, ps.Status.Skipped, c.why)
			}
			if got := len(rec.With("LinkNotArxiv")); (c.event != "") != (got == 1) {
				t.Fatalf("%d LinkNotArxiv Events, want one only for a link that is not arXiv", got)
			}
		})
	}
}

// A page read that Notion answers 503 is retried on the schedule, with
// nothing written and nothing skipped.
func TestAnEventsSyncWhosePageReadFailsIsRetried(t *testing.T) {
	f, _ := eventFixture(t, v1alpha1.NotionPageEvent{ID: "e1", Type: "page.created"})
	f.notion.read = func(string) (notion.Page, error) {
		return notion.Page{}, &outbound.Error{Upstream: upstream.Notion, Class: outbound.Transient, Status: 503, Reason: "unavailable"}
	}
	out := f.reconcile(t, 0)
	ps := f.sync(t, 0)
	if ps.Status.Phase != v1alpha1.SyncPending || ps.Status.CompletedAt != nil || len(f.notion.pages) != 0 || out.After() <= 0 {
		t.Fatalf("phase %s, completed %v, pages %v, outcome %s: want pending and retried", ps.Status.Phase, ps.Status.CompletedAt, f.notion.pages, out)
	}
}

// An Automation's sync and a connection event's for the same edit make one
// sync of the page and paper, whichever came first: the page is written
// once.
func TestAnEventsSyncAndAnAutomationsForOneEditFillThePageOnce(t *testing.T) {
	f, _ := eventFixture(t, v1alpha1.NotionPageEvent{ID: "e1", Type: "page.properties_updated", UpdatedProperties: []string{evLink}})
	f.notion.read = func(string) (notion.Page, error) {
		return notion.Page{DatabaseID: evDB, Link: "https://arxiv.org/abs/2301.12345", LinkPropertyID: evLink}, nil
	}
	ni := &v1alpha1.NotionIntegration{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "ni"}, ni); err != nil {
		t.Fatal(err)
	}
	auto := papers.NewSync(ni, "page-0", "https://arxiv.org/abs/2301.12345", "2301.12345")
	auto.UID, auto.CreationTimestamp = "auto-uid", metav1.NewTime(t0.Add(time.Second))
	if err := f.c.Create(context.Background(), auto); err != nil {
		t.Fatal(err)
	}
	f.syncs = append(f.syncs, auto)
	f.reconcile(t, 0)
	if ev := f.sync(t, 0); ev.Status.HandedTo != auto.Name || ev.Status.Phase != v1alpha1.SyncSucceeded {
		t.Fatalf("the event's sync handed to %q (%s), want the Automation's %s", ev.Status.HandedTo, ev.Status.Phase, auto.Name)
	}
	f.reconcile(t, 1)
	if ps := f.sync(t, 1); ps.Status.Phase != v1alpha1.SyncSucceeded || len(f.notion.pages) != 1 {
		t.Fatalf("the Automation's sync is %s after %d page writes, want Succeeded after one", ps.Status.Phase, len(f.notion.pages))
	}
}

// Page reads keep to Notion's pace without a worker waiting for it: a
// batch of five events' syncs reads three pages (the pacer's burst) and
// leaves the other two pending, with a requeue for when the pace allows.
func TestEventsSyncsReadPagesAtNotionsPaceWithoutWaiting(t *testing.T) {
	evs := make([]v1alpha1.NotionPageEvent, 5)
	for i := range evs {
		evs[i] = v1alpha1.NotionPageEvent{ID: "e" + string(rune('0'+i)), Type: "page.created"}
	}
	f, _ := eventFixture(t, evs...)
	f.r.Pacer = &notion.Pacer{Limit: 1, Burst: 3} // a second a read after the burst
	f.notion.read = func(string) (notion.Page, error) { return notion.Page{DatabaseID: evDB, LinkPropertyID: evLink}, nil }
	f.reconcile(t, 0)
	var pending []int
	for i := range evs {
		if f.sync(t, i).Status.CompletedAt == nil {
			pending = append(pending, i)
		}
	}
	if f.notion.reads != 3 || len(pending) != 2 {
		t.Fatalf("%d reads, %d pending: want 3 and 2", f.notion.reads, len(pending))
	}
	// A pending one reconciled at once finds the pace spent: no read, and
	// a requeue for when it allows, within the second.
	out := f.reconcile(t, pending[0])
	if f.notion.reads != 3 || out.After() <= 0 || out.After() > time.Second {
		t.Fatalf("%d reads, requeue after %s: want no more, and within a second", f.notion.reads, out.After())
	}
	if ps := f.sync(t, pending[0]); ps.Status.Attempts != 0 || ps.Status.Phase == v1alpha1.SyncFailed {
		t.Fatalf("a sync left for the pace: %+v", ps.Status)
	}
}
