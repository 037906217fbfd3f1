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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// Every answer the Notion routes give, on controller-runtime's fake
// client; test/notion drives the same routes from the sandbox's senders
// on a real API server.

const (
	rtWorkspace = "ws-1"
	rtDatabase  = "0c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
	rtPage      = "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
	rtBot       = "b0b0b0b0-0000-4000-8000-000000000001"
	rtToken     = "secret_verification"
)

type notionRoutes struct {
	h       http.Handler
	c       client.Client
	rec     *events.FakeRecorder
	hook    string // the Automation path
	events  string // the connection-webhook path
	failing bool   // creates fail as an API server that is down
}

func newNotionRoutes(t *testing.T, suspended bool, token string) *notionRoutes {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	ni := &v1alpha1.NotionIntegration{ObjectMeta: metav1.ObjectMeta{Name: "research", Namespace: "lab", UID: "ni-uid"}}
	ni.Spec.Suspend = suspended
	ni.Status.WebhookPath = papers.WebhookPath("hook-token", "lab", "research")
	ni.Status.EventsPath = papers.EventsPath("client", "client-secret")
	ni.Status.WorkspaceID, ni.Status.DatabaseID, ni.Status.BotID = rtWorkspace, strings.ReplaceAll(rtDatabase, "-", ""), rtBot
	objs := []client.Object{ni}
	if token != "" {
		objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "switchboard", Name: papers.VerificationSecretName(ni.Status.EventsPath)},
			Data: map[string][]byte{papers.VerificationTokenKey: []byte(token)}})
	}
	f := &notionRoutes{rec: events.NewFakeRecorder(10), hook: ni.Status.WebhookPath, events: ni.Status.EventsPath}
	f.c = fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&v1alpha1.NotionIntegration{}, index.RoutePaths, func(o client.Object) []string {
			return o.(*v1alpha1.NotionIntegration).GetRoutePaths()
		}).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			if f.failing {
				return errors.New("connection refused")
			}
			return c.Create(ctx, o, opts...)
		}}).Build()
	s, err := NewServer(Options{Log: logr.Discard()}, Deps{Client: f.c, APIReader: f.c, Log: logr.Discard(), StateNamespace: "switchboard", Recorder: f.rec}, familyNamed("notion"))
	if err != nil {
		t.Fatal(err)
	}
	f.h = s.Handler()
	return f
}

