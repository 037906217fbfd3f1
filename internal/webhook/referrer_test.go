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

package webhook_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A connect link carries its one-use token in the query string, and a
// callback URL a code and a state. A browser sends a page's URL on, in
// the Referer header, to whatever the page loads or links to, and to the
// target of a redirect; so every answer of these routes — each 302, each
// error page, the callback's page — says Referrer-Policy: no-referrer
// (W3C Referrer Policy §3.1; issue 17 §3). The other tests check it in
// passing; these name every answer.

// getHeaded is do's GET: every answer here is read with its headers.
func getHeaded(t *testing.T, u string, cookies ...*http.Cookie) answer {
	t.Helper()
	return do(t, http.MethodGet, u, cookies...)
}

// noReferrer fails unless a has status want and says Referrer-Policy:
// no-referrer.
func noReferrer(t *testing.T, what string, a answer, want int) {
	t.Helper()
	if a.status != want {
		t.Errorf("%s: status %d, want %d", what, a.status, want)
	}
	if got := a.header.Values("Referrer-Policy"); len(got) != 1 || got[0] != "no-referrer" {
		t.Errorf("%s (%d): Referrer-Policy %q, want no-referrer", what, a.status, got)
	}
}

func withQuery(t *testing.T, u string, set map[string]string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := p.Query()
	for k, v := range set {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	p.RawQuery = q.Encode()
	return p.String()
}

func TestEveryOAuthConnectAndCallbackAnswerSendsNoReferrer(t *testing.T) {
	w := startOAuthWorld(t)
	ctx := context.Background()

	// The whole flow: connect's 302, the consent, the callback's page.
	cm, link := w.resource(t, "test-google", "google-client", "google-secret")
	connect := getHeaded(t, link)
	noReferrer(t, "connect's 302 to the consent page", connect, http.StatusFound)
	consent := getHeaded(t, connect.location.String())
	if consent.status != http.StatusFound {
		t.Fatalf("consent answered %d", consent.status)
	}
	back := consent.location.String()
	noReferrer(t, "the callback's page", getHeaded(t, back), http.StatusOK)

	// Refused connects. The used link is refused once the controller has
	// minted and published the next one (here the test plays it).
	fresh := w.mint(t, cm, "test-google")
	noReferrer(t, "the used connect link", getHeaded(t, link), http.StatusForbidden)
	noReferrer(t, "a connect link with a wrong token", getHeaded(t, withQuery(t, fresh, map[string]string{"token": "not-the-token"})), http.StatusForbidden)
	noReferrer(t, "a connect link without a token", getHeaded(t, withQuery(t, fresh, map[string]string{"token": ""})), http.StatusForbidden)
	noReferrer(t, "a connect for a resource that does not exist", getHeaded(t, withQuery(t, fresh, map[string]string{"name": "nothing-here"})), http.StatusForbidden)
	noReferrer(t, "an unknown target", getHeaded(t, w.hook+"/oauth/no-such-target/connect?namespace=a&name=b&token=c"), http.StatusNotFound)

	// A working grant is not replaced: 409.
	w.publish(t, cm, "authenticated", string(metav1.ConditionTrue))
	noReferrer(t, "a connect to a working grant", getHeaded(t, fresh), http.StatusConflict)

	// No client id published: the OAuth client Secret is incomplete.
	_, broken := w.resource(t, "test-google", "", "google-secret")
	noReferrer(t, "a connect whose OAuth client is incomplete", getHeaded(t, broken), http.StatusInternalServerError)

	// Refused callbacks.
	noReferrer(t, "a callback whose state was used", getHeaded(t, back), http.StatusForbidden)
	noReferrer(t, "a callback with an unknown state", getHeaded(t, w.hook+"/oauth/test-google/callback?state=unknown&code=x"), http.StatusForbidden)
	noReferrer(t, "a callback without a state", getHeaded(t, w.hook+"/oauth/test-google/callback?code=x"), http.StatusForbidden)

	_, link2 := w.resource(t, "test-discord", "1234567890", "discord-secret")
	start := getHeaded(t, link2)
	noReferrer(t, "connect's 302 to Discord's consent page", start, http.StatusFound)
	state := start.location.Query().Get("state")
	noReferrer(t, "a callback where the person denied access",
		getHeaded(t, w.hook+"/oauth/test-discord/callback?"+url.Values{"state": {state}, "error": {"access_denied"}}.Encode()), http.StatusForbidden)

	// A code the provider does not accept.
	_, link3 := w.resource(t, "test-discord", "1234567890", "discord-secret")
	start = getHeaded(t, link3)
	state = start.location.Query().Get("state")
	noReferrer(t, "a callback with a code nobody issued",
		getHeaded(t, w.hook+"/oauth/test-discord/callback?"+url.Values{"state": {state}, "code": {"forged"}}.Encode()), http.StatusUnauthorized)

	// The resource deleted between connect and callback.
	cm4, link4 := w.resource(t, "test-google", "google-client", "google-secret")
	start = getHeaded(t, link4)
	consent = getHeaded(t, start.location.String())
	if err := w.env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm4.Namespace, Name: cm4.Name}}); err != nil {
		t.Fatal(err)
	}
	if consent.status != http.StatusFound {
		t.Fatalf("consent answered %d", consent.status)
	}
	noReferrer(t, "a callback for a resource deleted meanwhile", getHeaded(t, consent.location.String()), http.StatusNotFound)

	// The manager has not received the grant within the wait: a page
	// that says it is on its way (202).
	idle, err := w.env.Namespace("idle")
	if err != nil {
		t.Fatal(err)
	}
	hook := w.serve(t, idle, 200*time.Millisecond)
	cm5, _ := w.resource(t, "test-google", "google-client", "google-secret")
	start = getHeaded(t, w.mintOn(t, cm5, "test-google", hook))
	noReferrer(t, "connect's 302 on a second webhook", start, http.StatusFound)
	consent = getHeaded(t, start.location.String())
	noReferrer(t, "the callback's page while the manager is away", getHeaded(t, consent.location.String()), http.StatusAccepted)
}

