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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/contract/session"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/pages"
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
var signInWords = callbackWords{restart: pages.OpenLinkAgain, who: pages.Discord}

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

// The signin family is a share link's Discord sign-in: its start, its
// callback and the routes of a signed-in receiver's session.
var _ = family(Family{Name: "signin", Routes: func(d Deps) []Route {
	return []Route{
		{Pattern: "GET " + signInCallbackPath, Handler: signInCallback(d)},
		{Pattern: "POST /auth/logout", Handler: sameOriginOnly(d, logout(d))},
		{Pattern: "GET " + discordMePath, Handler: discordMe(d)},
		{Pattern: "POST " + logoutEverywherePath, Handler: sameOriginOnly(d, logoutEverywhere(d))},
	}
}})

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
	browser := browserOrNew(r)
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
	setBrowserCookie(w, browser)
	http.SetCookie(w, &http.Cookie{Name: claimCookie, Value: c.Short, Path: signInCallbackPath,
		MaxAge: int(oauth.StateTTL / time.Second), HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
	privatePage(w)
	http.Redirect(w, r, authorizeURL(d, p, d.signInRedirectURI(), creds.ID, state, verifier), http.StatusFound)
	return nil
}

// setBrowserCookie binds the flows browser starts to it. It is set again
// at each start, so it lasts as long as the browser's newest state and no
// longer: it identifies a sign-in in progress, nothing more.
func setBrowserCookie(w http.ResponseWriter, browser string) {
	http.SetCookie(w, &http.Cookie{Name: BrowserCookie, Value: browser, Path: "/",
		MaxAge: int(oauth.StateTTL / time.Second), HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
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

// browserOrNew is the request's browser-binding id, or a new one for a
// browser that carries none: a flow anyone may start is bound to it
// (setBrowserCookie).
func browserOrNew(r *http.Request) string {
	if id := browserID(r); id != "" {
		return id
	}
	return capability.Random(browserIDBytes)
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
