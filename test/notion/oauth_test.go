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
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

var browser = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type page struct {
	status   int
	location *url.URL
	body     string
	header   http.Header
}

func get(t *testing.T, u string) page {
	t.Helper()
	resp, err := browser.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	p := page{status: resp.StatusCode, body: string(b), header: resp.Header}
	if loc := resp.Header.Get("Location"); loc != "" {
		p.location, _ = url.Parse(loc)
	}
	return p
}

// noGrant is a fixture whose token Secret holds no refresh token: the
// integration waits for a person to connect it.
func noGrant(sandbox.NotionWorkspace) string { return "" }

// connectToken waits for the integration's connect token (this manager
// has no public URL, so the Secret holds no whole link), and returns it; after a successful connect it waits for a token other than
// previous (the controller mints a new one when the manager deleted the
// old). A token works the moment the Secret shows it: its hash is in
// status already (what the webhook checks), and the client id too.
func (f *fixture) connectToken(t *testing.T, previous string) string {
	t.Helper()
	token := testenv.ConnectToken(t, env.Client, f.key, previous)
	st := f.integration(t).Status
	if st.ConnectTokenHash != capability.Hash(token) || st.ClientID == "" {
		t.Fatalf("the Secret shows a token whose hash is not published yet (hash published %v, client id %q)", st.ConnectTokenHash != "", st.ClientID)
	}
	if st.ConnectSecretName != "research-oauth-connect" {
		t.Fatalf("status.connectSecretName %q", st.ConnectSecretName)
	}
	return token
}

func (f *fixture) connectURL(token string) string {
	return oauth.ConnectURL(hookURL, "notion", f.ns, "research", token)
}

// consent walks a browser through connect → the provider's consent page,
// and returns the callback URL the provider sends it back to.
func consent(t *testing.T, f *fixture, token string) *url.URL {
	t.Helper()
	start := get(t, f.connectURL(token))
	if start.status != http.StatusFound || start.location == nil {
		t.Fatalf("connect answered %d: %s", start.status, start.body)
	}
	q := start.location.Query()
	if !strings.HasSuffix(start.location.Path, "/v1/oauth/authorize") || q.Get("client_id") != "notion-client" ||
		q.Get("owner") != "user" || q.Get("response_type") != "code" || q.Get("redirect_uri") != hookURL+"/oauth/notion/callback" || len(q.Get("state")) < 40 {
		t.Fatalf("authorize URL %s", start.location)
	}
	back := get(t, start.location.String())
	if back.status != http.StatusFound || back.location == nil || back.location.Query().Get("state") != q.Get("state") {
		t.Fatalf("consent answered %d %v", back.status, back.location)
	}
	return back.location
}

