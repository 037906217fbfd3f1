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
	"net/http"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// pendingSignUps is the webhook's bound on the browsers with a sign-up in
// progress, per sign-up, in this suite.
const pendingSignUps = 3

// openSignUp opens a NotionSignup in a fresh namespace, as a platform
// team does (the public integration's client Secret and the sign-up),
// and returns it once its start URL is published and in its status.
func openSignUp(t *testing.T, maxIntegrations int32, closed bool) *v1alpha1.NotionSignup {
	t.Helper()
	ctx := context.Background()
	ns, err := env.Namespace("signup")
	if err != nil {
		t.Fatal(err)
	}
	su, err := testenv.NotionSignup(ctx, env.Client, ns, notionClientID, notionClientSecret, func(su *v1alpha1.NotionSignup) {
		su.Spec.MaxIntegrations, su.Spec.Closed = maxIntegrations, closed
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the sign-up Ready with its start URL", func() bool {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(su), su)
		return err == nil && su.Status.URL != "" && su.Status.ObservedGeneration == su.Generation && status.IsTrue(su, v1alpha1.ReadyCondition)
	})
	if want := hookURL + "/signup/notion/" + ns + "/lab"; su.Status.URL != want {
		t.Fatalf("status.url %q, want %q", su.Status.URL, want)
	}
	webhookSeesSignUp(t, su, closed)
	return su
}

// webhookSeesSignUp waits until the webhook's cache holds su published,
// closed or not: its start URL reads that cache, which follows the API
// server a moment later.
func webhookSeesSignUp(t *testing.T, su *v1alpha1.NotionSignup, closed bool) {
	t.Helper()
	testenv.Eventually(t, fmt.Sprintf("the webhook sees the sign-up published (closed %v)", closed), func() bool {
		p, found, err := oauth.ReadSignUp(context.Background(), hookView, opns, "notion", su.Namespace, su.Name)
		return err == nil && found && p.Closed == closed
	})
}

// madeBy lists the integrations su made.
func madeBy(t *testing.T, su *v1alpha1.NotionSignup) []v1alpha1.NotionIntegration {
	t.Helper()
	var list v1alpha1.NotionIntegrationList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(su.Namespace), client.MatchingLabels{v1alpha1.SignUpLabel: su.Name}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// newWorkspace is a Notion workspace with one page to share.
func newWorkspace() sandbox.NotionWorkspace {
	wsCount++
	ws := sandbox.NotionWorkspace{ID: fmt.Sprintf("7%07d-1111-4222-8333-444455556666", wsCount), Name: fmt.Sprintf("Signed-up Lab %d", wsCount),
		BotID: fmt.Sprintf("7%07d-0000-4000-8000-000000000001", wsCount)}
	notionEm.AddPage(ws.ID, "Reading list")
	return ws
}

// signUpThrough walks b from su's start URL through Notion's consent page
// ("Allow access") to the page the callback answers with.
func signUpThrough(t *testing.T, b *tab, su *v1alpha1.NotionSignup, ws sandbox.NotionWorkspace) {
	t.Helper()
	notionEm.SetConsentWorkspace(ws)
	b.open(su.Status.URL, consentHeading)
	b.click(allowButton, ourPage)
}

// A stranger with a Notion account signs up through the public URL alone:
// Notion's consent page, then the success page with the database's link,
// and a Ready integration. Signing up again reconnects the same one. A
// second workspace past maxIntegrations gets the full page and nothing
// is made; once the sign-up is closed its URL says so, and the
// integration made keeps working.
func TestNotionSignUpInABrowser(t *testing.T) {
	ctx := context.Background()
	su := openSignUp(t, 1, false)
	ws := newWorkspace()
	b, pr := newTab(t), newProbe(t)

	notionEm.SetConsentWorkspace(ws)
	b.open(su.Status.URL, consentHeading)
	consentPage(t, b, "/notion/v1/oauth/authorize")
	b.screenshot("signup-consent")
	b.click(allowButton, ourPage)
	done := b.shown()
	done.webhookPage(t, 200, "Connected to Notion", "Workspace: "+ws.Name)
	b.screenshot("signup-connected")
	made := madeBy(t, su)
	if len(made) != 1 {
		t.Fatalf("%d integrations made", len(made))
	}
	var ni v1alpha1.NotionIntegration
	key := types.NamespacedName{Namespace: su.Namespace, Name: made[0].Name}
	testenv.Eventually(t, "the signed-up integration Ready", func() bool {
		return env.Client.Get(ctx, key, &ni) == nil && status.IsTrue(&ni, v1alpha1.ReadyCondition) && ni.Status.DatabaseURL != ""
	})
	if !strings.Contains(done.html, ni.Status.DatabaseURL) || !strings.Contains(done.text, "Open ArXiv Papers in Notion") {
		t.Errorf("the success page does not link the database %s:\n%s", ni.Status.DatabaseURL, done.text)
	}
	grant := secretData(t, types.NamespacedName{Namespace: su.Namespace, Name: ni.Spec.OAuth.TokenSecretRef.Name})
	done.noSecret(t, map[string]string{"access token": grant["access_token"], "refresh token": grant["refresh_token"],
		"client secret": notionClientSecret, "authorization code": queryOf(t, done.url, "code")})
	if ref := pr.refererFrom(b); ref != "" {
		t.Errorf("the success page let the Referer %s out", redact(ref))
	}

	// The same workspace again, from the same browser: the same
	// integration.
	signUpThrough(t, b, su, ws)
	b.shown().webhookPage(t, 200, "Connected to Notion", "Workspace: "+ws.Name)
	if n := len(madeBy(t, su)); n != 1 {
		t.Fatalf("signing up again made %d integrations", n)
	}

	// Another workspace, past the bound.
	signUpThrough(t, b, su, newWorkspace())
	full := b.shown()
	full.webhookPage(t, 403, "Sign-up is full", "none was made for your workspace")
	b.screenshot("signup-full")
	if n := len(madeBy(t, su)); n != 1 {
		t.Fatalf("past the bound %d integrations", n)
	}

	// Closed: the start URL says so; the integration keeps working.
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(su), su); err != nil {
		t.Fatal(err)
	}
	su.Spec.Closed = true
	if err := env.Client.Update(ctx, su); err != nil {
		t.Fatal(err)
	}
	webhookSeesSignUp(t, su, true)
	b.open(su.Status.URL, ourPage)
	b.shown().webhookPage(t, 403, "Sign-up is closed", "Integrations made before keep working")
	b.screenshot("signup-closed")
	if err := env.Client.Get(ctx, key, &ni); err != nil || !status.IsTrue(&ni, v1alpha1.ReadyCondition) {
		t.Fatalf("the integration after the sign-up closed: %v, Ready %v", err, status.Get(&ni, v1alpha1.ReadyCondition))
	}
	b.noRefererFromWebhook()
}

