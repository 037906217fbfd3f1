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
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/contract/session"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// The Discord sign-in through its real routes, on the real API server and
// the sandbox's Discord emulator. The share-link route that calls
// StartSignIn and CurrentSession is played by two test routes, so these
// tests need no ReceiveLink.

const nellyID = "80351110224678912"

type signInWorld struct {
	env      *testenv.Env
	box      *sandbox.Server
	discord  *sandbox.Discord
	clk      *clocktesting.FakeClock
	hook, ns string
	logs     *testenv.Logs
}

// claimRoutes play the share-link route: /test/claim/{short} starts a
// sign-in for a link, /test/whoami answers the session's user.
var claimRoutes = webhook.Family{Name: "test-claim", Routes: func(d webhook.Deps) []webhook.Route {
	return []webhook.Route{
		{Pattern: "GET /test/claim/{short}", Handler: func(w http.ResponseWriter, r *http.Request) error {
			return webhook.StartSignIn(w, r, d, webhook.Claim{Namespace: "links", Name: "report", UID: "link-uid", Short: r.PathValue("short")})
		}},
		{Pattern: "GET /test/whoami", Handler: func(w http.ResponseWriter, r *http.Request) error {
			s, err := d.CurrentSession(r)
			switch {
			case errors.Is(err, session.ErrNoSession):
				return webhook.Errorf(http.StatusUnauthorized, "no session")
			case err != nil:
				return webhook.SessionUnavailable(err)
			}
			webhook.WriteJSON(w, http.StatusOK, map[string]string{"id": s.UserID, "username": s.Username, "avatar": s.Avatar})
			return nil
		}},
	}
}}

func startSignInWorld(t *testing.T) *signInWorld {
	t.Helper()
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	w := &signInWorld{env: env, discord: sandbox.NewDiscord(), clk: clocktesting.NewFakeClock(time.Now()), logs: &testenv.Logs{}}
	w.discord.AddClient("1234567890", "discord-secret")
	w.discord.SetConsentUser(sandbox.DiscordUser{ID: nellyID, Username: "nelly", Avatar: "8342729096ea3675442027381ff50dfe"})
	w.box = sandbox.New(w.discord)
	srv := httptest.NewServer(w.box)
	t.Cleanup(srv.Close)
	ups := sandbox.Upstreams(srv.URL)
	out, err := outbound.New(ups, outbound.Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if w.ns, err = env.Namespace("webhook"); err != nil {
		t.Fatal(err)
	}
	clientKey := types.NamespacedName{Namespace: w.ns, Name: "discord-client"}
	if err := env.Client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: clientKey.Name, Namespace: w.ns},
		StringData: map[string]string{oauth.KeyClientID: "1234567890", oauth.KeyClientSecret: "discord-secret"}}); err != nil {
		t.Fatal(err)
	}
	engine := setup.Engine(env, out)
	engine.Clock = w.clk
	sessions := &session.Store{Reader: env.Client, Writer: env.Client, Namespace: w.ns, Engine: engine,
		Provider: oauth.Discord.WithScopes("identify"), ClientKey: clientKey, Clock: w.clk}
	// Every line at every verbosity, to look for secrets in.
	log := w.logs.Logger()
	var families []webhook.Family
	for _, f := range webhook.Families() {
		if f.Name == "signin" {
			families = append(families, f)
		}
	}
	families = append(families, claimRoutes)
	hookSrv := httptest.NewUnstartedServer(nil)
	w.hook = "http://" + hookSrv.Listener.Addr().String()
	hook, err := webhook.NewServer(webhook.Options{Log: log},
		webhook.Deps{Client: env.Client, APIReader: env.Client, Upstreams: ups, Outbound: out, Log: log,
			PublicURL: w.hook, StateNamespace: w.ns, SignIn: &webhook.SignIn{Sessions: sessions}},
		families...)
	if err != nil {
		t.Fatal(err)
	}
	hookSrv.Config.Handler = hook.Handler()
	hookSrv.Start()
	t.Cleanup(hookSrv.Close)
	return w
}

// answer is one HTTP answer, read whole, redirects not followed.
type answer struct {
	status   int
	header   http.Header
	location *url.URL
	cookies  map[string]*http.Cookie
	body     string
}

func do(t *testing.T, method, u string, cookies ...*http.Cookie) answer {
	t.Helper()
	return doWith(t, method, u, nil, cookies...)
}

