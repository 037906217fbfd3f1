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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// fixture is one namespace with a connected workspace.
type fixture struct {
	ns   string
	ws   sandbox.NotionWorkspace
	key  types.NamespacedName
	page string // a page shared with the integration
}

var wsCount int

func newFixture(t *testing.T, refreshToken func(sandbox.NotionWorkspace) string) *fixture {
	t.Helper()
	return newClientFixture(t, "notion-client", "notion-secret", refreshToken)
}

// newClientFixture connects a workspace through the public integration
// whose OAuth client is clientID (registered with the sandbox's Notion).
func newClientFixture(t *testing.T, clientID, clientSecret string, refreshToken func(sandbox.NotionWorkspace) string) *fixture {
	t.Helper()
	ctx := context.Background()
	ns, err := env.Namespace("notion")
	if err != nil {
		t.Fatal(err)
	}
	wsCount++
	ws := sandbox.NotionWorkspace{ID: fmt.Sprintf("0000000%d-1111-4222-8333-444455556666", wsCount%10), Name: fmt.Sprintf("Lab %d", wsCount),
		BotID: fmt.Sprintf("b0b0b0b%d-0000-4000-8000-000000000001", wsCount%10)}
	ws.ID = fmt.Sprintf("%08d-1111-4222-8333-444455556666", wsCount)
	f := &fixture{ns: ns, ws: ws, key: types.NamespacedName{Namespace: ns, Name: "research"}}
	f.page = notionEmu.AddPage(ws.ID, "Reading list")
	rt := notionEmu.IssueRefreshToken(clientID, ws)
	if refreshToken != nil {
		rt = refreshToken(ws)
	}
	if err := testenv.NotionIntegration(ctx, env.Client, ns, clientID, clientSecret, rt); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) integration(t *testing.T) *v1alpha1.NotionIntegration {
	t.Helper()
	ni := &v1alpha1.NotionIntegration{}
	if err := env.Client.Get(context.Background(), f.key, ni); err != nil {
		t.Fatal(err)
	}
	return ni
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, what, cond)
}

func (f *fixture) ready(t *testing.T) *v1alpha1.NotionIntegration {
	t.Helper()
	var ni *v1alpha1.NotionIntegration
	eventually(t, "the integration Ready", func() bool {
		ni = f.integration(t)
		return ni.Status.ObservedGeneration == ni.Generation && status.IsTrue(ni, v1alpha1.ReadyCondition)
	})
	// The webhook finds integrations through its informer cache, a moment
	// behind the API server: wait until its path is known there (an empty
	// body is then a 400, not a 404).
	eventually(t, "the webhook path served", func() bool {
		return post(t, ni.Status.WebhookPath, "{}").status == http.StatusBadRequest
	})
	return ni
}

