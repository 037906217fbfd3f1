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
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/upstream/notionid"
)

// The sandbox's two Notion senders, driven end to end: a database
// automation's "Send webhook" action and a public integration's connection
// webhooks, against the webhook server and the controllers on a real API
// server. The events tests use an OAuth client of their own, so that their
// subscription sees only their workspaces.

const arxivTitle = "A Study of Examples in Practice" // the sandbox's paper 2301.12345

// idle waits until the sandbox has sent everything it queued and every
// PaperSync of ns has finished: the point after which nothing more can
// happen to the pages.
func idle(t *testing.T, ns string) {
	t.Helper()
	eventually(t, "the senders idle and every PaperSync finished", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if notionEmu.WaitWebhooksIdle(ctx) != nil {
			return false
		}
		var list v1alpha1.PaperSyncList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, ps := range list.Items {
			if ps.Status.CompletedAt == nil {
				return false
			}
		}
		return true
	})
}

// syncsOf lists the PaperSyncs of ns for one page.
func syncsOf(t *testing.T, ns, page string) []v1alpha1.PaperSync {
	t.Helper()
	var list v1alpha1.PaperSyncList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []v1alpha1.PaperSync
	for _, ps := range list.Items {
		if notionid.Normalize(ps.Spec.PageID) == notionid.Normalize(page) {
			out = append(out, ps)
		}
	}
	return out
}

// A database automation's "Send webhook" action, as Notion sends it, fills
// pages, and no answer of the route ever pauses it: not for a fresh page's
// empty Link, a link that is not arXiv, another database's page, a text
// Link, or an integration that is suspended or not Ready.
func TestTheAutomationsEnvelopeFillsPagesAndNeverPausesIt(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	db, url := ni.Status.DatabaseID, hookURL+ni.Status.WebhookPath
	auto := notionEmu.AddAutomation(sandbox.NotionAutomation{DatabaseID: db, URL: url, Trigger: "property_edited", Properties: []string{"Link"}})
	added := notionEmu.AddAutomation(sandbox.NotionAutomation{DatabaseID: db, URL: url, Trigger: "page_added", Properties: []string{"Link", "Title"}})
	otherDB := notionEmu.AddDatabase(f.ws.ID, f.page, "Reading", map[string]sandbox.NotionProperty{"Title": {Type: "title"}, "Link": {Type: "url"}})
	stray := notionEmu.AddAutomation(sandbox.NotionAutomation{DatabaseID: otherDB, URL: url, Trigger: "property_edited", Properties: []string{"Link"}})

	fresh := notionEmu.AddRow(db, nil) // page added: an empty Link
	edit1(t, fresh, "Title", "to read")
	edit1(t, fresh, "Link", "https://arxiv.org/abs/2301.12345v2")
	wrong := notionEmu.AddRow(db, nil)
	edit1(t, wrong, "Link", "https://example.com/paper.pdf")
	elsewhere := notionEmu.AddRow(otherDB, nil)
	edit1(t, elsewhere, "Link", "https://arxiv.org/abs/2301.12345")
	eventually(t, "the fresh page filled", func() bool { return notionEmu.Row(fresh)["Title"] == arxivTitle })
	f.waitEventNote(t, "research", "LinkNotArxiv", "example.com")

	// Suspended: the event waits as a PaperSync, and is synced on resume.
	edit(t, ni, func(n *v1alpha1.NotionIntegration) { n.Spec.Suspend = true })
	// The manager shows it saw the suspension (its syncs read the same
	// cache) before the event that must wait is sent.
	eventually(t, "Ready=False, Suspended", func() bool {
		n := f.integration(t)
		c := status.Get(n, v1alpha1.ReadyCondition)
		return n.Status.ObservedGeneration == n.Generation && c != nil && c.Reason == v1alpha1.SuspendedReason
	})
	later := notionEmu.AddRow(db, nil)
	edit1(t, later, "Link", "https://arxiv.org/abs/hep-th/9901001")
	eventually(t, "the event recorded while suspended", func() bool { return len(syncsOf(t, f.ns, later)) > 0 })
	if n := notionEmu.Updates(later); n != 0 {
		t.Fatalf("a suspended integration wrote its page %d times", n)
	}
	edit(t, f.integration(t), func(n *v1alpha1.NotionIntegration) { n.Spec.Suspend = false })
	eventually(t, "the page filled on resume", func() bool { return notionEmu.Row(later)["Publication Year"] == float64(1999) })

	idle(t, f.ns)
	for page, want := range map[string]int{fresh: 1, wrong: 0, elsewhere: 0, later: 1} {
		if n := notionEmu.Updates(page); n != want {
			t.Errorf("page %s written %d times, want %d", page, n, want)
		}
	}
	for _, id := range []string{auto, added, stray} {
		if notionEmu.AutomationPaused(id) {
			t.Errorf("automation %s was paused by an answer of ours", id)
		}
		for _, d := range notionEmu.AutomationDeliveries(id) {
			if d.Status < 200 || d.Status > 299 {
				t.Errorf("automation %s: delivery %s answered %d %s", id, d.EventID, d.Status, d.Body)
			}
		}
	}
	if len(notionEmu.AutomationDeliveries(stray)) == 0 || len(syncsOf(t, f.ns, elsewhere)) != 0 {
		t.Fatalf("another database's page: %d deliveries, %d PaperSyncs; want some and none", len(notionEmu.AutomationDeliveries(stray)), len(syncsOf(t, f.ns, elsewhere)))
	}
}

