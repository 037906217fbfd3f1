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

package notionintegration

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxivid"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
	"github.com/switchboard-dev/switchboard/internal/upstream/notionid"
)

// Backfill creates the PaperSyncs for pages whose Link is set but whose
// Title or Publication Year is empty (a lost webhook, healed).
func Backfill(c client.Client, nc *notion.Client) func(ctx context.Context, ni *v1alpha1.NotionIntegration, token string) (int, error) {
	return func(ctx context.Context, ni *v1alpha1.NotionIntegration, token string) (int, error) {
		if ni.Status.DatabaseID == "" {
			return 0, nil
		}
		pages, err := nc.PagesMissingMetadata(ctx, token, ni.Status.DatabaseID, papers.LinkProperty(ni))
		if err != nil {
			return 0, err
		}
		created := 0
		for _, pl := range pages {
			id, err := arxivid.ParseLink(pl.Link)
			pageID := notionid.Normalize(pl.PageID)
			if err != nil || pageID == "" {
				continue // not an arXiv link: nothing to fill
			}
			ps := papers.NewSync(ni, pageID, pl.Link, id)
			switch err := c.Create(ctx, ps); {
			case err == nil:
				created++
			case apierrors.IsAlreadyExists(err):
				// A sync for this page and paper exists (pending, or failed
				// and kept for its retention): not again.
			default:
				return created, err
			}
		}
		return created, nil
	}
}