// edit changes an integration with a merge patch, which the controller's
// concurrent status writes cannot make conflict.
func edit(t *testing.T, ni *v1alpha1.NotionIntegration, change func(*v1alpha1.NotionIntegration)) {
	t.Helper()
	before := ni.DeepCopy()
	change(ni)
	if err := env.Client.Patch(context.Background(), ni, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) secret(t *testing.T, name string) map[string]string {
	t.Helper()
	var s corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out
}

type answer struct {
	status int
	body   map[string]any
}

func post(t *testing.T, path string, body any) answer {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	default:
		b, _ = json.Marshal(v)
	}
	resp, err := http.Post(hookURL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, body: map[string]any{}}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func errorCode(a answer) string {
	e, _ := a.body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func (f *fixture) syncOf(t *testing.T, name string) *v1alpha1.PaperSync {
	t.Helper()
	ps := &v1alpha1.PaperSync{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: name}, ps); err != nil {
		t.Fatal(err)
	}
	return ps
}

func (f *fixture) waitSync(t *testing.T, name string, phase v1alpha1.SyncPhase) *v1alpha1.PaperSync {
	t.Helper()
	var ps *v1alpha1.PaperSync
	eventually(t, "PaperSync "+name+" "+string(phase), func() bool {
		ps = f.syncOf(t, name)
		return ps.Status.Phase == phase
	})
	return ps
}

func (f *fixture) waitEvent(t *testing.T, name, reason string) {
	t.Helper()
	f.waitEventNote(t, name, reason, "")
}

// waitEventNote waits for an Event about name with reason whose note
// contains note.
func (f *fixture) waitEventNote(t *testing.T, name, reason, note string) {
	t.Helper()
	eventually(t, "Event "+reason+" "+note, func() bool {
		var list eventsv1.EventList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Items {
			if e.Regarding.Name == name && e.Reason == reason && strings.Contains(e.Note, note) {
				return true
			}
		}
		return false
	})
}

func TestConnectFindsOrCreatesTheDatabaseAndRotatesTheToken(t *testing.T) {
	f := newFixture(t, nil)
	first := f.secret(t, "notion-token")["refresh_token"]
	ni := f.ready(t)
	st := ni.Status
	if st.WorkspaceID != f.ws.ID || st.WorkspaceName != f.ws.Name || st.BotID != f.ws.BotID {
		t.Fatalf("identity %+v", st)
	}
	dbs := notionEmu.Databases(f.ws.ID, "ArXiv Papers")
	if len(dbs) != 1 || st.DatabaseID != dbs[0] || !strings.HasPrefix(st.DatabaseURL, "https://www.notion.so/") {
		t.Fatalf("database %s %s, sandbox has %v", st.DatabaseID, st.DatabaseURL, dbs)
	}
	if !status.IsTrue(ni, v1alpha1.AuthenticatedCondition) || !status.IsTrue(ni, v1alpha1.DatabaseReadyCondition) {
		t.Fatalf("conditions %+v", st.Conditions)
	}
	if !strings.HasPrefix(st.WebhookPath, "/notion/webhook/") || strings.Contains(st.WebhookPath, "hook-token") {
		t.Fatalf("webhook path %q", st.WebhookPath)
	}
	// The Secret held only a refresh token: the first reconcile refreshed,
	// and the pair was rotated in the Secret.
	tok := f.secret(t, "notion-token")
	if tok["refresh_token"] == first || tok["access_token"] == "" || tok["expiry"] == "" {
		t.Fatalf("token Secret not rotated: %v keys", len(tok))
	}
	if d := time.Until(st.TokenExpiresAt.Time); d < 6*24*time.Hour || d > 7*24*time.Hour+time.Minute {
		t.Fatalf("token expires in %s, want about 7 days", d)
	}

	// The requested-at annotation forces a refresh (the manual refresh endpoint, §3.7.5).
	edit(t, ni, func(n *v1alpha1.NotionIntegration) {
		n.Annotations = map[string]string{v1alpha1.RequestedAtAnnotation: "refresh-now"}
	})
	if st.TokenRefreshes != 1 || st.LastTokenRefreshAt == nil {
		t.Fatalf("refreshes %d", st.TokenRefreshes)
	}
	eventually(t, "a forced refresh", func() bool {
		n := f.integration(t)
		return n.Status.LastHandledRequestedAt == "refresh-now" && n.Status.TokenRefreshes == 2
	})
	if f.secret(t, "notion-token")["refresh_token"] == tok["refresh_token"] {
		t.Fatal("forced refresh did not rotate the pair")
	}
}

func TestAutomationWebhookFillsThePage(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	page := notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": "https://arxiv.org/abs/2301.12345v2"})
	box.ResetCalls()
	a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": page, "link": "https://arxiv.org/abs/2301.12345v2"})
	if a.status != http.StatusAccepted || a.body["paper_sync"] == nil || a.body["arxiv_id"] != "2301.12345" {
		t.Fatalf("answer %d %v", a.status, a.body)
	}
	name := a.body["paper_sync"].(string)
	ps := f.waitSync(t, name, v1alpha1.SyncSucceeded)
	row := notionEmu.Row(page)
	if row["Title"] != "A Study of Examples in Practice" || row["Authors"] != "Ada Lovelace, Alan Turing" ||
		row["Summary"] != "We study examples. They are wrapped over lines as arXiv wraps them." || row["Publication Year"] != float64(2023) {
		t.Fatalf("page %v", row)
	}
	if ps.Status.Title != "A Study of Examples in Practice" || ps.Status.PublicationYear != 2023 || !status.IsTrue(ps, v1alpha1.ReadyCondition) {
		t.Fatalf("sync status %+v", ps.Status)
	}
	// Success writes no Event (one status write per sync): failures do.
	// The same event again is the same PaperSync: accepted, nothing fetched.
	again := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": strings.ReplaceAll(page, "-", ""), "link": "http://arxiv.org/pdf/2301.12345.pdf"})
	if again.status != http.StatusAccepted || again.body["paper_sync"] != name {
		t.Fatalf("repeat %d %v", again.status, again.body)
	}
	// A different event afterwards is synced: once it is, the repeat has
	// had its chance to cause a fetch, and must not have.
	other := notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": "https://arxiv.org/abs/hep-th/9901001"})
	next := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": other, "link": "https://arxiv.org/abs/hep-th/9901001"})
	f.waitSync(t, next.body["paper_sync"].(string), v1alpha1.SyncSucceeded)
	if n := box.Calls(sandbox.ArxivQuery); n != 2 {
		t.Fatalf("arXiv called %d times, want 2 (the repeat fetched nothing)", n)
	}
	eventually(t, "the counter", func() bool { return f.integration(t).Status.PapersSynced == 2 })
}

// Seed 000 §3.3.1 and §6.3, as Notion allows: a request that is not an
// Automation's is refused with the seed's error rows; one the route
// understood but cannot act on is answered 200 "ignored" with the reason
// (a failed delivery would pause the person's automation), and neither
// records anything.
func TestWebhookRefusesBadEventsAndIgnoresWhatItCannotActOn(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	good := map[string]string{"workspace_id": f.ws.ID, "page_id": "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "link": "https://arxiv.org/abs/2301.12345"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range good {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for _, tc := range []struct {
		name   string
		path   string
		body   any
		status int
		code   string // the error code, or the reason of an ignored event
	}{
		{"an unknown path is 404", "/notion/webhook/0000", good, 404, "NOT_FOUND"},
		{"a body that is not JSON is 400", ni.Status.WebhookPath, "{page_id:", 400, "INVALID_REQUEST"},
		{"a page id that is not one is 400", ni.Status.WebhookPath, with("page_id", "my-page"), 400, "INVALID_REQUEST"},
		{"another workspace on this path is ignored", ni.Status.WebhookPath, with("workspace_id", "someone-else"), 200, "OtherWorkspace"},
		{"an empty link is ignored", ni.Status.WebhookPath, with("link", ""), 200, "LinkEmpty"},
		{"a link that is not arXiv is ignored", ni.Status.WebhookPath, with("link", "https://example.org/abs/2301.12345"), 200, "NotArxiv"},
		{"an arXiv link without an id is ignored", ni.Status.WebhookPath, with("link", "https://arxiv.org/list/cs.LG/recent"), 200, "NotArxiv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := post(t, tc.path, tc.body)
			code := errorCode(a)
			if tc.status == 200 {
				code, _ = a.body["reason"].(string)
			}
			if a.status != tc.status || code != tc.code {
				t.Fatalf("got %d %v, want %d %s", a.status, a.body, tc.status, tc.code)
			}
		})
	}
	var list v1alpha1.PaperSyncList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil || len(list.Items) != 0 {
		t.Fatalf("refused and ignored events left %d PaperSyncs (%v)", len(list.Items), err)
	}
	f.waitEventNote(t, "research", "LinkNotArxiv", "example.org")
}

