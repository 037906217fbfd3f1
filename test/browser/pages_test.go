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
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/audits"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// A person's page, reached by its URL alone: what it must say in each
// language.
type personPage struct {
	name   string
	url    func() string
	status int64
	say    map[string]string // language → a text the page must show
	// reach, when set, walks the tab to the page instead of opening url
	// (a consent page to click through first).
	reach func(t *testing.T, b *tab)
}

// ourPage is what every page of the webhook ends with (and no provider's
// page has): the status line, in any language.
var ourPage = chromedp.Search(`//main/p[@class="status"]`)

// notionConsent walks to the page Notion's consent answer lands on:
// click is allowButton (the success page) or denyButton (the refusal).
func notionConsent(click chromedp.CSS) func(t *testing.T, b *tab) {
	return func(t *testing.T, b *tab) {
		key, ws := notionIntegration(t)
		notionEm.SetConsentWorkspace(ws)
		token := testenv.ConnectToken(t, env.Client, key, "")
		b.open(oauth.ConnectURL(hookURL, "notion", key.Namespace, key.Name, token), consentHeading)
		b.click(click, ourPage)
	}
}

// notionAlreadyConnected opens the next connect link of an integration
// whose grant works: the 409 page, which replaces nothing.
func notionAlreadyConnected(t *testing.T, b *tab) {
	key, ws := notionIntegration(t)
	notionEm.SetConsentWorkspace(ws)
	token := testenv.ConnectToken(t, env.Client, key, "")
	b.open(oauth.ConnectURL(hookURL, "notion", key.Namespace, key.Name, token), consentHeading)
	b.click(allowButton, ourPage)
	next := testenv.ConnectToken(t, env.Client, key, token)
	testenv.Eventually(t, "the grant published as working", func() bool {
		var ni v1alpha1.NotionIntegration
		return env.Client.Get(context.Background(), key, &ni) == nil && ni.Status.ConnectTokenHash == capability.Hash(next) &&
			status.IsTrue(&ni, v1alpha1.AuthenticatedCondition)
	})
	b.open(oauth.ConnectURL(hookURL, "notion", key.Namespace, key.Name, next), ourPage)
}

// notionCodeRefused comes back from Notion's consent page with a code
// Notion never issued (a tampered callback URL, with the flow's real
// state): the manager's exchange is refused, and so is the page.
func notionCodeRefused(t *testing.T, b *tab) {
	key, ws := notionIntegration(t)
	notionEm.SetConsentWorkspace(ws)
	token := testenv.ConnectToken(t, env.Client, key, "")
	b.open(oauth.ConnectURL(hookURL, "notion", key.Namespace, key.Name, token), consentHeading)
	state := queryOf(t, b.shown().url, "state")
	b.open(hookURL+"/oauth/notion/callback?"+url.Values{"state": {state}, "code": {"not-a-code-notion-issued"}}.Encode(), ourPage)
}

// notionAlmostDone connects through the replica that answers a callback
// before the manager has received the grant: the page says it is on its
// way (the grant is saved all the same).
func notionAlmostDone(t *testing.T, b *tab) {
	key, ws := notionIntegration(t)
	notionEm.SetConsentWorkspace(ws)
	token := testenv.ConnectToken(t, env.Client, key, "")
	b.open(oauth.ConnectURL(impatientURL, "notion", key.Namespace, key.Name, token), consentHeading)
	b.click(allowButton, ourPage)
	testenv.Eventually(t, "the grant saved after the page", func() bool {
		return secretData(t, types.NamespacedName{Namespace: key.Namespace, Name: "notion-token"})["refresh_token"] != ""
	})
}

// linkSignInsBusy opens a share link while as many other browsers as a
// link allows are signing in to it: the wait, counted down.
func linkSignInsBusy(t *testing.T, b *tab) {
	_, shareURL, _ := sharedLink(t, "busy", nil)
	started := 0
	testenv.EventuallyWithin(t, time.Minute, "other browsers signing in to the link", func() bool {
		resp, err := noRedirect.Get(shareURL) // another browser each time: no cookie
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusFound {
			started++
		}
		return started == oauth.MaxBrowsersPerResource
	})
	b.open(shareURL, ourPage)
}

