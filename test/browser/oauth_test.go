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

package browser_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// Headings (and titles) of the pages docs/notionintegration.md and
// internal/webhook document.
const (
	consentHeading   = chromedp.Search(`//h1`)
	allowButton      = chromedp.CSS("#allow")
	denyButton       = chromedp.CSS("#deny")
	usedLinkTitle    = "This connect link is not valid"
	notGrantedTitle  = "Access was not granted"
	genericConnected = "Connected"
)

var wsCount int

// notionIntegration creates a NotionIntegration waiting for a person to
// connect it, in a fresh namespace, and the workspace the sandbox's
// consent page grants.
func notionIntegration(t *testing.T) (types.NamespacedName, sandbox.NotionWorkspace) {
	t.Helper()
	ns, err := env.Namespace("browser")
	if err != nil {
		t.Fatal(err)
	}
	wsCount++
	ws := sandbox.NotionWorkspace{ID: fmt.Sprintf("%08d-1111-4222-8333-444455556666", wsCount), Name: fmt.Sprintf("Browser Lab %d", wsCount),
		BotID: fmt.Sprintf("%08d-0000-4000-8000-000000000001", wsCount)}
	notionEm.AddPage(ws.ID, "Reading list")
	if err := testenv.NotionIntegration(context.Background(), env.Client, ns, notionClientID, notionClientSecret, ""); err != nil {
		t.Fatal(err)
	}
	return types.NamespacedName{Namespace: ns, Name: "research"}, ws
}

func secretData(t *testing.T, key types.NamespacedName) map[string]string {
	t.Helper()
	var s corev1.Secret
	if err := env.Client.Get(context.Background(), key, &s); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out
}

// consentPage checks the provider's asking page the connect link led to:
// on the sandbox, reached with no Referer (the connect link was typed,
// and its 302 carries no-referrer), and it returns the code-less state
// the page will send back.
func consentPage(t *testing.T, b *tab, authorizePath string) {
	t.Helper()
	p := b.shown()
	if !strings.HasPrefix(p.url, sandboxURL+authorizePath+"?") || p.status != 200 {
		t.Fatalf("the connect link led to %s (%d), not the consent page", redact(p.url), p.status)
	}
	for _, r := range b.sentTo(sandboxURL + authorizePath) {
		if ref := b.refererOf(r); ref != "" {
			t.Errorf("the consent page was asked for with a Referer from %s", redact(ref))
		}
	}
}

// A person opens a NotionIntegration's connect link, clicks "Allow access"
// on Notion's consent page and lands on the success page; the grant is in
// the token Secret. The same link opened again is the used-link page.
// No page shows a secret, none lets a Referer out, and every answer of
// the webhook says no-referrer.
func TestNotionConnectInABrowser(t *testing.T) {
	key, ws := notionIntegration(t)
	notionEm.SetConsentWorkspace(ws)
	token := testenv.ConnectToken(t, env.Client, key, "")
	link := oauth.ConnectURL(hookURL, "notion", key.Namespace, key.Name, token)
	b, pr := newTab(t), newProbe(t)

	b.open(link, consentHeading)
	consentPage(t, b, "/notion/v1/oauth/authorize")
	b.screenshot("notion-consent")
	// The consent page is the provider's: it lets its origin out, as the
	// browser's default policy does — which shows the probe sees a Referer
	// when a page sends one.
	if ref := pr.refererFrom(b); ref != sandboxURL+"/" {
		t.Fatalf("from the consent page the probe got the Referer %q, want the sandbox's origin", ref)
	}

	b.click(allowButton, `//h1[contains(., "Connected to Notion")]`)
	done := b.shown()
	done.webhookPage(t, 200, "Connected to Notion", "Workspace: "+ws.Name)
	b.screenshot("notion-connected")
	// The researcher reads the next steps; kubectl is folded away for the
	// platform team.
	if !strings.Contains(done.text, "Send webhook") || strings.Contains(done.text, "kubectl") ||
		!strings.Contains(done.html, "kubectl get notionintegration -n "+key.Namespace+" research") {
		t.Errorf("the success page does not show the next steps, or shows kubectl to the researcher:\n%s", done.text)
	}
	// The page is the callback's own answer, at its URL (the docs describe
	// no redirect): the code in it is spent, and no Referer lets it out.
	if !strings.HasPrefix(done.url, hookURL+"/oauth/notion/callback?") {
		t.Errorf("the success page is at %s", redact(done.url))
	}
	grant := secretData(t, types.NamespacedName{Namespace: key.Namespace, Name: "notion-token"})
	if !strings.HasPrefix(grant["refresh_token"], "nrt_") || grant["workspace_id"] != ws.ID {
		t.Fatalf("the token Secret holds %d keys, workspace %q: no grant", len(grant), grant["workspace_id"])
	}
	code := queryOf(t, done.url, "code")
	done.noSecret(t, map[string]string{"connect token": token, "authorization code": code,
		"access token": grant["access_token"], "refresh token": grant["refresh_token"], "client secret": notionClientSecret})
	if ref := pr.refererFrom(b); ref != "" {
		t.Errorf("the success page let the Referer %s out", redact(ref))
	}

	// The link worked once: the manager mints the next token, and the old
	// link is the documented 403.
	testenv.ConnectToken(t, env.Client, key, token)
	b.open(link, chromedp.Search(`//h1[contains(., "`+usedLinkTitle+`")]`))
	used := b.shown()
	used.webhookPage(t, 403, usedLinkTitle, "")
	used.noSecret(t, map[string]string{"refresh token": grant["refresh_token"], "access token": grant["access_token"], "client secret": notionClientSecret})
	b.screenshot("notion-used-link")
	if ref := pr.refererFrom(b); ref != "" {
		t.Errorf("the used-link page let the Referer %s out", redact(ref))
	}
	b.noRefererFromWebhook()
}