// Seed 000 §3.5.3: arXiv's error rows.
func TestArxivFailures(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	post1 := func(link string) string {
		page := notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": link})
		a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": page, "link": link})
		if a.status != http.StatusAccepted {
			t.Fatalf("answer %d %v", a.status, a.body)
		}
		return a.body["paper_sync"].(string)
	}
	t.Run("an unknown paper fails with an Event", func(t *testing.T) {
		name := post1("https://arxiv.org/abs/2312.99999")
		ps := f.waitSync(t, name, v1alpha1.SyncFailed)
		if !strings.Contains(ps.Status.LastError, "no paper 2312.99999") {
			t.Fatalf("lastError %q", ps.Status.LastError)
		}
		f.waitEvent(t, name, "PaperNotFound")
	})
	t.Run("503 is retried three times", func(t *testing.T) {
		box.ResetCalls()
		box.SetFault(sandbox.ArxivQuery, sandbox.Fault{Status: 503, Times: 3, ContentType: "text/plain", Body: "Service Unavailable"})
		defer box.ClearFaults()
		name := post1("https://arxiv.org/abs/hep-th/9901001")
		ps := f.waitSync(t, name, v1alpha1.SyncSucceeded)
		if n := box.Calls(sandbox.ArxivQuery); n != 4 || ps.Status.Attempts != 4 {
			t.Fatalf("arXiv calls %d, attempts %d; want 4 and 4", n, ps.Status.Attempts)
		}
		if ps.Status.PublicationYear != 1999 {
			t.Fatalf("year %d", ps.Status.PublicationYear)
		}
	})
	t.Run("a timeout is retried", func(t *testing.T) {
		box.ResetCalls()
		box.SetFault(sandbox.ArxivQuery, sandbox.Fault{Delay: sandbox.Duration(3 * time.Second), Times: 1})
		defer box.ClearFaults()
		name := post1("https://arxiv.org/abs/2301.12345")
		f.waitSync(t, name, v1alpha1.SyncSucceeded)
		if n := box.Calls(sandbox.ArxivQuery); n != 2 {
			t.Fatalf("arXiv calls %d, want 2", n)
		}
	})
	t.Run("503 beyond the retries fails the sync, and a recheck fills the page once arXiv is back", func(t *testing.T) {
		box.SetFault(sandbox.ArxivQuery, sandbox.Fault{Status: 503})
		defer box.ClearFaults()
		name := post1("https://arxiv.org/abs/2301.12345")
		ps := f.waitSync(t, name, v1alpha1.SyncFailed)
		c := status.Get(ps, v1alpha1.StalledCondition)
		if c == nil || c.Reason != v1alpha1.RetriesExhaustedReason {
			t.Fatalf("stalled %+v; want RetriesExhausted", c)
		}
		// The dead-letter Event counts the attempts: one try, three
		// retries (rechecks, a moment later, send no more Events).
		f.waitEventNote(t, name, "ArxivFailed", "gave up after 4 attempts")
		box.ClearFaults()
		f.waitSync(t, name, v1alpha1.SyncSucceeded)
	})
}

