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
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// Issue 18 item 12: a receiver's sign-in in progress is bound to the
// browser that started it (RFC 9700 §4.7.1: a state bound to the user
// agent, here by a cookie). Anyone else holding the link, a retrying
// browser or four tabs elsewhere, cannot evict it; what strangers can
// start is bounded per link.

// startIn starts a sign-in for short in the browser whose binding cookie
// is browser (nil: a browser that never started one). It returns the
// answer, and the flow up to Discord's redirect back when it was a 302.
func (w *signInWorld) startIn(t *testing.T, short string, browser *http.Cookie) (answer, flow) {
	t.Helper()
	w.clk.Step(time.Millisecond) // states are ordered by when they were made
	var a answer
	if browser == nil {
		a = do(t, http.MethodGet, w.hook+"/test/claim/"+short)
	} else {
		a = do(t, http.MethodGet, w.hook+"/test/claim/"+short, browser)
	}
	if a.status != http.StatusFound {
		return a, flow{}
	}
	f := flow{claim: a.cookies["sb_claim"], authorize: a.location}
	consent := do(t, http.MethodGet, a.location.String())
	if consent.status != http.StatusFound {
		t.Fatalf("consent answered %d:\n%s", consent.status, consent.body)
	}
	f.callback = consent.location
	return a, f
}

// browserOf is the binding cookie a start set, or the one the browser had.
func browserOf(t *testing.T, a answer, had *http.Cookie) *http.Cookie {
	t.Helper()
	if c := a.cookies[webhook.BrowserCookie]; c != nil {
		if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.MaxAge <= 0 || c.MaxAge > 600 {
			t.Fatalf("binding cookie %+v", c)
		}
		return c
	}
	if had == nil {
		t.Fatal("a start set no browser-binding cookie")
	}
	return had
}

func (w *signInWorld) finish(t *testing.T, f flow, cookies ...*http.Cookie) answer {
	t.Helper()
	return do(t, http.MethodGet, f.callback.String(), append([]*http.Cookie{f.claim}, cookies...)...)
}

func (w *signInWorld) stateCount(t *testing.T) int {
	t.Helper()
	var list corev1.SecretList
	if err := w.env.Client.List(context.Background(), &list, client.InNamespace(w.ns), client.HasLabels{oauth.StateLabel}); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

func TestASignInInProgressIsBoundToItsBrowser(t *testing.T) {
	w := startSignInWorld(t)
	const short = "Ab3dE5gH9k"

	t.Run("strangers' starts of the same link do not evict it", func(t *testing.T) {
		a, mine := w.startIn(t, short, nil)
		browser := browserOf(t, a, nil)
		for i := range 2 * oauth.MaxStatesPerResource {
			if s, _ := w.startIn(t, short, nil); s.status != http.StatusFound && s.status != http.StatusTooManyRequests {
				t.Fatalf("stranger %d's start answered %d:\n%s", i, s.status, s.body)
			}
		}
		got := w.finish(t, mine, browser)
		if got.status != http.StatusFound || got.location.String() != w.hook+"/r/"+short || got.cookies[webhook.SessionCookie] == nil {
			t.Fatalf("the receiver's callback after strangers' starts answered %d:\n%s", got.status, got.body)
		}
	})

	t.Run("a browser's own fourth start replaces its oldest", func(t *testing.T) {
		a, first := w.startIn(t, short, nil)
		browser := browserOf(t, a, nil)
		var last flow
		for range oauth.MaxStatesPerResource {
			var b answer
			b, last = w.startIn(t, short, browser)
			if b.status != http.StatusFound {
				t.Fatalf("the same browser's start answered %d:\n%s", b.status, b.body)
			}
			browser = browserOf(t, b, browser)
		}
		if got := w.finish(t, first, browser); got.status != http.StatusForbidden {
			t.Fatalf("the browser's oldest state, replaced, answered %d", got.status)
		}
		if got := w.finish(t, last, browser); got.status != http.StatusFound || got.cookies[webhook.SessionCookie] == nil {
			t.Fatalf("the browser's newest state answered %d:\n%s", got.status, got.body)
		}
	})

	t.Run("another browser's callback does not spend the state", func(t *testing.T) {
		a, mine := w.startIn(t, short, nil)
		browser := browserOf(t, a, nil)
		s, _ := w.startIn(t, short, nil)
		stranger := browserOf(t, s, nil)
		if got := w.finish(t, mine, stranger); got.status != http.StatusForbidden || got.cookies[webhook.SessionCookie] != nil {
			t.Fatalf("the receiver's callback played in another browser answered %d", got.status)
		}
		if got := w.finish(t, mine, browser); got.status != http.StatusFound || got.cookies[webhook.SessionCookie] == nil {
			t.Fatalf("the receiver's own callback after that answered %d:\n%s", got.status, got.body)
		}
	})

	t.Run("cookieless starts are bounded per link and refused past the bound", func(t *testing.T) {
		w.clk.Step(oauth.StateTTL + time.Second) // what earlier subtests left has expired
		a, mine := w.startIn(t, short, nil)
		browser := browserOf(t, a, nil)
		refused := 0
		for range 3 * oauth.MaxBrowsersPerResource {
			s, _ := w.startIn(t, short, nil)
			switch s.status {
			case http.StatusFound:
			case http.StatusTooManyRequests:
				refused++
				if ra, err := strconv.Atoi(s.header.Get("Retry-After")); err != nil || ra <= 0 || ra > int(oauth.StateTTL/time.Second) {
					t.Fatalf("a refused start's Retry-After is %q", s.header.Get("Retry-After"))
				}
				if s.cookies["sb_claim"] != nil || !strings.Contains(s.body, "RATE_LIMIT_EXCEEDED") {
					t.Fatalf("a refused start set a claim cookie or said %s", s.body)
				}
			default:
				t.Fatalf("a stranger's start answered %d:\n%s", s.status, s.body)
			}
		}
		if refused == 0 {
			t.Fatal("no stranger's start was refused: starts without a credential are unbounded")
		}
		if n := w.stateCount(t); n > oauth.MaxBrowsersPerResource*oauth.MaxStatesPerResource {
			t.Fatalf("%d live states for one link", n)
		}
		// The receiver's browser still has its slot: it starts again, and
		// either of its states signs in.
		b, again := w.startIn(t, short, browser)
		if b.status != http.StatusFound {
			t.Fatalf("the receiver's second start answered %d:\n%s", b.status, b.body)
		}
		browser = browserOf(t, b, browser)
		if got := w.finish(t, mine, browser); got.status != http.StatusFound {
			t.Fatalf("the receiver's first state answered %d:\n%s", got.status, got.body)
		}
		if got := w.finish(t, again, browser); got.status != http.StatusFound {
			t.Fatalf("the receiver's second state answered %d:\n%s", got.status, got.body)
		}
	})
}
