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

package webhook

import (
	"context"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/pages"
)

// DatabaseWait is how long Notion's success page waits for the manager to
// find or create the integration's database, so that the researcher gets
// its link rather than a promise (seed 000 §3.1.2 shows the link).
const DatabaseWait = 10 * time.Second

// notionSuccess follows seed 000 §3.1.2's page — 「連携が完了しました」,
// the database's link, 次のステップ, 使い方 — in the reader's language,
// with the next steps Notion's real UI allows (the seed's "Send HTTP
// request" with a method and a body does not exist): nothing, when the
// public integration's connection webhook is verified; else a database
// automation's "Send webhook", on a paid plan, with the backfill as the
// floor. The page does not reload itself (its URL carries a state just
// consumed), so it waits up to DatabaseWait for the database's link.
func notionSuccess(w http.ResponseWriter, r *http.Request, d Deps, res *oauth.Resource, extra map[string]string) error {
	ni := res.Object.(*v1alpha1.NotionIntegration)
	ni = awaitDatabase(r.Context(), d, ni)
	link := pages.Code(papers.LinkProperty(ni))
	p := pages.Page{Status: http.StatusOK, Mark: pages.Done, Title: pages.Say(pages.NotionDoneTitle),
		Admin: []string{kubectlGet("notionintegration", types.NamespacedName{Namespace: ni.Namespace, Name: ni.Name})}}
	if ws := extra["workspace_name"]; ws != "" {
		p.Lines = append(p.Lines, pages.Say(pages.NotionWorkspaceLine, pages.Strong(ws)))
	}
	if ni.Status.DatabaseURL != "" {
		p.Link = &pages.Link{Href: ni.Status.DatabaseURL, Label: pages.Say(pages.NotionOpenDatabase, databaseName(ni))}
	} else {
		p.Lines = append(p.Lines, pages.Say(pages.NotionPreparingLine, pages.Strong(databaseName(ni))))
	}
	p.Sections = []pages.Section{nextSteps(d, ni, link), {Heading: pages.Say(pages.UsageHeading), Steps: []pages.Line{
		pages.Say(pages.UseStepPage), pages.Say(pages.UseStepLink, link), pages.Say(pages.UseStepFilled)}}}
	return showPage(w, r, p, nil)
}

// nextSteps is 次のステップ: nothing to set up when Notion's events
// arrive, else the automation in Notion's own words.
func nextSteps(d Deps, ni *v1alpha1.NotionIntegration, link pages.Code) pages.Section {
	s := pages.Section{Heading: pages.Say(pages.NextStepsHeading)}
	if eventsVerified(d, ni) {
		s.Lines = []pages.Line{pages.Say(pages.NothingToSetUpLine)}
		return s
	}
	s.Lines = []pages.Line{pages.Say(pages.BackfillLine, link, backfillMinutes(ni))}
	url := pages.Say(pages.AutoStepURLAsk)
	if ni.Status.WebhookPath != "" && d.PublicURL != "" {
		url = pages.Say(pages.AutoStepURL)
		s.Code = strings.TrimSuffix(d.PublicURL, "/") + ni.Status.WebhookPath
	}
	s.Steps = []pages.Line{pages.Say(pages.AutoStepOpen), pages.Say(pages.AutoStepTrigger, link), pages.Say(pages.AutoStepAction),
		url, pages.Say(pages.AutoStepTick, link), pages.Say(pages.AutoStepCreate)}
	return s
}

// databaseName is the name of the database the integration finds or
// creates (seed 000 §3.2.1: ArXiv Papers).
func databaseName(ni *v1alpha1.NotionIntegration) string {
	if ni.Spec.Database.Name != "" {
		return ni.Spec.Database.Name
	}
	return "ArXiv Papers"
}

// backfillMinutes is the integration's backfill interval in whole minutes
// (an hour when unset).
func backfillMinutes(ni *v1alpha1.NotionIntegration) int {
	if d := ni.Spec.BackfillInterval.Duration; d > 0 {
		return int((d + time.Minute - 1) / time.Minute)
	}
	return 60
}

// awaitDatabase reads the integration again, every quarter second for up
// to DatabaseWait, until its status has the database's link; it gives
// back the last read (ni itself when none succeeded).
func awaitDatabase(ctx context.Context, d Deps, ni *v1alpha1.NotionIntegration) *v1alpha1.NotionIntegration {
	if ni.Status.DatabaseURL != "" {
		return ni
	}
	last := ni
	key := types.NamespacedName{Namespace: ni.Namespace, Name: ni.Name}
	_ = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, DatabaseWait, false, func(ctx context.Context) (bool, error) {
		var fresh v1alpha1.NotionIntegration
		if err := d.APIReader.Get(ctx, key, &fresh); err != nil || fresh.UID != ni.UID {
			return false, nil
		}
		last = &fresh
		return fresh.Status.DatabaseURL != "", nil
	})
	return last
}

// eventsVerified: Notion has sent the public integration's connection
// webhook its verification token, so its events arrive.
func eventsVerified(d Deps, ni *v1alpha1.NotionIntegration) bool {
	if ni.Status.EventsPath == "" {
		return false
	}
	var sec corev1.Secret
	key := types.NamespacedName{Namespace: d.StateNamespace, Name: papers.VerificationSecretName(ni.Status.EventsPath)}
	return d.Client.Get(context.Background(), key, &sec) == nil && len(sec.Data[papers.VerificationTokenKey]) > 0
}