func TestPendingSyncsShareOneArxivRequest(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	box.ResetCalls()
	// The first request is slow, so the next events arrive while it runs.
	box.SetFault(sandbox.ArxivQuery, sandbox.Fault{Delay: sandbox.Duration(700 * time.Millisecond), Times: 1})
	defer box.ClearFaults()
	var names []string
	for _, link := range []string{"https://arxiv.org/abs/2301.12345", "https://arxiv.org/abs/hep-th/9901001", "https://arxiv.org/abs/2312.99999"} {
		page := notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": link})
		a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": page, "link": link})
		names = append(names, a.body["paper_sync"].(string))
	}
	eventually(t, "all three finished", func() bool {
		for _, n := range names {
			if f.syncOf(t, n).Status.CompletedAt == nil {
				return false
			}
		}
		return true
	})
	// Unbatched, three syncs would be three requests; depending on when the
	// controller wakes, the first goes alone or all three go together.
	if n := box.Calls(sandbox.ArxivQuery); n < 1 || n > 2 {
		t.Fatalf("arXiv called %d times for three syncs, want one or two", n)
	}
}

func TestBackfillHealsALostWebhook(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	lost := notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": "https://arxiv.org/abs/2301.12345"})
	edit(t, ni, func(n *v1alpha1.NotionIntegration) {
		n.Annotations = map[string]string{v1alpha1.RequestedAtAnnotation: "backfill"}
	})
	eventually(t, "the lost page filled", func() bool {
		return notionEmu.Row(lost)["Title"] == "A Study of Examples in Practice"
	})
}