// signUpPages are the sign-up's pages for TestEveryPageReadsWell…: the
// success page, the full and closed refusals, a start URL that names no
// sign-up, and the wait when too many sign-ups are in progress (the
// page counts down and tries again).
func signUpPages() []personPage {
	return []personPage{
		{name: "signup-connected", status: 200, say: map[string]string{"en": "Connected to Notion", "ja": "連携が完了しました"},
			reach: func(t *testing.T, b *tab) { signUpThrough(t, b, openSignUp(t, 5, false), newWorkspace()) }},
		{name: "signup-full", status: 403, say: map[string]string{"en": "Sign-up is full", "ja": "登録数が上限に達しました"},
			reach: func(t *testing.T, b *tab) {
				su := openSignUp(t, 1, false)
				signUpThrough(t, b, su, newWorkspace())
				signUpThrough(t, b, su, newWorkspace())
			}},
		{name: "signup-closed", status: 403, say: map[string]string{"en": "Sign-up is closed", "ja": "登録の受付は終了しました"},
			reach: func(t *testing.T, b *tab) { b.open(openSignUp(t, 5, true).Status.URL, ourPage) }},
		{name: "signup-not-found", status: 404, say: map[string]string{"en": "There is no sign-up here", "ja": "この登録ページはありません"},
			url: func() string { return hookURL + "/signup/notion/default/nobody" }},
		{name: "signup-busy", status: 429, say: map[string]string{"en": "Many people are signing up right now.", "ja": "現在、多くの方が登録中です。"},
			reach: func(t *testing.T, b *tab) {
				su := openSignUp(t, 5, false)
				// Other browsers hold every slot.
				for range pendingSignUps {
					resp, err := noRedirect.Get(su.Status.URL)
					if err != nil {
						t.Fatal(err)
					}
					_ = resp.Body.Close()
					if resp.StatusCode != http.StatusFound {
						t.Fatalf("another browser's start answered %d", resp.StatusCode)
					}
				}
				b.open(su.Status.URL, ourPage)
				if !strings.Contains(b.shown().text, "tries again by itself") && !strings.Contains(b.shown().text, "自動でもう一度試します") {
					t.Errorf("the wait page does not say it tries again by itself:\n%s", b.shown().text)
				}
			}},
	}
}

// noRedirect is another browser, which stops at the consent page's
// redirect.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
