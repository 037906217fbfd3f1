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
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// alice is the Discord user the links are for.
var alice = sandbox.DiscordUser{ID: "123456789012345678", Username: "alice"}

// sharedLink creates a ReceiveLink for alice in a fresh namespace, and
// returns its share URL and short token.
func sharedLink(t *testing.T, body string, change func(*v1alpha1.ReceiveLink)) (*v1alpha1.ReceiveLink, string, string) {
	t.Helper()
	ns, err := env.Namespace("browser")
	if err != nil {
		t.Fatal(err)
	}
	l, data := testenv.ShareLink(t, env.Client, s3, bucket, ns, "for-alice", body, s3.Credentials, func(l *v1alpha1.ReceiveLink) {
		l.Spec.Receiver.DiscordUserID = alice.ID
		if change != nil {
			change(l)
		}
	})
	return l, string(data[linktoken.ShareURL]), string(data[linktoken.ShareShortToken])
}

// wantCookie checks a cookie's documented attributes: HttpOnly, Secure,
// SameSite=Lax, its Path, and an expiry maxAge from now (a persistent
// cookie, not a session one).
func wantCookie(t *testing.T, c *network.Cookie, name, path string, maxAge time.Duration) {
	t.Helper()
	if c == nil {
		t.Errorf("the browser holds no %s cookie", name)
		return
	}
	if !c.HTTPOnly || !c.Secure || c.SameSite != network.CookieSameSiteLax || c.Path != path || c.Session {
		t.Errorf("%s: HttpOnly %v, Secure %v, SameSite %q, Path %q, session %v; want HttpOnly, Secure, Lax, %s, persistent",
			name, c.HTTPOnly, c.Secure, c.SameSite, c.Path, c.Session, path)
	}
	if left := time.Until(time.Unix(int64(c.Expires), 0)); math.Abs((left - maxAge).Seconds()) > 120 {
		t.Errorf("%s expires in %s, want %s", name, left.Round(time.Second), maxAge)
	}
}

// The receiver opens a Discord-restricted share link: the webhook sends
// her to Discord's consent page (setting sb_browser and sb_claim), she
// clicks "Allow access", the callback signs her in (sb_session) and sends
// her back to the link, which hands the file over: the browser downloads
// the bytes from S3. The cookies carry the attributes docs/receivelink.md
// gives, and no request lets a link or a code out in a Referer.
func TestShareLinkDiscordSignInInABrowser(t *testing.T) {
	discordEm.SetConsentUser(alice)
	l, shareURL, short := sharedLink(t, "alice's prize", nil)
	b := newTab(t)

	// The webhook's cache sees the new link a moment after it is Ready:
	// until then the link answers 404 or 503 (JSON), not the consent page.
	testenv.EventuallyWithin(t, time.Minute, "the share link leads to Discord's consent page", func() bool {
		b.do("open the share link", chromedp.Navigate(shareURL))
		loc, err := chromedp.Run(b.ctx, chromedp.Location())
		return err == nil && strings.HasPrefix(loc, sandboxURL+"/discord/oauth2/authorize?")
	})
	b.do("wait for the consent page", chromedp.WaitVisible(allowButton))
	consentPage(t, b, "/discord/oauth2/authorize")
	b.screenshot("discord-consent")
	// The start bound the sign-in to this browser and remembered the link
	// for the callback, in cookies only the webhook reads.
	started := b.cookies("/", "/auth/discord/callback")
	wantCookie(t, started[webhook.BrowserCookie], webhook.BrowserCookie, "/", 10*time.Minute)
	wantCookie(t, started["sb_claim"], "sb_claim", "/auth/discord/callback", 10*time.Minute)
	if c := started[webhook.SessionCookie]; c != nil {
		t.Fatal("a session before the sign-in")
	}

	// Allow: callback → /r/{short} → a presigned S3 URL, which the
	// browser downloads (the tab stays on the consent page, as with any
	// download).
	b.do("click Allow", chromedp.Click(allowButton))
	if got := string(b.download(s3.Endpoint + "/")); got != "alice's prize" {
		t.Fatalf("the browser downloaded %q", got)
	}
	signedIn := b.cookies("/", "/auth/discord/callback")
	wantCookie(t, signedIn[webhook.SessionCookie], webhook.SessionCookie, "/", 30*24*time.Hour)
	wantCookie(t, signedIn[webhook.BrowserCookie], webhook.BrowserCookie, "/", 10*time.Minute)
	if c := signedIn["sb_claim"]; c != nil {
		t.Error("the claim cookie outlived the callback")
	}
	// Every hop of the walk, as the browser made it.
	var hops []string
	for _, r := range b.sentTo("") {
		hops = append(hops, redact(r.url))
	}
	want := []string{hookURL + "/r/SHORT", sandboxURL + "/discord/oauth2/authorize", hookURL + "/auth/discord/callback", hookURL + "/r/SHORT", s3.Endpoint + "/"}
	if !inOrder(hops, want) {
		t.Errorf("the browser went through\n%s\nwant, in order, %v", strings.Join(hops, "\n"), want)
	}
	for _, r := range b.sentTo(s3.Endpoint) {
		if ref := b.refererOf(r); ref != "" {
			t.Errorf("the download carried the Referer %s", redact(ref))
		}
	}
	b.noRefererFromWebhook()
	// Nothing of the link, the session or Discord's grant is in a page
	// the browser showed (the consent page is the only one).
	p := b.shown()
	p.noSecret(t, map[string]string{"session id": signedIn[webhook.SessionCookie].Value, "client secret": discordClientSecret})
	if strings.Contains(p.html, short) && !strings.HasPrefix(p.url, sandboxURL) {
		t.Error("a page shows the short token")
	}

	// Signed in, the link hands the file over at once.
	b.visit(shareURL)
	if got := string(b.download(s3.Endpoint + "/")); got != "alice's prize" {
		t.Fatalf("the second download is %q", got)
	}
	testenv.EventuallyWithin(t, time.Minute, "the resolves audited in status", func() bool {
		var now v1alpha1.ReceiveLink
		return env.Client.Get(context.Background(), client.ObjectKeyFromObject(l), &now) == nil && now.Status.ResolveCount >= 2
	})
}