func TestAGrantTheProviderRefusesNeedsReauth(t *testing.T) {
	f := newFixture(t, func(sandbox.NotionWorkspace) string { return "nrt_revoked_long_ago" })
	eventually(t, "Stalled with ReauthRequired", func() bool {
		ni := f.integration(t)
		c := status.Get(ni, v1alpha1.AuthenticatedCondition)
		return status.IsTrue(ni, v1alpha1.StalledCondition) && c != nil && c.Reason == v1alpha1.ReauthRequiredReason
	})
	if f.secret(t, "notion-token")["refresh_token"] != "nrt_revoked_long_ago" {
		t.Fatal("the token Secret was changed (seed 000 §3.7.6: keep it)")
	}
}

func TestFinishedSyncsAreDeletedAfterTheRetention(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	edit(t, ni, func(n *v1alpha1.NotionIntegration) { n.Spec.SyncRetention = metav1.Duration{Duration: time.Second} })
	ni = f.ready(t)
	page := notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": "https://arxiv.org/abs/2301.12345"})
	a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": page, "link": "https://arxiv.org/abs/2301.12345"})
	name := a.body["paper_sync"].(string)
	f.waitSync(t, name, v1alpha1.SyncSucceeded)
	eventually(t, "the sync deleted", func() bool {
		err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: name}, &v1alpha1.PaperSync{})
		return client.IgnoreNotFound(err) == nil && err != nil
	})
}

func TestTokensAppearNowhereButTheSecret(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	page := notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": "https://arxiv.org/abs/2301.12345"})
	a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": page, "link": "https://arxiv.org/abs/2301.12345"})
	f.waitSync(t, a.body["paper_sync"].(string), v1alpha1.SyncSucceeded)
	tok := f.secret(t, "notion-token")
	secrets := []string{tok["access_token"], tok["refresh_token"], "notion-secret", "hook-token-" + f.ns}
	var dump []byte
	for _, list := range []client.ObjectList{&v1alpha1.NotionIntegrationList{}, &v1alpha1.PaperSyncList{}, &eventsv1.EventList{}, &corev1.EventList{}} {
		if err := env.Client.List(context.Background(), list, client.InNamespace(f.ns)); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(list)
		dump = append(dump, b...)
	}
	for _, s := range secrets {
		if s == "" || bytes.Contains(dump, []byte(s)) {
			t.Fatalf("a credential (%d characters) appears in a status, spec or Event", len(s))
		}
	}
}

