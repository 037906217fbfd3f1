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

package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/session"
	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// The signin route family lets a share link's receiver prove a Discord
// account (seed 003 /api/auth/discord/start, /callback, /logout), through
// the OAuth family's machinery: the same state store (a state valid 10
// minutes, consumed once, carrying the PKCE verifier and the digest of the
// link it was started for, the seed's discord:auth:{state}), the same
// authorize URL and the same engine.
//
//	GET  /r/{short} (receive.go)   → StartSignIn: 302 to Discord's consent page
//	GET  /auth/discord/callback    → session made, cookie set, 302 back to /r/{short}
//	POST /auth/logout              → session deleted, cookie cleared, 204

// Cookies of the sign-in.
const (
	// SessionCookie holds the session id, and nothing else.
	SessionCookie = "sb_session"
	// claimCookie holds, for the 10 minutes a sign-in may take, the short
	// token of the link the person is signing in for, so the callback can
	// send them back to it. It is sent only to the callback.
	claimCookie = "sb_claim"
	// BrowserCookie binds the sign-ins a browser starts to it (RFC 9700
	// §4.7.1): a random id whose digest each of its states keeps.
	BrowserCookie = "sb_browser"
)

// SignInTarget is the Target of a sign-in's OAuth state: no OAuth target
// of /oauth/{target}/callback has it, so a sign-in state cannot finish a
// connect, nor a connect state a sign-in.
const SignInTarget = "discord-signin"

// signInWords are what the sign-in callback's refusals say.
var signInWords = callbackWords{links: "sign-ins", restart: "Open your link again to sign in.",
	retry: "Open your link again.", who: "Discord", denied: "Open your link again to sign in."}

// signInCallbackPath is the callback registered with the Discord
// application (its redirect URI is PublicURL + this path).
const signInCallbackPath = "/auth/discord/callback"

// ErrSignInNotConfigured is what CurrentSession answers when the server
// has no Deps.SignIn.
var ErrSignInNotConfigured = errors.New("this server offers no Discord sign-in")

// SignIn is the Discord sign-in. The session store carries all it needs:
// the one OAuth engine (code exchange and refresh), the Discord provider
// (oauth.Discord, scope identify) and the Discord application's client
// Secret.
type SignIn struct {
	Sessions *session.Store
}

// Claim is the link a receiver is signing in for.
type Claim struct {
	Namespace, Name string
	UID             types.UID
	// Short is the link's short token. It is never stored: the state keeps
	// only its digest, and the claim cookie holds it for the browser alone.
	Short string
}

// claimDigest is what the state keeps of a short token (seed 003
// claimTokenDigest).
func claimDigest(short string) string {
	sum := sha256.Sum256([]byte(short))
	return hex.EncodeToString(sum[:])
}

func init() {
	Register(Family{Name: "signin", Routes: func(d Deps) []Route {
		return []Route{
			{Pattern: "GET " + signInCallbackPath, Handler: signInCallback(d)},
			{Pattern: "POST /auth/logout", Handler: logout(d)},
		}
	}})
}

func (d Deps) signInRedirectURI() string {
	return strings.TrimSuffix(d.PublicURL, "/") + signInCallbackPath
}

// CurrentSession returns the session named by the request's cookie,
// refreshed when its Discord token is near expiry. It is
// session.ErrNoSession when there is none (no cookie, or one naming no live
// session), ErrSignInNotConfigured when d.SignIn is nil, and any other
// error when the API server could not be read (worth a 503).
func (d Deps) CurrentSession(r *http.Request) (session.Session, error) {
	if d.SignIn == nil {
		return session.Session{}, ErrSignInNotConfigured
	}
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return session.Session{}, session.ErrNoSession
	}
	return d.SignIn.Sessions.Get(r.Context(), c.Value)
}