func TestDiscordSignInRedirectsAndPagesSendNoReferrer(t *testing.T) {
	w := startSignInWorld(t)

	// Signed in and sent back to the link.
	start := getHeaded(t, w.hook+"/test/claim/refshortone")
	noReferrer(t, "the sign-in's 302 to Discord", start, http.StatusFound)
	claim := start.cookies["sb_claim"]
	if claim == nil {
		t.Fatal("no claim cookie")
	}
	consent := getHeaded(t, start.location.String())
	if consent.status != http.StatusFound {
		t.Fatalf("consent answered %d", consent.status)
	}
	back := getHeaded(t, consent.location.String(), claim)
	noReferrer(t, "the callback's 302 back to the link", back, http.StatusFound)
	if back.location.Path != "/r/refshortone" {
		t.Fatalf("sent back to %s", back.location)
	}
	noReferrer(t, "a sign-in callback whose state was used", getHeaded(t, consent.location.String(), claim), http.StatusForbidden)

	// Signed in from another browser: a page, not a redirect.
	f := w.start(t, "refshorttwo")
	noReferrer(t, "the signed-in page without the claim cookie", getHeaded(t, f.callback.String()), http.StatusOK)

	// Refused.
	noReferrer(t, "a sign-in callback with an unknown state", getHeaded(t, w.hook+"/auth/discord/callback?state=unknown&code=x"), http.StatusForbidden)
	f = w.start(t, "refshortthree")
	denied := withQuery(t, f.callback.String(), map[string]string{"code": "", "error": "access_denied"})
	noReferrer(t, "a sign-in the person denied", getHeaded(t, denied, f.claim), http.StatusForbidden)
}