// doWith is do with request headers: what a browser says of where a
// request comes from (Origin, Sec-Fetch-Site).
func doWith(t *testing.T, method, u string, h http.Header, cookies ...*http.Cookie) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h != nil {
		req.Header = h.Clone()
	}
	for _, c := range cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, cookies: map[string]*http.Cookie{}, body: string(b)}
	a.location, _ = url.Parse(resp.Header.Get("Location"))
	for _, c := range resp.Cookies() {
		a.cookies[c.Name] = c
	}
	return a
}

// flow is one sign-in up to Discord's redirect back: the claim cookie the
// start set, the authorize URL, and the callback URL Discord sent back.
type flow struct {
	claim               *http.Cookie
	authorize, callback *url.URL
}

func (w *signInWorld) start(t *testing.T, short string) flow {
	t.Helper()
	a := do(t, http.MethodGet, w.hook+"/test/claim/"+short)
	if a.status != http.StatusFound || a.cookies["sb_claim"] == nil {
		t.Fatalf("start answered %d without a claim cookie:\n%s", a.status, a.body)
	}
	f := flow{claim: a.cookies["sb_claim"], authorize: a.location}
	consent := do(t, http.MethodGet, a.location.String())
	if consent.status != http.StatusFound {
		t.Fatalf("consent answered %d:\n%s", consent.status, consent.body)
	}
	f.callback = consent.location
	return f
}