// The viewports every page is read at: a small phone, and a laptop.
var viewports = []struct {
	name          string
	width, height int64
}{{"phone-360x740", 360, 740}, {"desktop-1280x800", 1280, 800}}

// Every page a stranger's browser can reach without a flow behind it — a
// connect link that is not valid, a place nothing connects, a forged
// callback, a share link that does not exist or has expired, a forged
// Discord sign-in — and the pages after a provider's consent page
// (Notion's success and refusal, the generic success of a Google kind,
// Discord's refusal), read in Japanese and English on a phone and a laptop:
// the language served is the one asked for and set in lang, the key text
// is there, nothing scrolls sideways, the browser reports no CSP
// violation, axe-core finds no serious or critical violation, and each is
// saved as a screenshot.
func TestEveryPageReadsWellOnAPhoneInBothLanguages(t *testing.T) {
	axe, err := testenv.Axe()
	if err != nil {
		t.Fatal(err)
	}
	expired := expiredLinkURL(t)
	all := []personPage{
		{"connect-invalid", func() string { return hookURL + "/oauth/notion/connect?namespace=default&name=nobody&token=guess" }, 403,
			map[string]string{"en": "This connect link is not valid", "ja": "この接続リンクは使えません"}, nil},
		{"connect-unknown", func() string { return hookURL + "/oauth/nothing/connect" }, 404,
			map[string]string{"en": "Nothing connects under", "ja": "には接続先がありません"}, nil},
		{"callback-forged", func() string { return hookURL + "/oauth/notion/callback?state=forged&code=x" }, 403,
			map[string]string{"en": "This sign-in link is not valid", "ja": "このサインインリンクは使えません"}, nil},
		{"signin-forged", func() string { return hookURL + "/auth/discord/callback?state=forged&code=x" }, 403,
			map[string]string{"en": "Open your link again.", "ja": "リンクをもう一度開いてください。"}, nil},
		{"link-not-found", func() string { return hookURL + "/r/Zz9Yy8Xx7W" }, 404,
			map[string]string{"en": "This link does not exist", "ja": "このリンクは存在しません"}, nil},
		{"link-expired", expired, 410,
			map[string]string{"en": "This link has expired", "ja": "このリンクは有効期限が切れています"}, nil},
		{name: "notion-connected", status: 200, reach: notionConsent(allowButton),
			say: map[string]string{"en": "How to use it", "ja": "使い方"}},
		{name: "notion-denied", status: 403, reach: notionConsent(denyButton),
			say: map[string]string{"en": "Access was not granted", "ja": "アクセスが許可されませんでした"}},
		{name: "google-connected", status: 200, reach: googleConsent,
			say: map[string]string{"en": "Your access is saved", "ja": "アクセス権を保存しました"}},
		{name: "discord-denied", status: 403, reach: discordDenied,
			say: map[string]string{"en": "Discord answered: access_denied.", "ja": "Discord の応答: access_denied"}},
	}
	all = append(all,
		personPage{name: "notion-already-connected", status: 409, reach: notionAlreadyConnected,
			say: map[string]string{"en": "Already connected", "ja": "すでに接続されています"}},
		personPage{name: "notion-code-refused", status: 401, reach: notionCodeRefused,
			say: map[string]string{"en": "The sign-in code was refused", "ja": "サインインのコードが受け付けられませんでした"}},
		personPage{name: "notion-almost-done", status: 202, reach: notionAlmostDone,
			say: map[string]string{"en": "Your access was handed over and is saved in a moment.", "ja": "アクセス権を引き渡しました。まもなく保存されます。"}},
		personPage{name: "link-sign-ins-busy", status: 429, reach: linkSignInsBusy,
			say: map[string]string{"en": "Too many sign-ins for this link are in progress in other browsers.", "ja": "このリンクへのサインインがほかのブラウザーで多数進行中です。"}})
	all = append(all, signUpPages()...)
	// Last: each leaves a Discord session in the tab.
	all = append(all,
		personPage{name: "discord-signed-in", status: 200, reach: discordSignedInWithoutClaim,
			say: map[string]string{"en": "You are signed in with Discord as", "ja": "としてサインインしました"}},
		personPage{name: "link-other-user", status: 403, reach: discordOtherUser,
			say: map[string]string{"en": "This link is for someone else", "ja": "このリンクは別の方宛てです"}})
	for _, lang := range []string{"ja", "en"} {
		for _, vp := range viewports {
			t.Run(lang+"-"+vp.name, func(t *testing.T) {
				b := newTab(t)
				r := newPageReader(t, b, lang, vp.width, vp.height, axe)
				for _, p := range all {
					r.read(p)
				}
			})
		}
	}
}

