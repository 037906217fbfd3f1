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
	"fmt"
	"net/url"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxivid"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
	"github.com/switchboard-dev/switchboard/internal/upstream/notionid"
)

// A connection-webhook event names a page, not its values: its sync reads
// the page (paced to the integration's three requests a second) and then
// either hands it to the sync of that page and paper, which an
// Automation's request or the backfill would have made (same name: one
// fill, whichever path saw the edit first), or finishes Succeeded with the
// reason the page needed nothing (status.skipped).

// resolve reads the page of each event's sync of the batch, and returns
// the other members: the syncs with a link, which fill their page. An
// event's sync finishes here (handed over or skipped), fails, or waits
// for the next try.
func (b *batchRun) resolve(ctx context.Context, members []*v1alpha1.PaperSync) []*v1alpha1.PaperSync {
	isEvent := func(ps *v1alpha1.PaperSync) bool { return ps.Spec.Event != nil }
	return b.readPages(ctx, members, isEvent, func(ps *v1alpha1.PaperSync, page notion.Page, err error) bool {
		switch {
		case notion.IsNotFound(err):
			b.skip(ps, "the page was not found, or is no longer shared with the integration")
		case err != nil:
			b.attemptFailed(ctx, ps, "PageReadFailed", fmt.Errorf("read page %s: %w", ps.Spec.PageID, err))
		default:
			if id, ok := b.decide(ps, page); ok {
				b.handOver(ctx, ps, page.Link, id)
			}
		}
		return false
	})
}

// readPages reads, at Notion's pace, the page of each member that needs
// it and hands the page (or the failure) to got, which says whether the
// member stays in the batch; the others stay as they are. A read past the
// pace, or after Notion limited one, waits for the next batch without an
// attempt counted.
func (b *batchRun) readPages(ctx context.Context, members []*v1alpha1.PaperSync, needs func(*v1alpha1.PaperSync) bool,
	got func(*v1alpha1.PaperSync, notion.Page, error) bool) []*v1alpha1.PaperSync {
	keep := make([]*v1alpha1.PaperSync, 0, len(members))
	throttled := false
	for _, ps := range members {
		if !needs(ps) {
			keep = append(keep, ps)
			continue
		}
		if throttled || runner.Stopping(ctx) {
			continue // the next try reads it
		}
		if ok, wait := b.r.Pacer.Take(string(b.ni.UID)); !ok {
			b.later(wait)
			continue
		}
		page, err := b.r.Notion.ReadPage(ctx, b.token, ps.Spec.PageID, papers.LinkProperty(b.ni))
		if err != nil {
			throttled = throttledBy(err)
		}
		if got(ps, page, err) {
			keep = append(keep, ps)
		}
	}
	return keep
}

// decide says whether an event's page needs its paper, and which, and
// finishes the sync as skipped when it does not. A page already holding
// metadata is filled again only when the event changed its Link and the
// last edit was not the integration's own (its page update is an edit
// too, and Notion reports it as an event).
func (b *batchRun) decide(ps *v1alpha1.PaperSync, page notion.Page) (string, bool) {
	link := papers.LinkProperty(b.ni)
	switch {
	case page.Gone:
		b.skip(ps, "the page is archived or in the trash")
	case page.DatabaseID == "" || page.DatabaseID != notionid.Normalize(b.ni.Status.DatabaseID):
		b.skip(ps, "the page is not in the integration's database")
	case page.Link == "":
		b.skip(ps, "the page's "+link+" is empty")
	default:
		id, err := arxivid.ParseLink(page.Link)
		if err != nil {
			b.skip(ps, fmt.Sprintf("the page's %s is not an arXiv abstract or PDF URL", link))
			b.warn("LinkNotArxiv", "page %s: %s is not an arXiv abstract or PDF URL: %.200q", ps.Spec.PageID, link, page.Link)
			return "", false
		}
		ours := page.LastEditedBy != "" && notionid.Normalize(page.LastEditedBy) == notionid.Normalize(b.ni.Status.BotID)
		if page.HasMetadata && (ours || !linkChanged(ps.Spec.Event, page.LinkPropertyID)) {
			b.skip(ps, "the page already holds its paper's metadata")
			return "", false
		}
		return id, true
	}
	return "", false
}

// handOver creates the sync of the page and paper (an existing one is the
// same edit seen by another path, or the paper filled within the
// retention) and finishes the event's sync as Succeeded, naming it.
func (b *batchRun) handOver(ctx context.Context, ps *v1alpha1.PaperSync, link, arxivID string) {
	next := papers.NewSync(b.ni, notionid.Normalize(ps.Spec.PageID), link, arxivID)
	if unsure(ps, b.ni) {
		// An event sync a restore re-created may hand over a page its
		// first run had filled: the new sync reads the page first.
		next.Annotations = map[string]string{papers.ReadFirstAnnotation: "true"}
	}
	switch err := b.r.Create(ctx, next); {
	case err == nil:
		b.batch.Created(client.ObjectKeyFromObject(next))
	case !apierrors.IsAlreadyExists(err):
		b.attemptFailed(ctx, ps, "HandOverFailed", fmt.Errorf("create PaperSync %s: %w", next.Name, err))
		return
	}
	ps.Status.Attempts++
	ps.Status.Link, ps.Status.ArxivID, ps.Status.HandedTo = link, arxivID, next.Name
	b.batch.Succeeded(ps, v1alpha1.SucceededReason, "the page's "+papers.LinkProperty(b.ni)+" holds "+arxivID+"; PaperSync "+next.Name+" fills it")
}

// linkChanged: the event created the page, or names the Link among the
// properties it changed. Notion gives property ids URL-encoded in both
// places, but compare decoded forms too.
func linkChanged(ev *v1alpha1.NotionPageEvent, linkID string) bool {
	if ev.Type == "page.created" || ev.Type == "page.undeleted" || ev.Type == "page.moved" {
		return true
	}
	if linkID == "" {
		return false
	}
	plain, _ := url.PathUnescape(linkID)
	return slices.ContainsFunc(ev.UpdatedProperties, func(id string) bool {
		d, _ := url.PathUnescape(id)
		return id == linkID || d == plain
	})
}

// later asks for the members left pending to be tried again in d, or
// sooner if another asked.
func (b *batchRun) later(d time.Duration) {
	if b.retryIn == 0 || d < b.retryIn {
		b.retryIn = d
	}
}

// skip finishes an event's sync whose page needs nothing: Succeeded and
// Ready, with the reason, not counted as a paper synced.
func (b *batchRun) skip(ps *v1alpha1.PaperSync, why string) {
	ps.Status.Attempts++
	ps.Status.Skipped = why
	b.batch.Succeeded(ps, v1alpha1.SkippedReason, "nothing to fill: "+why)
}

// warn records a Warning Event on the integration: something the person
// can fix in Notion.
func (b *batchRun) warn(reason, format string, args ...any) {
	if b.r.Recorder != nil {
		b.r.Recorder.Eventf(b.ni, nil, corev1.EventTypeWarning, reason, "Sync", format, args...)
	}
}