// The receiver clicks "Cancel" on Discord's consent page: the callback's
// documented refusal page, and no session.
func TestShareLinkDiscordDeniedInABrowser(t *testing.T) {
	discordEm.SetConsentUser(alice)
	_, shareURL, _ := sharedLink(t, "not for now", nil)
	b, pr := newTab(t), newProbe(t)
	testenv.EventuallyWithin(t, time.Minute, "the share link leads to Discord's consent page", func() bool {
		b.do("open the share link", chromedp.Navigate(shareURL))
		loc, err := chromedp.Run(b.ctx, chromedp.Location())
		return err == nil && strings.HasPrefix(loc, sandboxURL+"/discord/oauth2/authorize?")
	})
	b.click(denyButton, chromedp.Search(`//h1[contains(., "`+notGrantedTitle+`")]`))
	denied := b.shown()
	denied.webhookPage(t, 403, notGrantedTitle, "")
	b.screenshot("discord-denied")
	if !strings.Contains(denied.text, "Discord answered: access_denied") || !strings.Contains(denied.text, "Open your link again.") {
		t.Errorf("the refusal page says:\n%s", denied.text)
	}
	if !strings.HasPrefix(denied.url, hookURL+"/auth/discord/callback?") {
		t.Errorf("the refusal page is at %s", redact(denied.url))
	}
	denied.noSecret(t, map[string]string{"client secret": discordClientSecret})
	if ref := pr.refererFrom(b); ref != "" {
		t.Errorf("the refusal page let the Referer %s out", redact(ref))
	}
	if c := b.cookies("/")[webhook.SessionCookie]; c != nil {
		t.Error("a denied consent made a session")
	}
	b.noRefererFromWebhook()
}

// A link past its expiry answers the documented 410 GONE in the browser,
// before any sign-in.
func TestExpiredShareLinkInABrowser(t *testing.T) {
	expires := metav1.NewTime(time.Now().Add(20 * time.Second).Truncate(time.Second))
	l, shareURL, _ := sharedLink(t, "too late", func(l *v1alpha1.ReceiveLink) {
		l.Spec.TTL, l.Spec.ExpiresAt = nil, &expires
	})
	testenv.EventuallyWithin(t, 2*time.Minute, "the link Expired", func() bool {
		var now v1alpha1.ReceiveLink
		return env.Client.Get(context.Background(), client.ObjectKeyFromObject(l), &now) == nil && now.Status.Phase == v1alpha1.LinkExpired
	})
	b, pr := newTab(t), newProbe(t)
	// A browser gets a page in its language, not seed 003's JSON error
	// (which an API client, asking for JSON, still gets).
	b.open(shareURL, chromedp.Search(`//h1[contains(., "This link has expired")]`))
	gone := b.shown()
	if gone.status != 410 || strings.Contains(gone.text, `"code":"GONE"`) || !strings.Contains(gone.text, "Ask the person who shared it") {
		t.Errorf("the expired link answered %d:\n%s", gone.status, gone.text)
	}
	if rp := header(gone.headers, "Referrer-Policy"); rp != "no-referrer" {
		t.Errorf("Referrer-Policy %q", rp)
	}
	b.screenshot("expired-link")
	if ref := pr.refererFrom(b); ref != "" {
		t.Errorf("the 410 page let the Referer %s out", redact(ref))
	}
	if len(b.cookies("/")) != 0 {
		t.Error("an expired link set cookies")
	}
	b.noRefererFromWebhook()
}

// inOrder reports whether want's prefixes are matched by hops in order.
func inOrder(hops, want []string) bool {
	i := 0
	for _, h := range hops {
		if i < len(want) && strings.HasPrefix(h, want[i]) {
			i++
		}
	}
	return i == len(want)
}
