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
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/contract/session"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// Issue 37 §2: a Discord session reads itself over HTTP (seed 003
// /api/discord/me) and signs out everywhere (seed 003 deleteAllSessions),
// through the real routes, on the real API server and the sandbox's
// Discord.

const otherID = "41771983423143937"

var (
	nellyUser = sandbox.DiscordUser{ID: nellyID, Username: "nelly", Avatar: "8342729096ea3675442027381ff50dfe"}
	otherUser = sandbox.DiscordUser{ID: otherID, Username: "other"}
)

// sessionWorld is the sign-in world, with the secrets its flows saw and
// the answers of the session routes, to look for one in the other.
type sessionWorld struct {
	*signInWorld
	secrets []string
	answers []answer
}

// signInAs signs u in, in a browser of its own, and returns the session id.
func (w *sessionWorld) signInAs(t *testing.T, u sandbox.DiscordUser) string {
	t.Helper()
	w.discord.SetConsentUser(u)
	f := w.start(t, "Ab3dE5gH9k")
	a := w.finish(t, f)
	c := a.cookies[webhook.SessionCookie]
	if a.status != http.StatusFound || c == nil {
		t.Fatalf("sign-in of %s answered %d:\n%s", u.Username, a.status, a.body)
	}
	w.secrets = append(w.secrets, c.Value, f.callback.Query().Get("code"), f.callback.Query().Get("state"))
	w.keepTokens(t, c.Value)
	return c.Value
}

// keepTokens adds the Discord tokens the session Secret holds now.
func (w *sessionWorld) keepTokens(t *testing.T, sid string) {
	t.Helper()
	if sec, ok := w.sessionSecret(t, sid); ok {
		w.secrets = append(w.secrets, string(sec.Data[oauth.KeyAccessToken]), string(sec.Data[oauth.KeyRefreshToken]))
	}
}

// me is GET /auth/discord/me with the session cookie sid ("" for none).
func (w *sessionWorld) me(t *testing.T, sid string) answer {
	t.Helper()
	var a answer
	if sid == "" {
		a = do(t, http.MethodGet, w.hook+"/auth/discord/me")
	} else {
		a = do(t, http.MethodGet, w.hook+"/auth/discord/me", &http.Cookie{Name: webhook.SessionCookie, Value: sid})
	}
	w.answers = append(w.answers, a)
	return a
}

// post POSTs to path with headers h and the session cookie sid.
func (w *sessionWorld) post(t *testing.T, path string, h http.Header, sid string) answer {
	t.Helper()
	a := doWith(t, http.MethodPost, w.hook+path, h, &http.Cookie{Name: webhook.SessionCookie, Value: sid})
	w.answers = append(w.answers, a)
	return a
}

// sameOrigin is what a browser sends with a POST from this server's page.
func (w *sessionWorld) sameOrigin() http.Header {
	return http.Header{"Origin": {w.hook}, "Sec-Fetch-Site": {"same-origin"}}
}