// expiredLinkURL shares a link that expires in a few seconds and returns a
// function that waits until the link is Expired and gives its URL.
func expiredLinkURL(t *testing.T) func() string {
	expires := metav1.NewTime(time.Now().Add(5 * time.Second).Truncate(time.Second))
	l, shareURL, _ := sharedLink(t, "too late", func(l *v1alpha1.ReceiveLink) {
		l.Spec.TTL, l.Spec.ExpiresAt = nil, &expires
	})
	var once sync.Once
	return func() string {
		once.Do(func() {
			testenv.EventuallyWithin(t, 2*time.Minute, "the link Expired", func() bool {
				var now v1alpha1.ReceiveLink
				return env.Client.Get(context.Background(), client.ObjectKeyFromObject(l), &now) == nil && now.Status.Phase == v1alpha1.LinkExpired
			})
		})
		return shareURL
	}
}

// googleConsent walks a CalendarWatch's connect link through Google's
// consent page ("Allow") to the generic success page.
func googleConsent(t *testing.T, b *tab) {
	ns, err := env.Namespace("pages")
	if err != nil {
		t.Fatal(err)
	}
	calEm.AddCalendar(ns + "@example.com")
	if err := testenv.CalendarWatch(context.Background(), env.Client, ns, ns+"@example.com", "", nil); err != nil {
		t.Fatal(err)
	}
	token := testenv.ConnectToken(t, env.Client, types.NamespacedName{Namespace: ns, Name: "visits"}, "")
	b.open(oauth.ConnectURL(hookURL, "calendar", ns, "visits", token), consentHeading)
	b.click(allowButton, ourPage)
}

// discordDenied opens a share link for a Discord user and denies Discord's
// consent page: the sign-in's refusal page.
func discordDenied(t *testing.T, b *tab) {
	toDiscordConsent(t, b, alice)
	b.click(denyButton, ourPage)
}

// toDiscordConsent opens a new share link for alice and waits for
// Discord's consent page, which signs in user. A session an earlier page
// left in the tab is dropped first.
func toDiscordConsent(t *testing.T, b *tab, user sandbox.DiscordUser) {
	if _, err := chromedp.Call(b.ctx, network.DeleteCookies, network.DeleteCookiesParams{Name: webhook.SessionCookie, URL: hookURL + "/"}); err != nil {
		t.Fatal(err)
	}
	discordEm.SetConsentUser(user)
	_, shareURL, _ := sharedLink(t, "for alice", nil)
	testenv.EventuallyWithin(t, time.Minute, "the share link leads to Discord's consent page", func() bool {
		b.do("open the share link", chromedp.Navigate(shareURL))
		loc, err := chromedp.Run(b.ctx, chromedp.Location())
		return err == nil && strings.HasPrefix(loc, sandboxURL+"/discord/oauth2/authorize?")
	})
}

