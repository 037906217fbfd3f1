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

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxiv"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
)

// Exactly once after a restore (issue 35). Velero, and a GitOps delete
// and re-apply, create a PaperSync again without its status: one that had
// filled its page looks pending, and writing the page again would be a
// second write. What a restore keeps tells the two apart: the webhook,
// the backfill and a hand-over create each sync with an owner reference
// to its integration's UID, and a restore brings it back with none (or
// one to the UID of an integration that is gone). Such a sync reads its
// page first (paced, as an event's sync does): a page that already holds
// the sync's paper (Page.Holds) is not written again, and the sync
// finishes Succeeded with status.skipped saying so. A sync an unsure
// event sync hands its page to is created with papers.ReadFirstAnnotation,
// and reads its page first too.

// unsure reports whether ps may have filled its page before it was
// re-created: it was not made for this integration (no owner reference
// to its UID), or was created by one that was (the annotation).
func unsure(ps *v1alpha1.PaperSync, ni *v1alpha1.NotionIntegration) bool {
	if ps.Annotations[papers.ReadFirstAnnotation] != "" {
		return true
	}
	for _, ref := range ps.OwnerReferences {
		if ref.UID == ni.UID {
			return false
		}
	}
	return true
}

// readFirst reads the pages of the batch's unsure syncs into b.pages and
// returns the members to fetch from arXiv: the sure ones, and the unsure
// ones whose page was read. A read past Notion's pace waits for a later
// batch without an attempt counted; a failed read counts one, as a
// failed page update does.
func (b *batchRun) readFirst(ctx context.Context, members []*v1alpha1.PaperSync) []*v1alpha1.PaperSync {
	isUnsure := func(ps *v1alpha1.PaperSync) bool { return unsure(ps, b.ni) }
	return b.readPages(ctx, members, isUnsure, func(ps *v1alpha1.PaperSync, page notion.Page, err error) bool {
		if err != nil {
			b.attemptFailed(ctx, ps, "PageReadFailed", fmt.Errorf("read page %s: %w", ps.Spec.PageID, err))
			return false
		}
		if b.pages == nil {
			b.pages = map[types.UID]notion.Page{}
		}
		b.pages[ps.UID] = page
		return true
	})
}

// filledBefore reports whether ps's page, read first, already holds
// paper; the sync is then finished without a write.
func (b *batchRun) filledBefore(ps *v1alpha1.PaperSync, paper arxiv.Paper) bool {
	page, ok := b.pages[ps.UID]
	if !ok || !page.Holds(paperFor(ps, paper)) {
		return false
	}
	ps.Status.Attempts++
	ps.Status.Title, ps.Status.PublicationYear = notion.Truncate(paper.Title), int32(paper.Year()) //nolint:gosec // years fit
	ps.Status.Skipped = "the page already holds " + ps.Spec.ArxivID + "'s metadata, written before this PaperSync was re-created"
	b.batch.Succeeded(ps, v1alpha1.SkippedReason, "nothing to write: "+ps.Status.Skipped)
	return true
}

// paperFor is what ps writes into its page.
func paperFor(ps *v1alpha1.PaperSync, p arxiv.Paper) notion.Paper {
	return notion.Paper{Title: p.Title, Summary: p.Summary, Authors: p.Authors, Year: p.Year(), Link: ps.Spec.Link}
}