// sessionsOf lists the names of the session Secrets of Discord user uid.
func (w *sessionWorld) sessionsOf(t *testing.T, uid string) []string {
	t.Helper()
	var list corev1.SecretList
	if err := w.env.Client.List(context.Background(), &list, client.InNamespace(w.ns), client.MatchingLabels{session.UserLabel: uid}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range list.Items {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return names
}

// errorCode is the code of an answer in the common error format.
func errorCode(t *testing.T, a answer) string {
	t.Helper()
	var e struct {
		Error struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &e); err != nil || e.Error.Message == "" || e.Error.Details == nil {
		t.Fatalf("answer %d is not in the common error format (%v):\n%s", a.status, err, a.body)
	}
	return e.Error.Code
}

func TestADiscordSessionReadsItselfAndSignsOutEverywhere(t *testing.T) {
	w := &sessionWorld{signInWorld: startSignInWorld(t)}
	w.discord.Now = w.clk.Now // one clock for Discord's tokens and limits and the sessions

	t.Run("a session reads its user and its expiry, and nothing secret", func(t *testing.T) {
		sid := w.signInAs(t, nellyUser)
		sec, _ := w.sessionSecret(t, sid)
		stored, err := time.Parse(time.RFC3339Nano, string(sec.Data[session.KeyExpiresAt]))
		if err != nil {
			t.Fatal(err)
		}
		a := w.me(t, sid)
		if a.status != http.StatusOK || a.header.Get("Cache-Control") != "no-store" || a.header.Get("Content-Type") != "application/json" {
			t.Fatalf("me answered %d (Cache-Control %q, Content-Type %q):\n%s", a.status, a.header.Get("Cache-Control"), a.header.Get("Content-Type"), a.body)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(a.body), &got); err != nil {
			t.Fatal(err)
		}
		user, _ := got["user"].(map[string]any)
		if len(got) != 3 || len(user) != 3 || user["id"] != nellyID || user["username"] != "nelly" || user["avatar"] != nellyUser.Avatar {
			t.Fatalf("me answered %s", a.body)
		}
		exp, err := time.Parse(time.RFC3339, got["expiresAt"].(string))
		if err != nil || !exp.Equal(stored.Truncate(time.Second)) || !exp.Equal(w.clk.Now().Add(30*24*time.Hour).Truncate(time.Second)) {
			t.Fatalf("expiresAt %v (%v), the Secret says %v", got["expiresAt"], err, stored)
		}
		if in, err := time.Parse(time.RFC3339, got["signedInAt"].(string)); err != nil || !in.Equal(w.clk.Now().Truncate(time.Second)) {
			t.Fatalf("signedInAt %v (%v), signed in at %v", got["signedInAt"], err, w.clk.Now())
		}
		// No CORS: a page of another origin asking gets nothing it may read.
		cross := doWith(t, http.MethodGet, w.hook+"/auth/discord/me", http.Header{"Origin": {"https://evil.example"}},
			&http.Cookie{Name: webhook.SessionCookie, Value: sid})
		w.answers = append(w.answers, cross)
		for k := range cross.header {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Fatalf("me answered another origin with %s: %q", k, cross.header.Get(k))
			}
		}
	})

	t.Run("another user without an avatar reads null", func(t *testing.T) {
		a := w.me(t, w.signInAs(t, otherUser))
		if a.status != http.StatusOK || !strings.Contains(a.body, `"id":"`+otherID+`"`) || !strings.Contains(a.body, `"avatar":null`) {
			t.Fatalf("me answered %d:\n%s", a.status, a.body)
		}
	})

	t.Run("without a cookie, or with a forged one, me is 401", func(t *testing.T) {
		for name, sid := range map[string]string{"no cookie": "", "forged": strings.Repeat("A", 43), "malformed": "not-a-session"} {
			a := w.me(t, sid)
			if a.status != http.StatusUnauthorized || errorCode(t, a) != webhook.CodeUnauthorized || a.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%s: me answered %d:\n%s", name, a.status, a.body)
			}
		}
	})

	t.Run("signing out everywhere ends every browser's session of the user and no other", func(t *testing.T) {
		first, second := w.signInAs(t, nellyUser), w.signInAs(t, nellyUser)
		theirs := w.signInAs(t, otherUser)
		theirSessions := w.sessionsOf(t, otherID)
		for _, sid := range []string{first, second, theirs} {
			if a := w.me(t, sid); a.status != http.StatusOK {
				t.Fatalf("a fresh session answered %d", a.status)
			}
		}
		a := w.post(t, "/auth/logout-everywhere", w.sameOrigin(), first)
		c := a.cookies[webhook.SessionCookie]
		if a.status != http.StatusNoContent || c == nil || c.Value != "" || c.MaxAge >= 0 || a.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("logout-everywhere answered %d with cookie %+v:\n%s", a.status, c, a.body)
		}
		for name, sid := range map[string]string{"the first browser": first, "the second browser": second} {
			if me := w.me(t, sid); me.status != http.StatusUnauthorized {
				t.Fatalf("%s's session answered %d after signing out everywhere", name, me.status)
			}
		}
		if left := w.sessionsOf(t, nellyID); len(left) != 0 {
			t.Fatalf("%d sessions of the user left", len(left))
		}
		if me := w.me(t, theirs); me.status != http.StatusOK || strings.Join(w.sessionsOf(t, otherID), ",") != strings.Join(theirSessions, ",") {
			t.Fatalf("another user's session answered %d after the sign-out", me.status)
		}
	})

	t.Run("without a live session, signing out everywhere deletes nothing", func(t *testing.T) {
		before := w.sessionCount(t)
		for name, sid := range map[string]string{"no cookie": "", "forged": strings.Repeat("A", 43)} {
			a := w.post(t, "/auth/logout-everywhere", w.sameOrigin(), sid)
			if c := a.cookies[webhook.SessionCookie]; a.status != http.StatusNoContent || c == nil || c.MaxAge >= 0 {
				t.Fatalf("%s: logout-everywhere answered %d with cookie %+v", name, a.status, c)
			}
		}
		if n := w.sessionCount(t); n != before {
			t.Fatalf("%d sessions, were %d", n, before)
		}
	})

	t.Run("a POST from another site is refused and ends nothing", func(t *testing.T) {
		sid := w.signInAs(t, nellyUser)
		before := w.sessionsOf(t, nellyID)
		for name, h := range map[string]http.Header{
			"cross-site":                          {"Sec-Fetch-Site": {"cross-site"}},
			"same-site":                           {"Sec-Fetch-Site": {"same-site"}},
			"a foreign Origin":                    {"Origin": {"https://evil.example"}},
			"an opaque Origin":                    {"Origin": {"null"}},
			"this host on another port":           {"Origin": {"http://127.0.0.1:1"}},
			"a foreign Origin, same-origin fetch": {"Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"same-origin"}},
		} {
			for _, path := range []string{"/auth/logout-everywhere", "/auth/logout"} {
				a := w.post(t, path, h, sid)
				if a.status != http.StatusForbidden || errorCode(t, a) != webhook.CodeForbidden || a.cookies[webhook.SessionCookie] != nil {
					t.Fatalf("%s POST %s answered %d:\n%s", name, path, a.status, a.body)
				}
			}
		}
		if after := w.sessionsOf(t, nellyID); strings.Join(after, ",") != strings.Join(before, ",") {
			t.Fatalf("sessions %v after the refused POSTs, were %v", after, before)
		}
		if me := w.me(t, sid); me.status != http.StatusOK {
			t.Fatalf("the session answered %d after the refused POSTs", me.status)
		}
		// The person's own page, or a bookmark (Sec-Fetch-Site: none), may.
		if a := w.post(t, "/auth/logout", http.Header{"Sec-Fetch-Site": {"none"}, "Origin": {w.hook}}, sid); a.status != http.StatusNoContent {
			t.Fatalf("a same-origin logout answered %d:\n%s", a.status, a.body)
		}
		if me := w.me(t, sid); me.status != http.StatusUnauthorized {
			t.Fatalf("the session answered %d after its logout", me.status)
		}
	})

	t.Run("a session that cannot be read is 503 with Retry-After, and nothing is deleted", func(t *testing.T) {
		sid := w.signInAs(t, nellyUser)
		before := w.sessionCount(t)
		// Its access token has expired and Discord limits the refresh.
		w.clk.Step(7*24*time.Hour + time.Minute)
		w.discord.Throttle(sandbox.DiscordToken, time.Minute, false)
		me := w.me(t, sid)
		out := w.post(t, "/auth/logout-everywhere", w.sameOrigin(), sid)
		for name, a := range map[string]answer{"me": me, "logout-everywhere": out} {
			if a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" || errorCode(t, a) != webhook.CodeServiceUnavailable {
				t.Fatalf("%s answered %d (Retry-After %q):\n%s", name, a.status, a.header.Get("Retry-After"), a.body)
			}
		}
		if n := w.sessionCount(t); n != before {
			t.Fatalf("%d sessions, were %d", n, before)
		}
		w.clk.Step(61 * time.Second)
		if a := w.me(t, sid); a.status != http.StatusOK {
			t.Fatalf("me after Discord's limit answered %d:\n%s", a.status, a.body)
		}
		w.keepTokens(t, sid)
	})

	t.Run("no session id, code, state or Discord token in any answer or log line", func(t *testing.T) {
		logs := w.logs.Text()
		if len(w.secrets) < 20 || len(w.answers) < 20 || !strings.Contains(logs, "signed a Discord user out everywhere") {
			t.Fatalf("%d secrets, %d answers, %d bytes of log: the scan would prove nothing", len(w.secrets), len(w.answers), len(logs))
		}
		for _, s := range w.secrets {
			if s == "" {
				t.Fatal("an empty secret was collected")
			}
			if strings.Contains(logs, s) {
				t.Fatalf("a secret of %d characters is in the log", len(s))
			}
			for _, a := range w.answers {
				if strings.Contains(a.body, s) || strings.Contains(strings.Join(a.header.Values("Set-Cookie"), "\n"), s) {
					t.Fatalf("a secret of %d characters is in an answer %d", len(s), a.status)
				}
			}
		}
	})
}
