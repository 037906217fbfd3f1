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
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/contract/session"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/pages"
	"github.com/switchboard-dev/switchboard/internal/upstream"
)

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
			return showPage(w, r, refusal(http.StatusNotFound, pages.NotFoundTitle, pages.Say(pages.NoSignInLine)), nil)
		}
		c, answered, err := beginSignInCallback(w, r, d)
		if answered {
			return err
		}
		tok, answered, err := c.grant()
		if answered {
			return err
		}
		u, err := discordUser(r.Context(), d.Outbound, c.limits, tok.AccessToken)
		if done, herr := c.limited(err, tok); done {
			return herr
		}
		if err != nil {
			return showPage(w, r, discordDown(), err)
		}
		return c.signIn(u, tok)
	}
}

// signInCall is one sign-in callback whose state is consumed.
type signInCall struct {
	w      http.ResponseWriter
	r      *http.Request
	d      Deps
	s      *session.Store
	p      oauth.Provider
	limits *oauth.RateLimits
	states *oauth.States
	st     oauth.State
}

// beginSignInCallback consumes the callback's state. When answered is
// true the answer is written (err is what the handler returns): Discord
// is limiting requests, or the state is not valid.
func beginSignInCallback(w http.ResponseWriter, r *http.Request, d Deps) (*signInCall, bool, error) {
	s := d.SignIn.Sessions
	c := &signInCall{w: w, r: r, d: d, s: s, p: s.ProviderOrDefault(), limits: s.Engine.RateLimits()}
	// A Discord limit known to hold is waited out before the state is
	// touched: nothing is sent, nothing spent.
	if wait := max(c.limits.Wait(c.p.TokenUpstream, c.p.TokenPath), c.limits.Wait(upstream.Discord, usersMePath)); wait > 0 && c.p.RememberRateLimits {
		return nil, true, discordBusy(w, r, wait)
	}
	c.states = d.signInStates()
	st, ok, err := consumeState(w, r, c.states, browserDigestOf(r), SignInTarget, signInWords)
	if !ok {
		return nil, true, err
	}
	c.st = st
	return c, false, nil
}

// limited answers Discord's 429: it puts the state back (with the grant,
// once there is one), so the same callback reloaded after the wait
// finishes the sign-in. done reports that err was a 429 and the answer is
// written.
func (c *signInCall) limited(err error, grant *oauth.Token) (done bool, _ error) {
	wait, ok := oauth.IsRateLimited(err)
	if !ok {
		return false, nil
	}
	c.st.Pending = grant
	if rerr := c.states.Restore(c.r.Context(), c.r.URL.Query().Get("state"), c.st); rerr != nil {
		return true, showPage(c.w, c.r, refusal(http.StatusServiceUnavailable, pages.DiscordBusyTitle, pages.Say(pages.DiscordBusyLine), pages.Say(pages.OpenLinkSoon)), errors.Join(err, rerr))
	}
	return true, discordBusy(c.w, c.r, wait)
}

// grant is the grant the state keeps from a callback Discord limited, or
// the callback's code exchanged with the state's PKCE verifier. When
// answered is true the answer is written.
func (c *signInCall) grant() (*oauth.Token, bool, error) {
	if c.st.Pending != nil {
		return c.st.Pending, false, nil
	}
	ctx, w, r := c.r.Context(), c.w, c.r
	creds, err := c.s.Engine.Store.LoadClient(ctx, c.s.ClientKey)
	if err != nil {
		return nil, true, showPage(w, r, notSetUp(), err)
	}
	t, err := c.s.Engine.Exchange(ctx, c.p, creds, r.URL.Query().Get("code"), c.d.signInRedirectURI(), c.st.Verifier)
	if done, herr := c.limited(err, nil); done {
		return nil, true, herr
	}
	switch {
	case errors.Is(err, oauth.ErrReauthRequired):
		return nil, true, showPage(w, r, refusal(http.StatusUnauthorized, pages.CodeRefusedTitle, pages.Say(pages.CodeRefusedLine, pages.Discord), pages.Say(pages.OpenLinkAgain)), nil)
	case err != nil:
		return nil, true, showPage(w, r, discordDown(), err)
	}
	return &t, false, nil
}

// signIn makes the session of u and sets its cookie, then sends the
// browser back to the link when its claim cookie is the one the state was
// started for, or shows a page that says to open the link again.
func (c *signInCall) signIn(u session.User, tok *oauth.Token) error {
	w, r := c.w, c.r
	sid, err := c.s.Create(r.Context(), u, *tok)
	if err != nil {
		return showPage(w, r, refusal(http.StatusServiceUnavailable, pages.TryAgainTitle, pages.Say(pages.SessionFailedLine), pages.Say(pages.OpenLinkAgain)), err)
	}
	http.SetCookie(w, sessionCookie(sid, int(c.s.TTLOrDefault()/time.Second)))
	// The claim cookie has done its work whatever happens next.
	http.SetCookie(w, &http.Cookie{Name: claimCookie, Path: signInCallbackPath, MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
	privatePage(w)
	if cc, err := r.Cookie(claimCookie); err == nil && c.st.ClaimDigest != "" && capability.Equal(claimDigest(cc.Value), c.st.ClaimDigest) {
		// Back to this server's own /r/ route: the cookie's value, proven
		// by its digest, is one path-escaped segment of it.
		http.Redirect(w, r, strings.TrimSuffix(c.d.PublicURL, "/")+"/r/"+url.PathEscape(cc.Value), http.StatusFound) //nolint:gosec // G710: see above
		return nil
	}
	return showPage(w, r, pages.Page{Status: http.StatusOK, Mark: pages.Done, Title: pages.Say(pages.SignedInTitle),
		Lines: []pages.Line{pages.Say(pages.SignedInLine, pages.Strong(u.Username))}}, nil)
}

// discordDown is the page when Discord did not answer: the link, opened
// again in a moment, starts a new sign-in.
func discordDown() pages.Page {
	p := refusal(http.StatusBadGateway, pages.ProviderDownTtl, pages.Say(pages.OpenLinkSoon))
	p.Title = pages.Say(pages.ProviderDownTtl, pages.Discord)
	return p
}