func stateCount(t *testing.T) int {
	t.Helper()
	var list corev1.SecretList
	if err := env.Client.List(context.Background(), &list, client.InNamespace("default"), client.HasLabels{oauth.StateLabel}); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

func TestOAuthConnectWritesTheGrantAndShowsTheNextSteps(t *testing.T) {
	f := newFixture(t, noGrant)
	notionEmu.SetConsentWorkspace(f.ws)
	token := f.connectToken(t, "")
	cb := consent(t, f, token)
	done := get(t, cb.String())
	if done.status != http.StatusOK || !strings.Contains(done.body, "Connected to Notion") || !strings.Contains(done.body, "<b>"+f.ws.Name+"</b>") ||
		!strings.Contains(done.body, "Send webhook") || !strings.Contains(done.body, "Property edited") || strings.Contains(done.body, "Send HTTP request") {
		t.Fatalf("success page %d:\n%s", done.status, done.body)
	}
	// The page answers once the manager has saved the grant: the token
	// Secret holds it by then, with no wait.
	tok := f.secret(t, "notion-token")
	if !strings.HasPrefix(tok["refresh_token"], "nrt_") || tok["workspace_id"] != f.ws.ID {
		t.Fatalf("token Secret keys %d, workspace %q", len(tok), tok["workspace_id"])
	}
	// The page waits briefly for the database (webhook.DatabaseWait) and
	// shows its link; had the manager been slower, it says the database is
	// being created, with no kubectl for the researcher: the platform
	// team's line is folded away under its own heading. The webhook URL
	// only when the status holds its path.
	final := f.ready(t)
	if !strings.Contains(done.body, "<details><summary>For the platform team</summary>") ||
		!strings.Contains(done.body, "kubectl get notionintegration -n "+f.ns+" research") ||
		!strings.Contains(done.body, "is being created") && !strings.Contains(done.body, `href="`+final.Status.DatabaseURL+`"`) {
		t.Fatalf("success page does not point at the status:\n%s", done.body)
	}
	if strings.Contains(done.body, "/notion/webhook/") && !strings.Contains(done.body, hookURL+final.Status.WebhookPath) {
		t.Fatal("the page shows a webhook URL the status does not hold")
	}
	// The new grant reconciled the integration.
	if ni := final; ni.Status.WorkspaceID != f.ws.ID {
		t.Fatalf("workspace %q", ni.Status.WorkspaceID)
	}
	// The state was used: the same callback again is refused.
	if again := get(t, cb.String()); again.status != http.StatusForbidden {
		t.Fatalf("reused state answered %d", again.status)
	}
	// The link was used: a new token was minted and published, and the
	// used one is refused.
	f.connectToken(t, token)
	if p := get(t, f.connectURL(token)); p.status != http.StatusForbidden {
		t.Fatalf("the used connect link answered %d", p.status)
	}
	// What the webhook checks is published; no token is.
	if st := f.integration(t).Status; st.ClientID != "notion-client" || st.ConnectTokenHash == "" || strings.Contains(fmt.Sprint(st), token) {
		t.Fatalf("status client id %q, hash %q", st.ClientID, st.ConnectTokenHash)
	}
}

// Issue 7 §1.1–1.3: without the connect token, connect is the same 403 for
// an existing and a missing resource, and writes nothing.
func TestConnectWithoutTheTokenRefusesAlikeAndWritesNothing(t *testing.T) {
	f := newFixture(t, noGrant)
	token := f.connectToken(t, "")
	var before corev1.SecretList
	if err := env.Client.List(context.Background(), &before, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	states := stateCount(t)

	wrong := []byte(token)
	wrong[0] ^= 1
	urls := []string{
		hookURL + "/oauth/notion/connect?namespace=" + f.ns + "&name=research",                               // no token
		hookURL + "/oauth/notion/connect?namespace=" + f.ns + "&name=research&token=" + string(wrong),        // a wrong token
		hookURL + "/oauth/notion/connect?namespace=" + f.ns + "&name=research&token=",                        // an empty one
		hookURL + "/oauth/notion/connect?namespace=" + f.ns + "&name=nothing&token=" + token,                 // a resource that does not exist
		hookURL + "/oauth/notion/connect?namespace=no-such-namespace&name=research&token=" + token,           // nor its namespace
		hookURL + "/oauth/notion/connect?namespace=" + f.ns + "&name=nothing",                                // neither
		hookURL + "/oauth/notion/connect?namespace=" + f.ns + "&name=research&token=" + token[:len(token)-1], // a prefix
		hookURL + "/oauth/notion/connect", // no resource at all
		hookURL + "/oauth/notion/connect?namespace=" + f.ns + "&name=a%2F..%2Fresearch&token=" + token, // a name no object can have
		hookURL + "/oauth/notion/connect?namespace=Not_A_Namespace&name=research&token=" + token,       // nor namespace
	}
	const total = 1000
	bodies := make([]string, total)
	codes := make([]int, total)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				resp, err := browser.Get(urls[i%len(urls)])
				if err != nil {
					codes[i] = -1
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				codes[i], bodies[i] = resp.StatusCode, string(b)
			}
		}()
	}
	for i := range total {
		next <- i
	}
	close(next)
	wg.Wait()
	for i := range total {
		if codes[i] != http.StatusForbidden {
			t.Fatalf("request %d (%s) answered %d", i, strings.Replace(urls[i%len(urls)], token, "TOKEN", 1), codes[i])
		}
		if bodies[i] != bodies[0] {
			t.Fatalf("request %d's body differs from request 0's:\n%s\n---\n%s", i, bodies[i], bodies[0])
		}
	}

	var after corev1.SecretList
	if err := env.Client.List(context.Background(), &after, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	if len(after.Items) != len(before.Items) || stateCount(t) != states {
		t.Fatalf("%d refused requests left %d Secrets in the namespace (was %d) and %d states (was %d)",
			total, len(after.Items), len(before.Items), stateCount(t), states)
	}
	// The right token still works.
	if p := get(t, f.connectURL(token)); p.status != http.StatusFound {
		t.Fatalf("the real link answered %d", p.status)
	}
}

// A grant that works is replaced only when the resource asks, once per
// annotation value.
func TestAWorkingGrantIsReplacedOnlyWhenAsked(t *testing.T) {
	f := newFixture(t, nil)
	notionEmu.SetConsentWorkspace(f.ws)
	ni := f.ready(t)
	token := f.connectToken(t, "")
	states := stateCount(t)
	grant := f.secret(t, "notion-token")["refresh_token"]
	p := get(t, f.connectURL(token))
	if p.status != http.StatusConflict || !strings.Contains(p.body, "Already connected") || !strings.Contains(p.body, v1alpha1.ReconnectAnnotation) {
		t.Fatalf("connect to a working grant answered %d:\n%s", p.status, p.body)
	}
	if stateCount(t) != states {
		t.Fatal("a refused connect wrote a state")
	}

	edit(t, ni, func(n *v1alpha1.NotionIntegration) {
		n.Annotations = map[string]string{v1alpha1.ReconnectAnnotation: "1"}
	})
	cb := consent(t, f, token)
	if done := get(t, cb.String()); done.status != http.StatusOK {
		t.Fatalf("reconnect callback answered %d:\n%s", done.status, done.body)
	}
	var sec corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "notion-token"}, &sec); err != nil {
		t.Fatal(err)
	}
	if string(sec.Data["refresh_token"]) == grant || sec.Annotations[v1alpha1.ReconnectedForAnnotation] != "1" {
		t.Fatalf("the grant was not replaced, or not recorded (annotations %v)", sec.Annotations)
	}

	// The same annotation value does not open the grant twice.
	f.ready(t)
	token = f.connectToken(t, token)
	if p := get(t, f.connectURL(token)); p.status != http.StatusConflict {
		t.Fatalf("a second reconnect under the same value answered %d", p.status)
	}
	// A new value does.
	edit(t, f.integration(t), func(n *v1alpha1.NotionIntegration) {
		n.Annotations = map[string]string{v1alpha1.ReconnectAnnotation: "2"}
	})
	if p := get(t, f.connectURL(token)); p.status != http.StatusFound {
		t.Fatalf("reconnect under a new value answered %d", p.status)
	}
}