// A person clicks "Cancel" on Notion's consent page: the callback shows
// the documented 403 page, and no grant is stored.
func TestNotionConsentDeniedInABrowser(t *testing.T) {
	key, ws := notionIntegration(t)
	notionEm.SetConsentWorkspace(ws)
	token := testenv.ConnectToken(t, env.Client, key, "")
	b, pr := newTab(t), newProbe(t)

	b.open(oauth.ConnectURL(hookURL, "notion", key.Namespace, key.Name, token), consentHeading)
	consentPage(t, b, "/notion/v1/oauth/authorize")
	b.click(denyButton, chromedp.Search(`//h1[contains(., "`+notGrantedTitle+`")]`))
	denied := b.shown()
	denied.webhookPage(t, 403, notGrantedTitle, "")
	b.screenshot("notion-denied")
	if !strings.Contains(denied.text, "access_denied") || queryOf(t, denied.url, "error") != "access_denied" {
		t.Errorf("the page does not say what the provider answered:\n%s", denied.text)
	}
	denied.noSecret(t, map[string]string{"connect token": token, "client secret": notionClientSecret})
	if ref := pr.refererFrom(b); ref != "" {
		t.Errorf("the refusal page let the Referer %s out", redact(ref))
	}
	b.noRefererFromWebhook()
	if rt := secretData(t, types.NamespacedName{Namespace: key.Namespace, Name: "notion-token"})["refresh_token"]; rt != "" {
		t.Error("a denied consent stored a grant")
	}
	var ni v1alpha1.NotionIntegration
	if err := env.Client.Get(context.Background(), key, &ni); err != nil || ni.Status.ConnectTokenHash != capability.Hash(token) {
		t.Errorf("a denied consent used up the connect link (%v)", err)
	}
}

// A CalendarWatch's connect walk through Google's consent page ("Allow"),
// to the generic success page; the grant is in its token Secret.
func TestGoogleConnectInABrowser(t *testing.T) {
	ns, err := env.Namespace("browser")
	if err != nil {
		t.Fatal(err)
	}
	cal := ns + "@example.com"
	calEm.AddCalendar(cal)
	if err := testenv.CalendarWatch(context.Background(), env.Client, ns, cal, "", func(w *v1alpha1.CalendarWatch) {
		w.Spec.OAuth.TokenSecretRef.Name = "fresh-token"
	}); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "visits"}
	token := testenv.ConnectToken(t, env.Client, key, "")
	b, pr := newTab(t), newProbe(t)

	b.open(oauth.ConnectURL(hookURL, "calendar", ns, "visits", token), consentHeading)
	consentPage(t, b, "/googleaccounts/o/oauth2/v2/auth")
	b.screenshot("google-consent")
	b.click(allowButton, chromedp.Search(`//h1[contains(., "`+genericConnected+`")]`))
	done := b.shown()
	done.webhookPage(t, 200, genericConnected, "")
	b.screenshot("google-connected")
	if strings.Contains(done.text, "kubectl") || !strings.Contains(done.html, "kubectl get calendarwatch -n "+ns+" visits") {
		t.Errorf("the success page does not fold how to follow the watch under the platform team's heading:\n%s", done.text)
	}
	grant := secretData(t, types.NamespacedName{Namespace: ns, Name: "fresh-token"})
	if grant["refresh_token"] == "" {
		t.Fatalf("the token Secret holds %d keys and no refresh token", len(grant))
	}
	done.noSecret(t, map[string]string{"connect token": token, "authorization code": queryOf(t, done.url, "code"),
		"refresh token": grant["refresh_token"], "client secret": googleClientSecret})
	if ref := pr.refererFrom(b); ref != "" {
		t.Errorf("the success page let the Referer %s out", redact(ref))
	}
	b.noRefererFromWebhook()
}

// queryOf is the query parameter name of the URL u, which must be set.
func queryOf(t *testing.T, u, name string) string {
	t.Helper()
	x, err := url.Parse(u)
	if err != nil || x.Query().Get(name) == "" {
		t.Fatalf("%s has no %s", redact(u), name)
	}
	return x.Query().Get(name)
}