func (w *signInWorld) sessionCount(t *testing.T) int {
	t.Helper()
	var list corev1.SecretList
	if err := w.env.Client.List(context.Background(), &list, client.InNamespace(w.ns), client.MatchingLabels{session.Label: "true"}); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

func (w *signInWorld) sessionSecret(t *testing.T, sid string) (*corev1.Secret, bool) {
	t.Helper()
	var sec corev1.Secret
	err := w.env.Client.Get(context.Background(), types.NamespacedName{Namespace: w.ns, Name: session.SecretName(sid)}, &sec)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return &sec, err == nil
}

func (w *signInWorld) whoami(t *testing.T, sid string) answer {
	t.Helper()
	return do(t, http.MethodGet, w.hook+"/test/whoami", &http.Cookie{Name: webhook.SessionCookie, Value: sid})
}

func TestDiscordSignIn(t *testing.T) {
	w := startSignInWorld(t)
	ctx := context.Background()
	// secrets collects every secret value the flows see, to look for in the
	// log at the end.
	var secrets []string
	keep := func(vs ...string) {
		for _, v := range vs {
			if v != "" {
				secrets = append(secrets, v)
			}
		}
	}
	signIn := func(t *testing.T, short string) string {
		t.Helper()
		f := w.start(t, short)
		a := do(t, http.MethodGet, f.callback.String(), f.claim)
		c := a.cookies[webhook.SessionCookie]
		if a.status != http.StatusFound || c == nil {
			t.Fatalf("callback answered %d:\n%s", a.status, a.body)
		}
		keep(c.Value, f.callback.Query().Get("code"), f.callback.Query().Get("state"))
		if sec, ok := w.sessionSecret(t, c.Value); ok {
			keep(string(sec.Data[oauth.KeyAccessToken]), string(sec.Data[oauth.KeyRefreshToken]))
		}
		return c.Value
	}

	t.Run("a sign-in goes to Discord with PKCE S256 and a state bound to the link", func(t *testing.T) {
		f := w.start(t, "Ab3dE5gH9k")
		q := f.authorize.Query()
		if f.authorize.Path != "/discord/oauth2/authorize" || q.Get("scope") != "identify" || q.Get("client_id") != "1234567890" ||
			q.Get("redirect_uri") != w.hook+"/auth/discord/callback" || q.Get("code_challenge_method") != "S256" || q.Get("response_type") != "code" {
			t.Fatalf("authorize URL %s", f.authorize)
		}
		var st corev1.Secret
		if err := w.env.Client.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: oauth.StateSecretName(q.Get("state"))}, &st); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(st.Data["verifier"])
		if got := base64.RawURLEncoding.EncodeToString(sum[:]); got != q.Get("code_challenge") {
			t.Fatal("the code challenge is not S256 of the state's verifier")
		}
		digest := sha256.Sum256([]byte("Ab3dE5gH9k"))
		if string(st.Data["claim-digest"]) != hex.EncodeToString(digest[:]) || strings.Contains(string(st.Data["claim-digest"]), "Ab3dE5gH9k") {
			t.Fatal("the state does not hold the digest of the short token (and only it)")
		}
		c := f.claim
		if c.Value != "Ab3dE5gH9k" || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/auth/discord/callback" || c.MaxAge != 600 {
			t.Fatalf("claim cookie %+v", c)
		}
		keep(q.Get("state"), string(st.Data["verifier"]))
	})

	t.Run("the callback makes a session, sets its cookie and returns to the link", func(t *testing.T) {
		f := w.start(t, "Ab3dE5gH9k")
		before := w.sessionCount(t)
		a := do(t, http.MethodGet, f.callback.String(), f.claim)
		if a.status != http.StatusFound || a.location.String() != w.hook+"/r/Ab3dE5gH9k" {
			t.Fatalf("callback answered %d to %s:\n%s", a.status, a.location, a.body)
		}
		c := a.cookies[webhook.SessionCookie]
		if c == nil || len(c.Value) != 43 || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.MaxAge != 30*24*3600 {
			t.Fatalf("session cookie %+v", c)
		}
		if gone := a.cookies["sb_claim"]; gone == nil || gone.MaxAge >= 0 {
			t.Fatalf("the claim cookie was not cleared: %+v", gone)
		}
		sid := c.Value
		sec, ok := w.sessionSecret(t, sid)
		if !ok || w.sessionCount(t) != before+1 || sec.Labels[session.UserLabel] != nellyID || string(sec.Data[session.KeyAvatar]) != "8342729096ea3675442027381ff50dfe" {
			t.Fatalf("session Secret %v, %d sessions (was %d)", ok, w.sessionCount(t), before)
		}
		keep(sid, f.callback.Query().Get("code"), string(sec.Data[oauth.KeyAccessToken]), string(sec.Data[oauth.KeyRefreshToken]))
		me := w.whoami(t, sid)
		if me.status != http.StatusOK || !strings.Contains(me.body, `"id":"`+nellyID+`"`) {
			t.Fatalf("whoami answered %d: %s", me.status, me.body)
		}

		// Discord's redirect played again: the state is spent.
		again := do(t, http.MethodGet, f.callback.String(), f.claim)
		if again.status != http.StatusForbidden || again.cookies[webhook.SessionCookie] != nil || w.sessionCount(t) != before+1 {
			t.Fatalf("a second callback with the state answered %d, %d sessions", again.status, w.sessionCount(t))
		}
	})

	t.Run("a verifier that does not match the challenge is refused by Discord", func(t *testing.T) {
		f := w.start(t, "Ab3dE5gH9k")
		var st corev1.Secret
		if err := w.env.Client.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: oauth.StateSecretName(f.callback.Query().Get("state"))}, &st); err != nil {
			t.Fatal(err)
		}
		st.Data["verifier"] = []byte(strings.Repeat("x", 64))
		if err := w.env.Client.Update(ctx, &st); err != nil {
			t.Fatal(err)
		}
		before := w.sessionCount(t)
		a := do(t, http.MethodGet, f.callback.String(), f.claim)
		if a.status != http.StatusUnauthorized || a.cookies[webhook.SessionCookie] != nil || w.sessionCount(t) != before {
			t.Fatalf("callback with a wrong verifier answered %d:\n%s", a.status, a.body)
		}
	})

	t.Run("without the claim cookie the callback signs in and says to open the link again", func(t *testing.T) {
		for name, cookie := range map[string]*http.Cookie{"no cookie": nil, "another link's cookie": {Name: "sb_claim", Value: "Zz9yX8wV7u"}} {
			f := w.start(t, "Ab3dE5gH9k")
			var a answer
			if cookie == nil {
				a = do(t, http.MethodGet, f.callback.String())
			} else {
				a = do(t, http.MethodGet, f.callback.String(), cookie)
			}
			if a.status != http.StatusOK || a.cookies[webhook.SessionCookie] == nil || !strings.Contains(a.body, "Open your link again") {
				t.Fatalf("%s: callback answered %d:\n%s", name, a.status, a.body)
			}
			keep(a.cookies[webhook.SessionCookie].Value, f.callback.Query().Get("code"))
		}
	})

	t.Run("a denied consent is a page, and no session", func(t *testing.T) {
		w.discord.SetConsentUser(sandbox.DiscordUser{})
		defer w.discord.SetConsentUser(sandbox.DiscordUser{ID: nellyID, Username: "nelly"})
		f := w.start(t, "Ab3dE5gH9k")
		before := w.sessionCount(t)
		a := do(t, http.MethodGet, f.callback.String(), f.claim)
		if a.status != http.StatusForbidden || !strings.Contains(a.body, "access_denied") || w.sessionCount(t) != before {
			t.Fatalf("denied consent answered %d:\n%s", a.status, a.body)
		}
	})

	t.Run("a forged state is refused", func(t *testing.T) {
		a := do(t, http.MethodGet, w.hook+"/auth/discord/callback?code=x&state=forged")
		if a.status != http.StatusForbidden || a.cookies[webhook.SessionCookie] != nil {
			t.Fatalf("forged state answered %d", a.status)
		}
	})

	t.Run("eight requests on a session near its token's expiry make one token call", func(t *testing.T) {
		sid := signIn(t, "Ab3dE5gH9k")
		// Discord's tokens live 7 days; 5 minutes before that the next
		// request refreshes (RefreshBefore is 10 minutes).
		w.clk.Step(7*24*time.Hour - 5*time.Minute)
		w.box.ResetCalls()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if a := w.whoami(t, sid); a.status != http.StatusOK || !strings.Contains(a.body, nellyID) {
					t.Errorf("whoami answered %d: %s", a.status, a.body)
				}
			})
		}
		wg.Wait()
		if n := w.box.Calls(sandbox.DiscordToken); n != 1 {
			t.Fatalf("%d token calls, want 1", n)
		}
		sec, _ := w.sessionSecret(t, sid)
		keep(string(sec.Data[oauth.KeyAccessToken]), string(sec.Data[oauth.KeyRefreshToken]))
	})

	t.Run("logout deletes the session and clears the cookie", func(t *testing.T) {
		sid := signIn(t, "Ab3dE5gH9k")
		a := do(t, http.MethodPost, w.hook+"/auth/logout", &http.Cookie{Name: webhook.SessionCookie, Value: sid})
		c := a.cookies[webhook.SessionCookie]
		if a.status != http.StatusNoContent || c == nil || c.Value != "" || c.MaxAge >= 0 {
			t.Fatalf("logout answered %d with cookie %+v", a.status, c)
		}
		if _, ok := w.sessionSecret(t, sid); ok {
			t.Fatal("the session Secret is still there")
		}
		if me := w.whoami(t, sid); me.status != http.StatusUnauthorized {
			t.Fatalf("whoami after logout answered %d", me.status)
		}
		if a := do(t, http.MethodPost, w.hook+"/auth/logout"); a.status != http.StatusNoContent {
			t.Fatalf("logout without a cookie answered %d", a.status)
		}
	})

	t.Run("a sixth sign-in of one user ends the oldest session", func(t *testing.T) {
		var sids []string
		for range 6 {
			w.clk.Step(time.Second) // sessions are ordered by when they were made
			sids = append(sids, signIn(t, "Ab3dE5gH9k"))
		}
		var list corev1.SecretList
		if err := w.env.Client.List(ctx, &list, client.InNamespace(w.ns), client.MatchingLabels{session.UserLabel: nellyID}); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 5 {
			t.Fatalf("%d sessions of one user, want 5", len(list.Items))
		}
		if _, ok := w.sessionSecret(t, sids[0]); ok {
			t.Fatal("the oldest of the six sessions is still there")
		}
		for _, sid := range sids[1:] {
			if me := w.whoami(t, sid); me.status != http.StatusOK {
				t.Fatalf("a newer session answered %d", me.status)
			}
		}
		if me := w.whoami(t, sids[0]); me.status != http.StatusUnauthorized {
			t.Fatalf("the ended session answered %d", me.status)
		}
	})

	t.Run("no session id, code, state, verifier or token in any log line", func(t *testing.T) {
		logs := w.logs.Text()
		if len(secrets) < 10 || logs == "" {
			t.Fatalf("%d secrets collected, %d bytes of log: the scan would prove nothing", len(secrets), len(logs))
		}
		for _, s := range secrets {
			if strings.Contains(logs, s) {
				t.Fatalf("a secret of %d characters is in the log", len(s))
			}
		}
	})
}