// discordSignedInWithoutClaim signs in at Discord after the browser lost
// the cookie that remembers the link (seed 003: the callback copes): the
// signed-in page, which asks the person to open their link again.
func discordSignedInWithoutClaim(t *testing.T, b *tab) {
	toDiscordConsent(t, b, alice)
	if _, err := chromedp.Call(b.ctx, network.DeleteCookies, network.DeleteCookiesParams{Name: "sb_claim", URL: hookURL + "/auth/discord/callback"}); err != nil {
		t.Fatal(err)
	}
	b.click(allowButton, ourPage)
}

// discordOtherUser signs in as bob to a link shared with alice: the
// other-user refusal.
func discordOtherUser(t *testing.T, b *tab) {
	toDiscordConsent(t, b, sandbox.DiscordUser{ID: "876543210987654321", Username: "bob"})
	b.click(allowButton, ourPage)
}

// pageReader reads pages in one tab at one viewport and language, and
// gathers the CSP violations the browser reports.
type pageReader struct {
	t    *testing.T
	b    *tab
	lang string
	axe  string

	mu  sync.Mutex
	csp []string
}

func newPageReader(t *testing.T, b *tab, lang string, width, height int64, axe string) *pageReader {
	r := &pageReader{t: t, b: b, lang: lang, axe: axe}
	if err := chromedp.Listen(b.ctx, func(ev any) {
		if e, ok := ev.(*audits.EventIssueAdded); ok && e.Issue.Code == audits.InspectorIssueCodeContentSecurityPolicyIssue {
			r.mu.Lock()
			defer r.mu.Unlock()
			d, _ := json.Marshal(e.Issue.Details.ContentSecurityPolicyIssueDetails)
			r.csp = append(r.csp, string(d))
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.ctx, audits.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: width, Height: height, DeviceScaleFactor: 2, Mobile: width < 600}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
		Headers: network.Headers{"Accept-Language": lang}}); err != nil {
		t.Fatal(err)
	}
	return r
}

// axeResult is what the page's axe run reports, its violations only.
type axeResult struct {
	Violations []struct {
		ID     string `json:"id"`
		Impact string `json:"impact"`
		Help   string `json:"help"`
		Nodes  []struct {
			Target []any `json:"target"`
		} `json:"nodes"`
	} `json:"violations"`
}

// read opens p and checks it (the checks of TestEveryPageReadsWell…).
func (r *pageReader) read(p personPage) {
	t := r.t
	t.Helper()
	if p.reach != nil {
		p.reach(t, r.b)
	} else {
		r.b.open(p.url(), ourPage)
	}
	got := r.b.shown()
	got.webhookPage(t, p.status, got.title, p.say[r.lang])
	if lang, err := chromedp.Run(r.b.ctx, chromedp.Evaluate[string](`document.documentElement.lang`)); err != nil || lang != r.lang {
		t.Errorf("%s: lang %q (%v), want %q", p.name, lang, err, r.lang)
	}
	if over, err := chromedp.Run(r.b.ctx, chromedp.Evaluate[int64](`document.documentElement.scrollWidth - window.innerWidth`)); err != nil || over > 0 {
		t.Errorf("%s: the page scrolls sideways by %d px (%v)", p.name, over, err)
	}
	r.mu.Lock()
	if len(r.csp) > 0 {
		t.Errorf("%s: the browser reported CSP violations: %s", p.name, strings.Join(r.csp, "; "))
	}
	r.mu.Unlock()
	out, err := chromedp.Run(r.b.ctx, chromedp.Evaluate[string](r.axe+`;axe.run(document,{resultTypes:["violations"]}).then(r=>JSON.stringify(r))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: axe: %v", p.name, err)
	}
	var res axeResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%s: axe's answer: %v", p.name, err)
	}
	for _, v := range res.Violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("%s: axe %s (%s): %s at %v", p.name, v.ID, v.Impact, v.Help, v.Nodes)
		}
	}
	// What axe itself did (it is the test's script, not the page's) is
	// not held against the next page.
	r.mu.Lock()
	r.csp = nil
	r.mu.Unlock()
	r.b.screenshot(fmt.Sprintf("%s-%s", p.name, r.lang))
}