// A text Link (a rich_text property, where a person pastes a link) is read
// from the envelope as a URL property is.
func TestTheAutomationsTextLinkFillsThePage(t *testing.T) {
	f := newFixture(t, nil)
	f.ready(t)
	texts := notionEmu.AddDatabase(f.ws.ID, f.page, "Papers in text", map[string]sandbox.NotionProperty{
		"Title": {Type: "title"}, "Authors": {Type: "rich_text"}, "Summary": {Type: "rich_text"}, "Link": {Type: "rich_text"}, "Publication Year": {Type: "number"}})
	edit(t, f.integration(t), func(n *v1alpha1.NotionIntegration) { n.Spec.Database.ID = texts })
	eventually(t, "the text database taken", func() bool {
		n := f.integration(t)
		return notionid.Normalize(n.Status.DatabaseID) == texts && n.Status.ObservedGeneration == n.Generation
	})
	ni := f.ready(t)
	// The route checks the page's database against its cached integration.
	eventually(t, "the webhook sees the text database", func() bool {
		var seen v1alpha1.NotionIntegration
		return hookView.Get(context.Background(), f.key, &seen) == nil && notionid.Normalize(seen.Status.DatabaseID) == texts
	})
	auto := notionEmu.AddAutomation(sandbox.NotionAutomation{DatabaseID: texts, URL: hookURL + ni.Status.WebhookPath, Trigger: "property_edited", Properties: []string{"Link"}})
	page := notionEmu.AddRow(texts, nil)
	edit1(t, page, "Link", "https://arxiv.org/abs/2301.12345")
	eventually(t, "the page filled", func() bool { return notionEmu.Row(page)["Title"] == arxivTitle })
	idle(t, f.ns)
	if n := notionEmu.Updates(page); n != 1 || notionEmu.AutomationPaused(auto) {
		t.Fatalf("written %d times, paused %v; want once, never", n, notionEmu.AutomationPaused(auto))
	}
}

// An integration that is not Ready (its grant refused) still records the
// automation's event, which waits for it: 200, nothing for Notion to
// pause.
func TestAnIntegrationNotReadyQueuesTheEvent(t *testing.T) {
	f := newFixture(t, func(sandbox.NotionWorkspace) string { return "nrt_revoked_long_ago" })
	var ni *v1alpha1.NotionIntegration
	eventually(t, "the webhook path of an integration that is not Ready", func() bool {
		ni = f.integration(t)
		return ni.Status.WebhookPath != "" && post(t, ni.Status.WebhookPath, "{}").status == http.StatusBadRequest
	})
	db := notionEmu.AddDatabase(f.ws.ID, f.page, "ArXiv Papers", map[string]sandbox.NotionProperty{"Title": {Type: "title"}, "Link": {Type: "url"}})
	auto := notionEmu.AddAutomation(sandbox.NotionAutomation{DatabaseID: db, URL: hookURL + ni.Status.WebhookPath, Trigger: "property_edited", Properties: []string{"Link"}})
	page := notionEmu.AddRow(db, nil)
	edit1(t, page, "Link", "https://arxiv.org/abs/2301.12345")
	eventually(t, "the sync waiting", func() bool {
		syncs := syncsOf(t, f.ns, page)
		if len(syncs) != 1 {
			return false
		}
		c := syncs[0].Status.Conditions
		return len(c) > 0 && strings.Contains(c[0].Message+c[len(c)-1].Message, "not Ready")
	})
	if err := notionEmu.WaitWebhooksIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	ds := notionEmu.AutomationDeliveries(auto)
	if notionEmu.AutomationPaused(auto) || len(ds) != 1 || ds[0].Status != http.StatusOK {
		t.Fatalf("paused %v, deliveries %+v: want one answered 200, never paused", notionEmu.AutomationPaused(auto), ds)
	}
}