// SessionUnavailable is the answer to a session that could not be read
// (CurrentSession's errors other than ErrNoSession and
// ErrSignInNotConfigured): 503, with Retry-After the rest of Discord's
// rate limit when one holds the session's refresh back, else
// DefaultRetryAfter.
func SessionUnavailable(err error) *Error {
	if wait, ok := oauth.IsRateLimited(err); ok {
		return Unavailable(wait, "Discord is limiting requests; retry in %d seconds", retryAfterSeconds(wait)).WithCause(err)
	}
	return Unavailable(DefaultRetryAfter, "cannot read your session; retry later").WithCause(err)
}

// StartSignIn answers with a 302 to Discord's authorize URL: PKCE S256, a
// state bound to the claim (valid 10 minutes, usable once), and a claim
// cookie so that the callback can return to /r/{short}. When it returns an
// error nothing has been written: the error is an *Error (503 when a
// Secret could not be read or written, 500 when the Discord client Secret
// is incomplete) to return from the handler.
func StartSignIn(w http.ResponseWriter, r *http.Request, d Deps, c Claim) error {
	if d.SignIn == nil {
		return Unavailable(DefaultRetryAfter, "Discord sign-in is not configured on this server").WithCause(ErrSignInNotConfigured)
	}
	ctx := r.Context()
	s := d.SignIn.Sessions
	p := s.ProviderOrDefault()
	creds, err := s.Engine.Store.LoadClient(ctx, s.ClientKey)
	if err != nil {
		return Errorf(http.StatusInternalServerError, "Discord sign-in is not configured correctly; ask the operator").WithCause(err)
	}
	verifier := pkceVerifier(p)
	browser := browserID(r)
	if browser == "" {
		browser = capability.Random(browserIDBytes)
	}
	state, err := d.signInStates().Create(ctx, oauth.State{Target: SignInTarget, Namespace: c.Namespace, Name: c.Name,
		ResourceUID: c.UID, Verifier: verifier, ClaimDigest: claimDigest(c.Short), BrowserDigest: browserDigest(browser)})
	var tooMany *oauth.TooManyStartsError
	switch {
	case errors.As(err, &tooMany):
		e := Errorf(http.StatusTooManyRequests, "too many sign-ins for this link are in progress in other browsers; retry in %d seconds",
			retryAfterSeconds(tooMany.RetryAfter))
		e.RetryAfter = retryAfterSeconds(tooMany.RetryAfter)
		return e
	case err != nil:
		return Unavailable(DefaultRetryAfter, "the sign-in could not be started; retry later").WithCause(err)
	}
	maxAge := int(oauth.StateTTL / time.Second)
	// Set again at each start, so it lasts as long as the browser's newest
	// state and no longer: it identifies a sign-in in progress, nothing
	// more.
	http.SetCookie(w, &http.Cookie{Name: BrowserCookie, Value: browser, Path: "/",
		MaxAge: maxAge, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
	http.SetCookie(w, &http.Cookie{Name: claimCookie, Value: c.Short, Path: signInCallbackPath,
		MaxAge: maxAge, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
	privatePage(w)
	http.Redirect(w, r, authorizeURL(d, p, d.signInRedirectURI(), creds.ID, state, verifier), http.StatusFound)
	return nil
}

// signInCallback finishes a sign-in: the state is consumed (once; a
// second callback with it is refused), the code exchanged with the state's
// PKCE verifier, the user read from Discord, and a session made. The
// browser then goes back to the link when its claim cookie is the one the
// state was started for; without it (another browser, a cookie lost) it
// is told to open the link again (seed 003: the callback copes with a
// missing cookie).
func signInCallback(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if d.SignIn == nil {
			return htmlError(w, http.StatusNotFound, "Not found", "This server does not offer a Discord sign-in.")
		}
		ctx := r.Context()
		q := r.URL.Query()
		s := d.SignIn.Sessions
		p := s.ProviderOrDefault()
		limits := s.Engine.RateLimits()
		// A Discord limit known to hold is waited out before the state is
		// touched: nothing is sent, nothing spent.
		if wait := max(limits.Wait(p.TokenUpstream, p.TokenPath), limits.Wait(upstream.Discord, usersMePath)); wait > 0 && p.RememberRateLimits {
			return discordBusy(w, wait)
		}
		states := d.signInStates()
		st, ok, err := consumeState(w, r, states, browserDigestOf(r), SignInTarget, signInWords)
		if !ok {
			return err
		}
		// A 429 puts the state back (with the grant, once there is one), so
		// the same callback reloaded after the wait finishes the sign-in.
		limited := func(err error, grant *oauth.Token) (bool, error) {
			wait, ok := oauth.IsRateLimited(err)
			if !ok {
				return false, nil
			}
			st.Pending = grant
			if rerr := states.Restore(ctx, q.Get("state"), st); rerr != nil {
				return true, htmlErrorCause(w, r, http.StatusServiceUnavailable, "Try again",
					"Discord is limiting sign-ins. Open your link again in a moment.", errors.Join(err, rerr))
			}
			return true, discordBusy(w, wait)
		}
		tok := st.Pending
		if tok == nil {
			creds, err := s.Engine.Store.LoadClient(ctx, s.ClientKey)
			if err != nil {
				return htmlErrorCause(w, r, http.StatusInternalServerError, "Not configured", "The Discord client Secret is missing or incomplete.", err)
			}
			t, err := s.Engine.Exchange(ctx, p, creds, q.Get("code"), d.signInRedirectURI(), st.Verifier)
			if done, herr := limited(err, nil); done {
				return herr
			}
			switch {
			case errors.Is(err, oauth.ErrReauthRequired):
				return htmlError(w, http.StatusUnauthorized, "The sign-in code was refused", "Discord did not accept the code. Open your link again to sign in.")
			case err != nil:
				return htmlErrorCause(w, r, http.StatusBadGateway, "Discord did not answer", "Open your link again in a moment.", err)
			}
			tok = &t
		}
		u, err := discordUser(ctx, d.Outbound, limits, tok.AccessToken)
		if done, herr := limited(err, tok); done {
			return herr
		}
		if err != nil {
			return htmlErrorCause(w, r, http.StatusBadGateway, "Discord did not answer", "Open your link again in a moment.", err)
		}
		sid, err := s.Create(ctx, u, *tok)
		if err != nil {
			return htmlErrorCause(w, r, http.StatusServiceUnavailable, "Try again", "The session could not be saved. Open your link again.", err)
		}
		http.SetCookie(w, sessionCookie(sid, int(s.TTLOrDefault()/time.Second)))
		// The claim cookie has done its work whatever happens next.
		http.SetCookie(w, &http.Cookie{Name: claimCookie, Path: signInCallbackPath, MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
		privatePage(w)
		if c, err := r.Cookie(claimCookie); err == nil && st.ClaimDigest != "" && capability.Equal(claimDigest(c.Value), st.ClaimDigest) {
			http.Redirect(w, r, strings.TrimSuffix(d.PublicURL, "/")+"/r/"+url.PathEscape(c.Value), http.StatusFound)
			return nil
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		return signedInPage.Execute(w, u)
	}
}

// browserIDBytes is a browser-binding id's entropy: 256 bits, so nobody
// guesses another browser's and displaces its sign-ins.
const browserIDBytes = 32

// browserID is the browser-binding id the request carries, or "" when it
// carries none that this server could have made.
func browserID(r *http.Request) string {
	c, err := r.Cookie(BrowserCookie)
	if err != nil || !validBrowserID.MatchString(c.Value) {
		return ""
	}
	return c.Value
}

// validBrowserID matches what capability.Random(browserIDBytes) hands out.
var validBrowserID = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// browserDigest is what a state keeps of a browser-binding id: a digest
// that fits a label value, so reading state Secrets yields no cookie.
func browserDigest(id string) string {
	sum := sha256.Sum256([]byte("sb_browser:" + id))
	return hex.EncodeToString(sum[:16])
}

// browserDigestOf is the digest of the request's browser-binding id, or
// "" without one.
func browserDigestOf(r *http.Request) string {
	if id := browserID(r); id != "" {
		return browserDigest(id)
	}
	return ""
}

// signInStates are the OAuth states of sign-ins, on the session store's
// clock.
func (d Deps) signInStates() *oauth.States {
	st := d.oauthStates()
	if d.SignIn != nil {
		st.Clock = d.SignIn.Sessions.Clock
	}
	return st
}

// sessionCookie carries the session id: HttpOnly (no script reads it),
// Secure (never sent in clear), SameSite=Lax (sent when the person follows
// a link here, as from Discord's consent page, not with other sites'
// requests), for the whole site. maxAge -1 clears it.
func sessionCookie(sid string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: SessionCookie, Value: sid, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode}
}

// logout ends the session the cookie names (seed 003 /api/auth/logout) and
// clears the cookie: 204, with or without a session. It is a POST, which a
// SameSite=Lax cookie does not accompany from another site, so a page
// elsewhere cannot sign a person out.
func logout(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" && d.SignIn != nil {
			if err := d.SignIn.Sessions.Delete(r.Context(), c.Value); err != nil {
				return Unavailable(DefaultRetryAfter, "the session could not be ended; retry").WithCause(err)
			}
		}
		http.SetCookie(w, sessionCookie("", -1))
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// usersMePath is Discord's Get Current User.
const usersMePath = "/api/users/@me"

// discordBusy tells the person Discord is limiting requests and when to
// reload: 503 with Retry-After, the sign-in kept.
func discordBusy(w http.ResponseWriter, wait time.Duration) error {
	secs := retryAfterSeconds(wait)
	privatePage(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	w.WriteHeader(http.StatusServiceUnavailable)
	return errorPage.Execute(w, map[string]any{"Title": "Discord is busy", "Status": http.StatusServiceUnavailable,
		"Message": fmt.Sprintf("Discord is limiting sign-ins right now. Reload this page in %d seconds: your sign-in is kept.", secs)})
}

// discordUser reads the account of an access token: GET /users/@me
// (discord-api-docs docs/resources/user, "Get Current User", which the
// identify scope allows). A limit remembered in limits is waited out
// without a request; a 429 is remembered there.
func discordUser(ctx context.Context, out *outbound.Client, limits *oauth.RateLimits, accessToken string) (session.User, error) {
	if wait := limits.Wait(upstream.Discord, usersMePath); wait > 0 {
		return session.User{}, fmt.Errorf("read the Discord user: %w", oauth.RateLimited(upstream.Discord, usersMePath, wait, false))
	}
	resp, err := out.Do(ctx, outbound.Request{Upstream: upstream.Discord, Path: usersMePath,
		Header: http.Header{"Authorization": {"Bearer " + accessToken}, "Accept": {"application/json"}}})
	if oe, ok := outbound.Classify(err); ok && oe.Status == http.StatusTooManyRequests {
		wait := limits.Observe(upstream.Discord, usersMePath, oe.Status, oe.Header, oe.Body)
		return session.User{}, fmt.Errorf("read the Discord user: %w", oauth.RateLimited(upstream.Discord, usersMePath, wait, true))
	}
	if err != nil {
		return session.User{}, fmt.Errorf("read the Discord user: %w", err)
	}
	limits.Observe(upstream.Discord, usersMePath, resp.Status, resp.Header, nil)
	var me struct {
		ID       string  `json:"id"`
		Username string  `json:"username"`
		Avatar   *string `json:"avatar"`
	}
	if err := json.Unmarshal(resp.Body, &me); err != nil {
		return session.User{}, outbound.PermanentError(upstream.Discord, "users/@me answer is not JSON", err)
	}
	u := session.User{ID: me.ID, Username: me.Username}
	if me.Avatar != nil {
		u.Avatar = *me.Avatar
	}
	if u.ID == "" {
		return session.User{}, outbound.PermanentError(upstream.Discord, "users/@me answer has no id", nil)
	}
	return u, nil
}

var signedInPage = template.Must(template.New("signed-in").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Signed in</title></head>
<body>
<h1>✅ Signed in</h1>
<p>You are signed in with Discord as {{.Username}}. Open your link again to receive the file.</p>
</body></html>
`))