// The callback checks again: a grant that started working after the
// connect is not replaced.
func TestTheCallbackDoesNotReplaceAGrantThatStartedWorking(t *testing.T) {
	f := newFixture(t, noGrant)
	notionEmu.SetConsentWorkspace(f.ws)
	cb := consent(t, f, f.connectToken(t, ""))
	// Meanwhile someone puts a working grant in place.
	rt := notionEmu.IssueRefreshToken("notion-client", f.ws)
	var sec corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "notion-token"}, &sec); err != nil {
		t.Fatal(err)
	}
	sec.Data["refresh_token"] = []byte(rt)
	// The manager watches only the Secrets that carry its label (those it
	// wrote); a grant written by hand with the label reconciles at once,
	// as one the operator wrote does. (A requested-at annotation would
	// force a refresh, which rotates Notion's refresh token.)
	if sec.Labels == nil {
		sec.Labels = map[string]string{}
	}
	sec.Labels[v1alpha1.ManagedByLabel] = v1alpha1.ManagedByValue
	if err := env.Client.Update(context.Background(), &sec); err != nil {
		t.Fatal(err)
	}
	f.ready(t)
	kept := f.secret(t, "notion-token")["refresh_token"]
	if p := get(t, cb.String()); p.status != http.StatusConflict {
		t.Fatalf("callback answered %d:\n%s", p.status, p.body)
	}
	if f.secret(t, "notion-token")["refresh_token"] != kept {
		t.Fatal("the working grant was replaced")
	}
}