func edit1(t *testing.T, page, property string, value any) {
	t.Helper()
	if err := notionEmu.EditRow(page, map[string]any{property: value}); err != nil {
		t.Fatal(err)
	}
}

// flaky forwards to the webhook server and answers 500 to the first
// delivery of each event while it is on: Notion's retry of the same event
// then reaches the route.
type flaky struct {
	mu   sync.Mutex
	on   bool
	seen map[string]bool
	srv  *httptest.Server
}

func newFlaky(t *testing.T) *flaky {
	target, err := url.Parse(hookURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	fl := &flaky{seen: map[string]bool{}}
	fl.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(body, &ev)
		fl.mu.Lock()
		fail := fl.on && ev.ID != "" && !fl.seen[ev.ID]
		fl.seen[ev.ID] = true
		fl.mu.Unlock()
		if fail {
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(fl.srv.Close)
	return fl
}

func (fl *flaky) set(on bool) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.on = on
}

// Connection webhooks fill pages with no Automation at all: the
// verification handshake, signed events routed by workspace, retried and
// aggregated events filling each page once, the integration's own writes
// and other databases' pages ignored, forged events refused with nothing
// created.
func TestConnectionWebhooksFillPagesWithNoAutomation(t *testing.T) {
	notionEmu.AddClient("events-client", "events-secret")
	notionEmu.SetEventRetrySchedule(20 * time.Millisecond)
	notionEmu.SetEventAggregation(time.Second)
	f := newClientFixture(t, "events-client", "events-secret", nil)
	ni := f.ready(t)
	if ni.Status.EventsPath != papers.EventsPath("events-client", "events-secret") {
		t.Fatalf("events path %q", ni.Status.EventsPath)
	}
	// The webhook knows the path through its cache: an unsigned event is
	// then a 401, not a 404.
	eventually(t, "the events path served", func() bool { return post(t, ni.Status.EventsPath, `{"id":"x"}`).status == http.StatusUnauthorized })

	fl, sub := subscribeVerified(t, ni)
	db := ni.Status.DatabaseID

	// A fresh page, then its Link pasted; a link that is not arXiv; a page
	// of another database.
	fresh := notionEmu.AddRow(db, nil)
	edit1(t, fresh, "Link", "https://arxiv.org/abs/2301.12345")
	wrong := notionEmu.AddRow(db, map[string]any{"Link": "https://example.com/x"})
	otherDB := notionEmu.AddDatabase(f.ws.ID, f.page, "Elsewhere", map[string]sandbox.NotionProperty{"Title": {Type: "title"}, "Link": {Type: "url"}})
	elsewhere := notionEmu.AddRow(otherDB, map[string]any{"Link": "https://arxiv.org/abs/2301.12345"})
	eventually(t, "the fresh page filled", func() bool { return notionEmu.Row(fresh)["Title"] == arxivTitle })
	f.waitEventNote(t, "research", "LinkNotArxiv", "example.com")

	// Notion retries an event our side failed (the proxy's 500): the retry
	// is the same event, recorded once.
	fl.set(true)
	retried := notionEmu.AddRow(db, map[string]any{"Link": "https://arxiv.org/abs/hep-th/9901001"})
	eventually(t, "the retried page filled", func() bool { return notionEmu.Row(retried)["Publication Year"] == float64(1999) })
	fl.set(false)

	// A burst of edits: the first goes out at once, the rest of the
	// window's are one event.
	burst := notionEmu.AddRow(db, nil)
	edit1(t, burst, "Title", "draft")
	edit1(t, burst, "Link", "https://arxiv.org/pdf/2301.12345v1.pdf")
	edit1(t, burst, "Title", "draft, again")
	eventually(t, "the burst's page filled", func() bool { return notionEmu.Row(burst)["Title"] == arxivTitle })

	// Forged events: nothing created.
	forged := notionEmu.AddRow(otherDB, nil)
	refuseForged(t, ni, forged)

	idle(t, f.ns)
	for page, want := range map[string]int{fresh: 1, wrong: 0, elsewhere: 0, retried: 1, burst: 1, forged: 0} {
		if n := notionEmu.Updates(page); n != want {
			t.Errorf("page %s written %d times, want %d", page, n, want)
		}
	}
	if n := len(syncsOf(t, f.ns, forged)) + len(syncsOf(t, f.ns, elsewhere)); n != 0 {
		t.Errorf("%d PaperSyncs for forged events and another database's page", n)
	}
	checkDeliveries(t, notionEmu.SubscriptionDeliveries(sub), retried, burst)
}

// checkDeliveries: every event was finally answered 2xx; the retried
// page's event came again with its id (500, then accepted); the burst's
// three edits and the fill were fewer events than changes; the
// integration's own writes were delivered and ignored.
func checkDeliveries(t *testing.T, ds []sandbox.NotionDelivery, retried, burst string) {
	t.Helper()
	final := map[string]int{}
	burstEvents := map[string]bool{}
	var retries, own int
	for _, d := range ds {
		final[d.EventID] = d.Status
		if notionid.Normalize(d.EntityID) == notionid.Normalize(retried) && d.Attempt > 1 {
			retries++
		}
		if notionid.Normalize(d.EntityID) == notionid.Normalize(burst) && d.Type == "page.properties_updated" {
			burstEvents[d.EventID] = true
		}
		if strings.Contains(d.Body, "OwnWrite") {
			own++
		}
	}
	for id, status := range final {
		if status < 200 || status > 299 {
			t.Errorf("event %s was finally answered %d", id, status)
		}
	}
	if retries == 0 || len(burstEvents) > 3 || own == 0 {
		t.Errorf("%d retries of the retried page's event, %d update events for the burst's 4 changes, %d own writes ignored; want some, at most 3, some",
			retries, len(burstEvents), own)
	}
}

// subscribeVerified subscribes the events client's integration to ni's
// events path, through a flaky proxy, and verifies the subscription with
// the token the webhook kept, as a platform engineer would.
func subscribeVerified(t *testing.T, ni *v1alpha1.NotionIntegration) (*flaky, string) {
	t.Helper()
	fl := newFlaky(t)
	sub := notionEmu.Subscribe(sandbox.NotionSubscription{ClientID: "events-client", URL: fl.srv.URL + ni.Status.EventsPath})
	t.Cleanup(func() { notionEmu.Unsubscribe(sub) })
	// Notion records its request as answered once the answer is back: the
	// webhook kept the token before it answered.
	eventually(t, "Notion to see its verification request answered", func() bool { return notionEmu.SentVerificationToken(sub) != "" })
	var sec corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: papers.VerificationSecretName(ni.Status.EventsPath)}, &sec); err != nil {
		t.Fatal(err)
	}
	token := string(sec.Data[papers.VerificationTokenKey])
	if token != notionEmu.SentVerificationToken(sub) {
		t.Fatal("the kept token is not the one Notion sent")
	}
	if err := notionEmu.VerifySubscription(sub, token); err != nil {
		t.Fatal(err)
	}
	return fl, sub
}

// refuseForged posts a page.created event for page without a signature and
// with two wrong ones: each is refused with 401.
func refuseForged(t *testing.T, ni *v1alpha1.NotionIntegration, page string) {
	t.Helper()
	body := `{"id":"forged-1","type":"page.created","workspace_id":"` + ni.Status.WorkspaceID + `","entity":{"id":"` + page + `","type":"page"},"data":{"parent":{"id":"` + ni.Status.DatabaseID + `","type":"database"}}}`
	for _, sig := range []string{"", "sha256=00", "sha256=" + strings.Repeat("ab", 32)} {
		req, _ := http.NewRequest(http.MethodPost, hookURL+ni.Status.EventsPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if sig != "" {
			req.Header.Set("X-Notion-Signature", sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a forged event signed %q answered %d", sig, resp.StatusCode)
		}
	}
}
