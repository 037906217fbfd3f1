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
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// Issue 18 item 13: Discord answers 429 with retry_after on its OAuth and
// user endpoints, and bans clients that keep calling into a limit. A 429
// never spends a sign-in's state, the limit is remembered per bucket until
// it resets, and the person is told when to retry.

func retryAfter(t *testing.T, a answer) int {
	t.Helper()
	n, err := strconv.Atoi(a.header.Get("Retry-After"))
	if err != nil {
		t.Fatalf("answer %d has Retry-After %q", a.status, a.header.Get("Retry-After"))
	}
	return n
}

func TestDiscordRateLimitsSpendNoStateAndAreWaitedOut(t *testing.T) {
	w := startSignInWorld(t)
	// One clock for Discord's limits and codes and for the webhook.
	w.discord.Now = w.clk.Now
	const short = "Ab3dE5gH9k"

	t.Run("a 429 on the code exchange spends no state and says when to retry", func(t *testing.T) {
		f := w.start(t, short)
		w.box.ResetCalls()
		before := w.discord.RateLimited()
		w.discord.Throttle(sandbox.DiscordToken, 30*time.Second, false)
		a := do(t, http.MethodGet, f.callback.String(), f.claim)
		if a.status != http.StatusServiceUnavailable || a.cookies[webhook.SessionCookie] != nil {
			t.Fatalf("callback during Discord's limit answered %d:\n%s", a.status, a.body)
		}
		if ra := retryAfter(t, a); ra < 29 || ra > 31 || !strings.Contains(a.body, `<span id="retry-in">`+strconv.Itoa(ra)+"</span> seconds") {
			t.Fatalf("Retry-After %d, page:\n%s", ra, a.body)
		}
		// Reloaded at once: the limit is remembered, Discord is not asked.
		if b := do(t, http.MethodGet, f.callback.String(), f.claim); b.status != http.StatusServiceUnavailable {
			t.Fatalf("the reload during the limit answered %d:\n%s", b.status, b.body)
		}
		if n := w.discord.RateLimited() - before; n != 1 {
			t.Fatalf("Discord answered %d requests 429; the limit was not remembered", n)
		}
		// After the limit the same callback signs in: the state was kept.
		w.clk.Step(31 * time.Second)
		c := do(t, http.MethodGet, f.callback.String(), f.claim)
		if c.status != http.StatusFound || c.cookies[webhook.SessionCookie] == nil || c.location.String() != w.hook+"/r/"+short {
			t.Fatalf("the callback after the limit answered %d:\n%s", c.status, c.body)
		}
	})

	t.Run("a 429 on users/@me after the exchange keeps the grant for the retry", func(t *testing.T) {
		f := w.start(t, short)
		w.box.ResetCalls()
		w.discord.Throttle(sandbox.DiscordUsersMe, 5*time.Second, false)
		a := do(t, http.MethodGet, f.callback.String(), f.claim)
		if a.status != http.StatusServiceUnavailable || retryAfter(t, a) < 4 || retryAfter(t, a) > 6 {
			t.Fatalf("callback during the users/@me limit answered %d (Retry-After %q):\n%s", a.status, a.header.Get("Retry-After"), a.body)
		}
		w.clk.Step(6 * time.Second)
		c := do(t, http.MethodGet, f.callback.String(), f.claim)
		if c.status != http.StatusFound || c.cookies[webhook.SessionCookie] == nil {
			t.Fatalf("the callback after the limit answered %d:\n%s", c.status, c.body)
		}
		if n := w.box.Calls(sandbox.DiscordToken); n != 1 {
			t.Fatalf("%d code exchanges, want 1: the grant was not kept", n)
		}
	})

	t.Run("a 429 on a session's refresh is remembered until it resets", func(t *testing.T) {
		f := w.start(t, short)
		in := do(t, http.MethodGet, f.callback.String(), f.claim)
		if in.status != http.StatusFound || in.cookies[webhook.SessionCookie] == nil {
			t.Fatalf("sign-in answered %d:\n%s", in.status, in.body)
		}
		sid := in.cookies[webhook.SessionCookie].Value
		// 5 minutes before the access token expires: each request wants a
		// refresh (RefreshBefore is 10 minutes).
		w.clk.Step(7*24*time.Hour - 5*time.Minute)
		w.box.ResetCalls()
		before := w.discord.RateLimited()
		w.discord.Throttle(sandbox.DiscordToken, time.Minute, false)
		for range 5 {
			// The access token still works: the session stands.
			if me := w.whoami(t, sid); me.status != http.StatusOK {
				t.Fatalf("whoami during the limit answered %d:\n%s", me.status, me.body)
			}
			w.clk.Step(60 * time.Millisecond)
		}
		if n := w.box.Calls(sandbox.DiscordToken); n != 1 || w.discord.RateLimited()-before != 1 {
			t.Fatalf("%d refresh calls (%d answered 429) during one limit, want 1", n, w.discord.RateLimited()-before)
		}
		// The access token expires while the limit holds: 503 with the
		// rest of the limit, still no call.
		w.clk.Step(5 * time.Minute)
		w.discord.Throttle(sandbox.DiscordToken, time.Minute, false)
		w.box.ResetCalls()
		first := w.whoami(t, sid) // learns the new limit
		me := w.whoami(t, sid)
		if first.status != http.StatusServiceUnavailable || me.status != http.StatusServiceUnavailable || retryAfter(t, me) < 55 || retryAfter(t, me) > 61 {
			t.Fatalf("whoami with an expired token during the limit answered %d, %d (Retry-After %q)", first.status, me.status, me.header.Get("Retry-After"))
		}
		if n := w.box.Calls(sandbox.DiscordToken); n != 1 {
			t.Fatalf("%d refresh calls during the limit, want 1", n)
		}
		w.clk.Step(61 * time.Second)
		if me := w.whoami(t, sid); me.status != http.StatusOK || w.box.Calls(sandbox.DiscordToken) != 2 {
			t.Fatalf("whoami after the limit answered %d after %d refresh calls", me.status, w.box.Calls(sandbox.DiscordToken))
		}
	})
}