func (f *notionRoutes) post(path, body string, header ...string) (int, map[string]any) {
	req := httptest.NewRequest(http.MethodPost, "http://x"+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	req.RemoteAddr = "192.0.2.1:1234"
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

func (f *notionRoutes) syncs(t *testing.T) []v1alpha1.PaperSync {
	t.Helper()
	var list v1alpha1.PaperSyncList
	if err := f.c.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func envelope(props string) string {
	return `{"source":{"type":"automation","automation_id":"a","action_id":"b","event_id":"ev-1","attempt":1},` +
		`"data":{"object":"page","id":"` + rtPage + `","parent":{"type":"data_source_id","data_source_id":"ds","database_id":"` + rtDatabase + `"},` +
		`"properties":` + props + `}}`
}

// The Automation route answers every request it understood 2xx, so that
// Notion never pauses the person's automation, and refuses only what is
// not an Automation's request.
func TestTheAutomationRouteAnswersEveryEventItUnderstood2xx(t *testing.T) {
	link := func(v string) string { return `{"Link":{"id":"%3AUPp","type":"url","url":` + v + `}}` }
	for _, c := range []struct {
		name, path, body string
		suspended        bool
		failing          bool
		status           int
		answer           string // status, or the error code
		syncs            int
		warning          bool
	}{
		{name: "an arXiv link is queued", body: envelope(link(`"https://arxiv.org/abs/2301.12345"`)), status: 200, answer: "queued", syncs: 1},
		{name: "a text Link is queued", body: envelope(`{"Link":{"type":"rich_text","rich_text":[{"plain_text":"https://arxiv.org/abs/2301.12345"}]}}`), status: 200, answer: "queued", syncs: 1},
		{name: "the seed's body is queued", body: `{"workspace_id":"ws-1","page_id":"` + rtPage + `","link":"https://arxiv.org/abs/2301.12345"}`, status: 202, answer: "queued", syncs: 1},
		{name: "a suspended integration's event is queued, to wait", suspended: true, body: envelope(link(`"https://arxiv.org/abs/2301.12345"`)), status: 200, answer: "queued", syncs: 1},
		{name: "a Link that was not ticked is queued for a page read", body: envelope(`{}`), status: 200, answer: "queued", syncs: 1},
		{name: "an empty Link is ignored", body: envelope(link(`null`)), status: 200, answer: "ignored"},
		{name: "the seed's empty link is ignored", body: `{"workspace_id":"ws-1","page_id":"` + rtPage + `","link":""}`, status: 200, answer: "ignored"},
		{name: "a link that is not arXiv is ignored, with a Warning Event", body: envelope(link(`"https://example.com/paper"`)), status: 200, answer: "ignored", warning: true},
		{name: "a page of another database is ignored", body: strings.Replace(envelope(link(`"https://arxiv.org/abs/2301.12345"`)), rtDatabase, "9c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", 1), status: 200, answer: "ignored"},
		{name: "another workspace is ignored", body: `{"workspace_id":"ws-2","page_id":"` + rtPage + `","link":"https://arxiv.org/abs/2301.12345"}`, status: 200, answer: "ignored"},
		{name: "an API server that cannot store it is answered 200, for the backfill", failing: true, body: envelope(link(`"https://arxiv.org/abs/2301.12345"`)), status: 200, answer: "ignored"},
		{name: "an unknown path is 404", path: "/notion/webhook/00", body: envelope(link(`"https://arxiv.org/abs/2301.12345"`)), status: 404, answer: "NOT_FOUND"},
		{name: "a body that is not JSON is 400", body: `{"data":`, status: 400, answer: "INVALID_REQUEST"},
		{name: "a body naming no page is 400", body: `{"hello":"world"}`, status: 400, answer: "INVALID_REQUEST"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newNotionRoutes(t, c.suspended, "")
			f.failing = c.failing
			path := c.path
			if path == "" {
				path = f.hook
			}
			status, out := f.post(path, c.body)
			got, _ := out["status"].(string)
			if e, ok := out["error"].(map[string]any); ok {
				got, _ = e["code"].(string)
			}
			if status != c.status || got != c.answer || len(f.syncs(t)) != c.syncs {
				t.Fatalf("answered %d %v with %d PaperSyncs; want %d %s with %d", status, out, len(f.syncs(t)), c.status, c.answer, c.syncs)
			}
			if got := len(f.rec.Events); (got == 1) != c.warning {
				t.Fatalf("%d Events, want a LinkNotArxiv Warning only for a link that is not arXiv", got)
			}
			if c.warning {
				if e := <-f.rec.Events; !strings.Contains(e, "Warning LinkNotArxiv") {
					t.Fatalf("Event %q", e)
				}
			}
		})
	}
}

func sign(body, token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func event(typ, author, parent string) string {
	return `{"id":"e-1","timestamp":"2026-11-28T00:00:00.000Z","workspace_id":"ws-1","workspace_name":"Lab","subscription_id":"s","integration_id":"i",` +
		`"type":"` + typ + `","authors":[{"id":"` + author + `","type":"person"}],"attempt_number":1,"api_version":"2022-06-28",` +
		`"entity":{"id":"` + rtPage + `","type":"page"},"data":{"parent":{"id":"` + parent + `","type":"database"},"updated_properties":["%3AUPp"]}}`
}

// The connection-webhook route keeps the verification token, refuses
// every event whose signature does not verify against it, and records a
// signed page event for the integrations of its workspace.
func TestTheEventsRouteVerifiesEverySignature(t *testing.T) {
	good := event("page.properties_updated", "person-1", rtDatabase)
	own := strings.Replace(event("page.properties_updated", rtBot, rtDatabase), `"type":"person"`, `"type":"bot"`, 1)
	for _, c := range []struct {
		name, body, sig, token string
		failing                bool
		status                 int
		answer                 string
		syncs                  int
	}{
		{name: "a signed page event is queued", body: good, sig: sign(good, rtToken), token: rtToken, status: 200, answer: "queued", syncs: 1},
		{name: "an unsigned event is 401", body: good, token: rtToken, status: 401, answer: "UNAUTHORIZED"},
		{name: "a wrong signature is 401", body: good, sig: sign(good, "secret_other"), token: rtToken, status: 401, answer: "UNAUTHORIZED"},
		{name: "a signature of another body is 401", body: good, sig: sign(good+" ", rtToken), token: rtToken, status: 401, answer: "UNAUTHORIZED"},
		{name: "an event before any verification is 401", body: good, sig: sign(good, rtToken), status: 401, answer: "UNAUTHORIZED"},
		{name: "the integration's own write is ignored", body: own, sig: sign(own, rtToken), token: rtToken, status: 200, answer: "ignored"},
		{name: "a page of another database is ignored", body: event("page.created", "p", "9c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"),
			sig: sign(event("page.created", "p", "9c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"), rtToken), token: rtToken, status: 200, answer: "ignored"},
		{name: "a comment is ignored", body: event("comment.created", "p", rtDatabase), sig: sign(event("comment.created", "p", rtDatabase), rtToken), token: rtToken, status: 200, answer: "ignored"},
		{name: "another workspace is ignored", body: strings.Replace(good, "ws-1", "ws-9", 1), sig: sign(strings.Replace(good, "ws-1", "ws-9", 1), rtToken), token: rtToken, status: 200, answer: "ignored"},
		{name: "an API server that cannot store it is 503, for Notion to retry", failing: true, body: good, sig: sign(good, rtToken), token: rtToken, status: 503, answer: "SERVICE_UNAVAILABLE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newNotionRoutes(t, false, c.token)
			f.failing = c.failing
			status, out := f.post(f.events, c.body, signatureHeader, c.sig)
			got, _ := out["status"].(string)
			if e, ok := out["error"].(map[string]any); ok {
				got, _ = e["code"].(string)
			}
			if status != c.status || got != c.answer || len(f.syncs(t)) != c.syncs {
				t.Fatalf("answered %d %v with %d PaperSyncs; want %d %s with %d", status, out, len(f.syncs(t)), c.status, c.answer, c.syncs)
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The success page's next steps are Notion's real ones: nothing to set up
// once the public integration's connection webhook has its token; else
// the database automation's "Send webhook" in Notion's words, with no
// method or body to write.
func TestTheSuccessPageGivesStepsNotionsUIAllows(t *testing.T) {
	for _, token := range []string{"", rtToken} {
		f := newNotionRoutes(t, false, token)
		var ni v1alpha1.NotionIntegration
		if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "lab", Name: "research"}, &ni); err != nil {
			t.Fatal(err)
		}
		ni.Status.DatabaseURL = "https://www.notion.so/papers"
		page := httptest.NewRecorder()
		d := Deps{Client: f.c, APIReader: f.c, StateNamespace: "switchboard", PublicURL: "https://hooks.example"}
		if err := notionSuccess(page, httptest.NewRequest(http.MethodGet, "/oauth/notion/callback", nil), d, &oauth.Resource{Object: &ni}, map[string]string{"workspace_name": "Lab"}); err != nil {
			t.Fatal(err)
		}
		body := page.Body.String()
		switch {
		case strings.Contains(body, "Send HTTP request") || strings.Contains(body, "Method"):
			t.Fatalf("the page asks for what Notion's UI does not have:\n%s", body)
		case !strings.Contains(body, `href="https://www.notion.so/papers"`) || strings.Contains(body, "kubectl get notionintegration") && !strings.Contains(body, "<details>"):
			t.Fatalf("the database link is missing, or kubectl is shown to the researcher:\n%s", body)
		case token != "" && (!strings.Contains(body, "Nothing to set up") || strings.Contains(body, "Send webhook")):
			t.Fatalf("with the connection webhook verified:\n%s", body)
		case token == "" && (!strings.Contains(body, "Send webhook") || !strings.Contains(body, "https://hooks.example"+ni.Status.WebhookPath)):
			t.Fatalf("without the connection webhook:\n%s", body)
		}
	}
}

// A retried event is one PaperSync; the verification request's token is
// kept, in one Secret, and replaced by the next; an unknown path keeps
// nothing.
func TestTheEventsRouteKeepsOneTokenAndOneSyncPerEvent(t *testing.T) {
	good := event("page.properties_updated", "person-1", rtDatabase)
	t.Run("a retry of an event is the same PaperSync", func(t *testing.T) {
		f := newNotionRoutes(t, false, rtToken)
		retry := strings.Replace(good, `"attempt_number":1`, `"attempt_number":2`, 1)
		for _, b := range []string{good, retry} {
			if status, out := f.post(f.events, b, signatureHeader, sign(b, rtToken)); status != 200 {
				t.Fatalf("answered %d %v", status, out)
			}
		}
		if n := len(f.syncs(t)); n != 1 {
			t.Fatalf("%d PaperSyncs for one event and its retry", n)
		}
	})
	t.Run("the verification request's token is kept, and only there", func(t *testing.T) {
		f := newNotionRoutes(t, false, "")
		status, out := f.post(f.events, `{"verification_token":"secret_fresh"}`)
		if status != 200 || strings.Contains(mustJSON(out), "secret_fresh") {
			t.Fatalf("answered %d %v", status, out)
		}
		var sec corev1.Secret
		if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "switchboard", Name: papers.VerificationSecretName(f.events)}, &sec); err != nil ||
			string(sec.Data[papers.VerificationTokenKey]) != "secret_fresh" || sec.Labels[v1alpha1.ManagedByLabel] == "" {
			t.Fatalf("Secret %v (%v)", sec.ObjectMeta, err)
		}
		if status, _ := f.post(f.events, good, signatureHeader, sign(good, "secret_fresh")); status != 200 {
			t.Fatalf("an event signed with the kept token answered %d", status)
		}
		// A subscription made again sends a new token, which replaces it.
		if status, _ := f.post(f.events, `{"verification_token":"secret_newer"}`); status != 200 {
			t.Fatalf("a second verification answered %d", status)
		}
		if status, _ := f.post(f.events, good, signatureHeader, sign(good, "secret_fresh")); status != 401 {
			t.Fatalf("an event signed with the replaced token answered %d", status)
		}
	})
	t.Run("an unknown path is 404 and keeps nothing", func(t *testing.T) {
		f := newNotionRoutes(t, false, "")
		if status, _ := f.post("/notion/events/00", `{"verification_token":"secret_x"}`); status != 404 {
			t.Fatalf("answered %d", status)
		}
		var list corev1.SecretList
		if err := f.c.List(context.Background(), &list); err != nil || len(list.Items) != 0 {
			t.Fatalf("%d Secrets (%v)", len(list.Items), err)
		}
	})
}
