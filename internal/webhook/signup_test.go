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
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// startFrom opens a sign-up's start URL as a browser at address (the
// server trusts X-Forwarded-For here), with the browser-binding cookie
// browser ("" for a new browser).
func startFrom(t *testing.T, u, address, browser string) (status int, retryAfter int, location, body, cookie string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Forwarded-For", address)
	req.Header.Set("Accept", "text/html")
	if browser != "" {
		req.AddCookie(&http.Cookie{Name: webhook.BrowserCookie, Value: browser})
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, c := range resp.Cookies() {
		if c.Name == webhook.BrowserCookie {
			cookie = c.Value
		}
	}
	retryAfter, _ = strconv.Atoi(resp.Header.Get("Retry-After"))
	return resp.StatusCode, retryAfter, resp.Header.Get("Location"), string(b), cookie
}

// signUpStates counts the sign-up states in the webhook's namespace.
func (w *oauthWorld) signUpStates(t *testing.T) int {
	t.Helper()
	var list corev1.SecretList
	if err := w.env.Client.List(context.Background(), &list, client.InNamespace(w.stateNS), client.MatchingLabels{oauth.StateLabel: "notion"}); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

// A sign-up's start URL is open to anyone, so each of its bounds refuses
// with a page that says what to do and keeps nothing: an address past its
// rate, every address past the overall rate, a browser past the sign-ups
// in progress, a closed sign-up, and a sign-up that is not there. Within
// the bounds a start keeps one state, bound to the browser, and sends the
// person to Notion's consent page with the published client id.
func TestASignUpStartIsBoundedAndPastABoundKeepsNothing(t *testing.T) {
	w := startOAuthWorld(t)
	ctx := context.Background()
	publish := func(name string, closed bool) string {
		err := oauth.PublishSignUp(ctx, w.env.Client, w.stateNS, oauth.PublishedSignUp{Target: "notion", Namespace: "lab-ns", Name: name,
			UID: types.UID("uid-" + name), ClientID: "notion-client", Closed: closed})
		if err != nil {
			t.Fatal(err)
		}
		return "/signup/notion/lab-ns/" + name
	}
	// One server whose addresses may start once an hour (a burst of 1)
	// and whose sign-ups take two browsers at once; another whose
	// addresses together may start twice (a burst of 1).
	hook := w.serveWith(t, w.stateNS, 0, webhook.Options{Log: logr.Discard(), RateLimit: webhook.RateLimit{TrustForwardedFor: true},
		SignUp: webhook.SignUpLimits{PerAddress: 2, Pending: 2}})
	busy := w.serveWith(t, w.stateNS, 0, webhook.Options{Log: logr.Discard(), RateLimit: webhook.RateLimit{TrustForwardedFor: true},
		SignUp: webhook.SignUpLimits{Overall: 2}})
	lab := publish("lab", false)

	st, _, loc, body, browser := startFrom(t, hook+lab, "192.0.2.1", "")
	if st != http.StatusFound || !strings.Contains(loc, "/v1/oauth/authorize?") || !strings.Contains(loc, "client_id=notion-client") ||
		!strings.Contains(loc, "redirect_uri="+url.QueryEscape(hook+"/oauth/notion/callback")) || browser == "" {
		t.Fatalf("an open sign-up answered %d %s (browser cookie %v):\n%s", st, loc, browser != "", body)
	}
	if n := w.signUpStates(t); n != 1 {
		t.Fatalf("%d states after one start", n)
	}

	refusals := []struct {
		name, url, address, want string
		status                   int
	}{
		{"the same address again", hook + lab, "192.0.2.1", "Too many requests came from your network", http.StatusTooManyRequests},
		{"a sign-up that is not there", hook + "/signup/notion/lab-ns/nobody", "192.0.2.20", "There is no sign-up here", http.StatusNotFound},
		{"a path no sign-up could have", hook + "/signup/notion/Not_A_Namespace/lab", "192.0.2.21", "There is no sign-up here", http.StatusNotFound},
		{"a closed sign-up", hook + publish("closed", true), "192.0.2.22", "Sign-up is closed", http.StatusForbidden},
	}
	for _, r := range refusals {
		st, _, _, body, _ := startFrom(t, r.url, r.address, "")
		if st != r.status || !strings.Contains(body, r.want) {
			t.Errorf("%s: %d, want %d with %q:\n%s", r.name, st, r.status, r.want, body)
		}
		if n := w.signUpStates(t); n != 1 {
			t.Fatalf("%s kept a state: %d states", r.name, n)
		}
	}

	// A second browser fits; a third is told to wait, and its state is
	// gone; the first browser may still start again (its own slot).
	if st, _, _, body, _ := startFrom(t, hook+lab, "192.0.2.2", ""); st != http.StatusFound {
		t.Fatalf("a second browser: %d\n%s", st, body)
	}
	st, wait, _, body, _ := startFrom(t, hook+lab, "192.0.2.3", "")
	if st != http.StatusTooManyRequests || wait < 1 || wait > 600 || !strings.Contains(body, "Many people are signing up right now") {
		t.Fatalf("a third browser: %d, Retry-After %d:\n%s", st, wait, body)
	}
	if n := w.signUpStates(t); n != 2 {
		t.Fatalf("%d states after two browsers and a refused third", n)
	}
	if st, _, _, body, _ := startFrom(t, hook+lab, "192.0.2.4", browser); st != http.StatusFound {
		t.Fatalf("the first browser again, from another address: %d\n%s", st, body)
	}

	// The overall rate: the first start passes, the next from another
	// address is told many people are signing up.
	other := publish("other", false)
	if st, _, _, body, _ := startFrom(t, busy+other, "198.51.100.1", ""); st != http.StatusFound {
		t.Fatalf("the first start on the busy server: %d\n%s", st, body)
	}
	before := w.signUpStates(t)
	st, wait, _, body, _ = startFrom(t, busy+other, "198.51.100.2", "")
	if st != http.StatusTooManyRequests || wait < 1 || !strings.Contains(body, "Many people are signing up right now") {
		t.Fatalf("past the overall rate: %d, Retry-After %d:\n%s", st, wait, body)
	}
	if after := w.signUpStates(t); after != before {
		t.Fatalf("past the overall rate a state was kept: %d, were %d", after, before)
	}
}