// Seed 000 §3.3.1 "Notion API error" and §7.2 "Notion 429": after the 202,
// they are the PaperSync's outcome.
func TestNotionPageUpdateFailures(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	t.Run("a page that does not exist fails the sync", func(t *testing.T) {
		a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": "0c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "link": "https://arxiv.org/abs/2301.12345"})
		name := a.body["paper_sync"].(string)
		ps := f.waitSync(t, name, v1alpha1.SyncFailed)
		if !strings.Contains(ps.Status.LastError, "object_not_found") {
			t.Fatalf("lastError %q", ps.Status.LastError)
		}
		f.waitEvent(t, name, "PageUpdateFailed")
	})
	t.Run("429 from Notion waits its Retry-After and retries", func(t *testing.T) {
		box.SetFault(sandbox.NotionPageUpdate, sandbox.Fault{Status: 429, RetryAfter: "2", Times: 1,
			Body: `{"object":"error","status":429,"code":"rate_limited","message":"You have been rate limited. Please try again in a few minutes."}`})
		defer box.ClearFaults()
		page := notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": "https://arxiv.org/abs/2301.12345"})
		began := time.Now()
		a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": page, "link": "https://arxiv.org/abs/2301.12345"})
		ps := f.waitSync(t, a.body["paper_sync"].(string), v1alpha1.SyncSucceeded)
		// The 10 ms schedule would retry at once: only the Retry-After
		// (2 s, honoured by a requeue, not a sleep) explains the wait.
		if waited := time.Since(began); waited < 2*time.Second || ps.Status.Attempts != 2 {
			t.Fatalf("succeeded after %v and %d attempts; want at least the 2s Retry-After and 2 attempts", waited, ps.Status.Attempts)
		}
	})
	t.Run("an arXiv answer that is not a feed fails the sync", func(t *testing.T) {
		box.SetFault(sandbox.ArxivQuery, sandbox.Fault{Malformed: true, Times: 1})
		defer box.ClearFaults()
		page := notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": "https://arxiv.org/abs/2301.12345"})
		a := post(t, ni.Status.WebhookPath, map[string]string{"workspace_id": f.ws.ID, "page_id": page, "link": "https://arxiv.org/abs/2301.12345"})
		ps := f.waitSync(t, a.body["paper_sync"].(string), v1alpha1.SyncFailed)
		if !strings.Contains(ps.Status.LastError, "not an Atom feed") {
			t.Fatalf("lastError %q", ps.Status.LastError)
		}
	})
}

// Issue 7: suspend stops the integration and its syncs (no token, arXiv or
// Notion call), and resuming wakes the waiting syncs through the
// integration's watch (their own safety recheck is 10 minutes away).
func TestSuspendStopsTheIntegrationAndItsSyncs(t *testing.T) {
	f := newFixture(t, nil)
	ni := f.ready(t)
	edit(t, ni, func(n *v1alpha1.NotionIntegration) { n.Spec.Suspend = true })
	eventually(t, "Ready=False, Suspended", func() bool {
		n := f.integration(t)
		c := status.Get(n, v1alpha1.ReadyCondition)
		return n.Status.ObservedGeneration == n.Generation && c != nil && c.Status == metav1.ConditionFalse && c.Reason == v1alpha1.SuspendedReason
	})
	box.ResetCalls()
	link := "https://arxiv.org/abs/2301.12345"
	ni = f.integration(t)
	ps := papers.NewSync(ni, notionEmu.AddRow(ni.Status.DatabaseID, map[string]any{"Link": link}), link, "2301.12345")
	if err := env.Client.Create(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
	// A forced refresh while suspended: handled (a positive signal that
	// the controller looked), yet no token call.
	edit(t, ni, func(n *v1alpha1.NotionIntegration) {
		n.Annotations = map[string]string{v1alpha1.RequestedAtAnnotation: "while-suspended"}
	})
	eventually(t, "the request handled", func() bool { return f.integration(t).Status.LastHandledRequestedAt == "while-suspended" })
	eventually(t, "the sync waiting for its integration", func() bool {
		c := status.Get(f.syncOf(t, ps.Name), v1alpha1.ReadyCondition)
		return c != nil && c.Reason == v1alpha1.DependencyNotReadyReason && strings.Contains(c.Message, "suspended")
	})
	if n, a, p := box.Calls(sandbox.NotionOAuthToken), box.Calls(sandbox.ArxivQuery), box.Calls(sandbox.NotionPageUpdate); n+a+p != 0 {
		t.Fatalf("while suspended: %d token, %d arXiv and %d page calls", n, a, p)
	}
	edit(t, f.integration(t), func(n *v1alpha1.NotionIntegration) { n.Spec.Suspend = false })
	f.waitSync(t, ps.Name, v1alpha1.SyncSucceeded)
}
