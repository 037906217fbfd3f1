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

package notion_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/notionid"
)

// restoreBound is how long a restored integration may take to be Ready
// again, with no person's help, and its syncs to settle: a loaded 2-core
// machine, never a tight bound.
const restoreBound = 90 * time.Second

// The sandbox's papers (2301.12345, hep-th/9901001) and their links.
const (
	linkA = "https://arxiv.org/abs/2301.12345"
	linkB = "https://arxiv.org/abs/hep-th/9901001"
)

// backup reads what a backup of the cluster holds for a NotionIntegration:
// the Secrets of its namespace (the OAuth client, the grant, the webhook
// token, the connect link), the webhook's verification Secret of its
// events path (in the webhook's namespace), the integration and its
// PaperSyncs.
func (f *fixture) backup(t *testing.T) *testenv.Backup {
	t.Helper()
	ni := f.integration(t)
	verification := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: papers.VerificationSecretName(ni.Status.EventsPath)}}
	b, err := testenv.TakeNamespaceBackup(context.Background(), env.Client, f.ns, []client.Object{verification, ni}, &v1alpha1.PaperSyncList{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A Velero restore with the manager down (issue 35 §3): an integration
// with two pages filled (one through the Automation route and a connection
// event, one through a connection event alone) and two edits made while
// the manager was down (their PaperSyncs pending, an event's and an
// Automation's), backed up, lost (no finalizer runs) and restored without
// status or owner references. Started again, the manager brings the
// integration back Ready within a bound, finds its database rather than
// make a second, writes each page exactly once, and both routes take
// events again.
func TestAVeleroRestoreWritesEachPageOnceAndMakesNoSecondDatabase(t *testing.T) {
	ctx := context.Background()
	notionEmu.AddClient("restore-client", "restore-secret")
	notionEmu.SetEventRetrySchedule(20 * time.Millisecond)
	notionEmu.SetEventAggregation(time.Second)
	f := newClientFixture(t, "restore-client", "restore-secret", nil)
	ni := f.ready(t)
	eventually(t, "the events path served", func() bool { return post(t, ni.Status.EventsPath, `{"id":"x"}`).status == http.StatusUnauthorized })
	subscribe(t, ni, "restore-client")
	db := ni.Status.DatabaseID

	filledA := notionEmu.AddRow(db, map[string]any{"Link": linkA})
	if a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": filledA, "link": linkA}); a.status != http.StatusAccepted {
		t.Fatalf("the Automation's request: %d %v", a.status, a.body)
	}
	filledB := notionEmu.AddRow(db, map[string]any{"Link": linkB})
	idle(t, f.ns)

	stopControllers()
	restarted := false
	defer func() {
		if !restarted { // a failure before the restart leaves the suite a manager
			_ = startControllers(env)
		}
	}()
	// Edits while the manager is down: the webhook records them.
	pendingEvent := notionEmu.AddRow(db, map[string]any{"Link": linkA})
	pendingAuto := notionEmu.AddRow(db, map[string]any{"Link": linkB})
	if a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": pendingAuto, "link": linkB}); a.status != http.StatusAccepted {
		t.Fatalf("the Automation's request while the manager is down: %d %v", a.status, a.body)
	}
	eventually(t, "the outage's events recorded", func() bool {
		return notionEmu.WaitWebhooksIdle(ctx) == nil && len(syncsOf(t, f.ns, pendingEvent)) == 1 && len(syncsOf(t, f.ns, pendingAuto)) == 2
	})

	b := f.backup(t)
	if err := b.Lose(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := b.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := startControllers(env); err != nil {
		t.Fatal(err)
	}
	restarted = true
	testenv.EventuallyWithin(t, restoreBound, "the restored integration Ready", func() bool {
		n := f.integration(t)
		return n.Status.ObservedGeneration == n.Generation && status.IsTrue(n, v1alpha1.ReadyCondition)
	})
	t.Logf("Ready %s after the restart", time.Since(began).Round(time.Millisecond))
	ni = f.integration(t)
	if dbs := notionEmu.Databases(f.ws.ID, "ArXiv Papers"); len(dbs) != 1 || notionid.Normalize(ni.Status.DatabaseID) != notionid.Normalize(db) {
		t.Fatalf("databases %v, status %s: want only %s", dbs, ni.Status.DatabaseID, db)
	}
	routesTakeEventsAgain(t, f, ni)
	idle(t, f.ns)
	for page, name := range map[string]string{filledA: "filled by the Automation", filledB: "filled by an event",
		pendingEvent: "an event's, pending", pendingAuto: "an Automation's, pending"} {
		if n := notionEmu.Updates(page); n != 1 {
			t.Errorf("page %s (%s) written %d times, want once", page, name, n)
		}
	}
	connect := f.secretObject(t, oauth.ConnectSecretName("research"))
	if !metav1.IsControlledBy(connect, ni) {
		t.Errorf("the connect Secret's owners %v: want the restored integration", connect.OwnerReferences)
	}
	// Restored without owner references, each PaperSync is the restored
	// integration's again (deleted with it), and was still written once.
	var syncs v1alpha1.PaperSyncList
	if err := env.Client.List(ctx, &syncs, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	for i := range syncs.Items {
		if ps := &syncs.Items[i]; !slices.ContainsFunc(ps.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == ni.UID }) {
			t.Errorf("PaperSync %s: owners %+v, want the restored integration", ps.Name, ps.OwnerReferences)
		}
	}
}

// routesTakeEventsAgain: the Automation route (its path derived from the
// restored webhook token) and the connection-webhook route (its
// verification token restored with its Secret) each fill a new page once.
func routesTakeEventsAgain(t *testing.T, f *fixture, ni *v1alpha1.NotionIntegration) {
	t.Helper()
	byAuto := notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": linkA})
	testenv.EventuallyWithin(t, restoreBound, "the Automation route queues again", func() bool {
		a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": byAuto, "link": linkA})
		return a.status == http.StatusAccepted && a.body["paper_sync"] != nil
	})
	byEvent := notionEmu.AddRow(ni.Status.DatabaseID, nil)
	edit1(t, byEvent, "Link", linkB)
	for page, route := range map[string]string{byAuto: "Automation", byEvent: "events"} {
		testenv.EventuallyWithin(t, restoreBound, "the "+route+" route's page filled", func() bool {
			return notionEmu.Row(page)["Publication Year"] != nil
		})
	}
	idle(t, f.ns)
	for _, page := range []string{byAuto, byEvent} {
		if n := notionEmu.Updates(page); n != 1 {
			t.Errorf("page %s written %d times after the restore, want once", page, n)
		}
	}
}

// subscribe subscribes clientID's public integration to ni's events path
// and verifies the subscription with the token the webhook kept.
func subscribe(t *testing.T, ni *v1alpha1.NotionIntegration, clientID string) {
	t.Helper()
	sub := notionEmu.Subscribe(sandbox.NotionSubscription{ClientID: clientID, URL: hookURL + ni.Status.EventsPath})
	t.Cleanup(func() { notionEmu.Unsubscribe(sub) })
	eventually(t, "Notion to see its verification request answered", func() bool { return notionEmu.SentVerificationToken(sub) != "" })
	var sec corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: papers.VerificationSecretName(ni.Status.EventsPath)}, &sec); err != nil {
		t.Fatal(err)
	}
	if err := notionEmu.VerifySubscription(sub, string(sec.Data[papers.VerificationTokenKey])); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) secretObject(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// GitOps (issue 35 §3): a completed PaperSync deleted and applied again
// while the manager runs comes back without status, and writes its page
// no second time; nor does an event's PaperSync whose page a person
// corrected since, re-applied after the sync it handed the page to was
// deleted (its retention); nor does the integration, re-applied, make a
// second database.
func TestAReappliedPaperSyncWritesItsPageNoSecondTime(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	ni := f.ready(t)
	db := ni.Status.DatabaseID

	page := notionEmu.AddRow(db, map[string]any{"Link": linkA})
	a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": page, "link": linkA})
	if a.status != http.StatusAccepted {
		t.Fatalf("the Automation's request: %d %v", a.status, a.body)
	}
	done := f.waitSync(t, a.body["paper_sync"].(string), v1alpha1.SyncSucceeded)
	reapplied := reapply(t, done)
	if notionEmu.Updates(page) != 1 || !strings.Contains(reapplied.Status.Skipped, "already holds") {
		t.Fatalf("page written %d times, the re-applied sync skipped %q: want once, and why", notionEmu.Updates(page), reapplied.Status.Skipped)
	}

	// An event's sync hands a fresh page over; a person corrects the title
	// once it is filled; the sync it handed to is deleted.
	evPage := notionEmu.AddRow(db, map[string]any{"Link": linkB})
	ev := papers.NewEventSync(ni, notionid.Normalize(evPage), v1alpha1.NotionPageEvent{ID: "reapply-1", Type: "page.created"})
	if err := env.Client.Create(ctx, ev); err != nil {
		t.Fatal(err)
	}
	ev = f.waitSync(t, ev.Name, v1alpha1.SyncSucceeded)
	handed := f.waitSync(t, ev.Status.HandedTo, v1alpha1.SyncSucceeded)
	edit1(t, evPage, "Title", "Duality, corrected")
	if err := env.Client.Delete(ctx, handed); err != nil {
		t.Fatal(err)
	}
	again := reapply(t, ev)
	next := f.waitSync(t, again.Status.HandedTo, v1alpha1.SyncSucceeded)
	if n := notionEmu.Updates(evPage); n != 1 || notionEmu.Row(evPage)["Title"] != "Duality, corrected" || next.Status.Skipped == "" {
		t.Fatalf("page written %d times, title %q, the new hand-over skipped %q: want once, the person's title, skipped",
			n, notionEmu.Row(evPage)["Title"], next.Status.Skipped)
	}

	// The integration itself, deleted and applied again.
	manifest := f.integration(t)
	if err := testenv.Reapply(ctx, env.Client, manifest, time.Minute); err != nil {
		t.Fatal(err)
	}
	testenv.EventuallyWithin(t, restoreBound, "the re-applied integration Ready", func() bool {
		n := f.integration(t)
		return n.UID != manifest.UID && n.Status.ObservedGeneration == n.Generation && status.IsTrue(n, v1alpha1.ReadyCondition)
	})
	if dbs := notionEmu.Databases(f.ws.ID, "ArXiv Papers"); len(dbs) != 1 || notionid.Normalize(f.integration(t).Status.DatabaseID) != notionid.Normalize(db) {
		t.Fatalf("databases %v: want only %s", dbs, db)
	}
}

// reapply deletes ps and applies it again as a GitOps tool would, and
// waits for the new object to finish.
func reapply(t *testing.T, ps *v1alpha1.PaperSync) *v1alpha1.PaperSync {
	t.Helper()
	if err := testenv.Reapply(context.Background(), env.Client, ps, time.Minute); err != nil {
		t.Fatal(err)
	}
	var got *v1alpha1.PaperSync
	testenv.EventuallyWithin(t, restoreBound, "the re-applied PaperSync "+ps.Name+" finished", func() bool {
		got = &v1alpha1.PaperSync{}
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ps), got)
		return err == nil && got.UID != ps.UID && got.Status.CompletedAt != nil
	})
	if got.Status.Phase != v1alpha1.SyncSucceeded {
		t.Fatalf("the re-applied PaperSync %s is %s: %s", ps.Name, got.Status.Phase, got.Status.LastError)
	}
	return got
}