func TestAtMostThreeOutstandingStatesPerResource(t *testing.T) {
	f := newFixture(t, noGrant)
	notionEmu.SetConsentWorkspace(f.ws)
	token := f.connectToken(t, "")
	before := stateCount(t)
	var callbacks []*url.URL
	for range 5 {
		callbacks = append(callbacks, consent(t, f, token))
	}
	if n := stateCount(t) - before; n != oauth.MaxStatesPerResource {
		t.Fatalf("%d outstanding states for one resource, want %d", n, oauth.MaxStatesPerResource)
	}
	// The two oldest were dropped.
	for _, cb := range callbacks[:2] {
		if p := get(t, cb.String()); p.status != http.StatusForbidden {
			t.Fatalf("a dropped state answered %d", p.status)
		}
	}
	if p := get(t, callbacks[4].String()); p.status != http.StatusOK {
		t.Fatalf("the newest state answered %d", p.status)
	}
	// A successful callback drops the resource's other states.
	if p := get(t, callbacks[3].String()); p.status != http.StatusForbidden {
		t.Fatalf("a state of the used link answered %d", p.status)
	}
	if n := stateCount(t) - before; n != 0 {
		t.Fatalf("%d states left after the callback", n)
	}
}

// Seed 000 §3.1.2's error rows.
func TestOAuthCallbackRefusals(t *testing.T) {
	f := newFixture(t, nil)
	notionEmu.SetConsentWorkspace(f.ws)
	f.ready(t)
	// A working grant: connect needs the reconnect annotation. No subtest
	// completes a callback, so one value serves them all.
	edit(t, f.integration(t), func(n *v1alpha1.NotionIntegration) {
		n.Annotations = map[string]string{v1alpha1.ReconnectAnnotation: "refusals"}
	})
	token := f.connectToken(t, "")
	t.Run("an unknown state is 403", func(t *testing.T) {
		if p := get(t, hookURL+"/oauth/notion/callback?code=x&state=forged"); p.status != http.StatusForbidden || !strings.Contains(p.body, "not valid") {
			t.Fatalf("got %d", p.status)
		}
	})
	t.Run("no state is 403", func(t *testing.T) {
		if p := get(t, hookURL+"/oauth/notion/callback?code=x"); p.status != http.StatusForbidden {
			t.Fatalf("got %d", p.status)
		}
	})
	t.Run("a state for another target is 403", func(t *testing.T) {
		cb := consent(t, f, token)
		if p := get(t, hookURL+"/oauth/google/callback?"+cb.Query().Encode()); p.status != http.StatusForbidden {
			t.Fatalf("got %d", p.status)
		}
	})
	t.Run("an expired state is 403", func(t *testing.T) {
		cb := consent(t, f, token)
		var list corev1.SecretList
		if err := env.Client.List(context.Background(), &list, client.InNamespace("default"), client.HasLabels{oauth.StateLabel}); err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			s := &list.Items[i]
			s.Data["expires"] = []byte(time.Now().Add(-time.Minute).UTC().Format(time.RFC3339))
			if err := env.Client.Update(context.Background(), s); err != nil {
				t.Fatal(err)
			}
		}
		if p := get(t, cb.String()); p.status != http.StatusForbidden {
			t.Fatalf("got %d", p.status)
		}
	})
	t.Run("a code the provider refuses is 401", func(t *testing.T) {
		cb := consent(t, f, token)
		q := cb.Query()
		q.Set("code", "not-a-code")
		if p := get(t, hookURL+"/oauth/notion/callback?"+q.Encode()); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "refused") {
			t.Fatalf("got %d", p.status)
		}
	})
	t.Run("a person who does not allow access gets 403", func(t *testing.T) {
		notionEmu.SetConsentWorkspace(sandbox.NotionWorkspace{})
		defer notionEmu.SetConsentWorkspace(f.ws)
		cb := consent(t, f, token)
		if cb.Query().Get("error") != "access_denied" {
			t.Fatalf("callback %s", cb)
		}
		if p := get(t, cb.String()); p.status != http.StatusForbidden {
			t.Fatalf("got %d", p.status)
		}
	})
	t.Run("an unknown target is 404", func(t *testing.T) {
		if p := get(t, hookURL+"/oauth/nothing/connect?namespace="+f.ns+"&name=research&token="+token); p.status != http.StatusNotFound {
			t.Fatalf("got %d", p.status)
		}
	})
	// No refusal touched the grant.
	if f.secret(t, "notion-token")["refresh_token"] == "" {
		t.Fatal("a refused callback broke the grant")
	}
	if ni := f.ready(t); !status.IsTrue(ni, v1alpha1.AuthenticatedCondition) {
		t.Fatal("a refused callback broke the grant")
	}
}
