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
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/switchboard-dev/switchboard/internal/contract/session"
)

// The session routes of the sign-in family (issue 37 §2): the page a
// share link's receiver signed in on asks who is signed in (seed 003
// /api/discord/me) and signs them out everywhere (seed 003
// deleteAllSessions). The session cookie is the credential: only its
// holder learns or ends anything.
//
//	GET  /auth/discord/me         → 200 the Discord user and the session's expiry; 401 without a live session
//	POST /auth/logout-everywhere  → every session of that Discord user deleted, cookie cleared, 204

const (
	discordMePath        = "/auth/discord/me"
	logoutEverywherePath = "/auth/logout-everywhere"
)

// meAnswer is what GET /auth/discord/me answers: who holds the session and
// until when. Never the session id, nor a Discord token.
type meAnswer struct {
	User meUser `json:"user"`
	// SignedInAt and ExpiresAt are RFC 3339 UTC, to the second (the
	// cookie's Max-Age is in seconds too); a session never slides, so
	// ExpiresAt is the cookie's end.
	SignedInAt string `json:"signedInAt"`
	ExpiresAt  string `json:"expiresAt"`
}

// meUser is the Discord account, in the fields of Discord's own
// GET /users/@me that the session keeps.
type meUser struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	// Avatar is the avatar hash, null for the default avatar (as Discord
	// says it).
	Avatar *string `json:"avatar"`
}

func rfc3339(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// discordMe answers the session cookie's holder who they are. It needs no
// CSRF check: it changes nothing a person would notice (a read writes
// last_seen_at and may refresh the Discord grant, as every use of the
// session does); another site's fetch does not carry the SameSite=Lax
// cookie, and its top-level navigation here shows the answer to the person
// in their own browser only; and no answer of this server has a CORS
// header, so no other origin's script reads it.
func discordMe(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		s, err := d.CurrentSession(r)
		switch {
		case errors.Is(err, ErrSignInNotConfigured):
			return Errorf(http.StatusNotFound, "no such endpoint")
		case errors.Is(err, session.ErrNoSession):
			return Errorf(http.StatusUnauthorized, "not signed in with Discord")
		case err != nil:
			return SessionUnavailable(err)
		}
		a := meAnswer{User: meUser{ID: s.UserID, Username: s.Username},
			SignedInAt: rfc3339(s.CreatedAt), ExpiresAt: rfc3339(s.ExpiresAt)}
		if s.Avatar != "" {
			a.User.Avatar = &s.Avatar
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		WriteJSON(w, http.StatusOK, a)
		return nil
	}
}

// logoutEverywhere ends every session of the cookie holder's Discord user
// (every browser they signed in with on this server) and clears the
// cookie: 204. Without a live session it is logout's answer: 204, nothing
// deleted. A delete the API server refuses is 503 with the caller's own
// session still standing (session.Store.DeleteAll deletes it last), so
// the retry finds the rest.
func logoutEverywhere(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		s, err := d.CurrentSession(r)
		switch {
		case errors.Is(err, session.ErrNoSession), errors.Is(err, ErrSignInNotConfigured):
		case err != nil:
			return SessionUnavailable(err)
		default:
			gone, err := d.SignIn.Sessions.DeleteAll(r.Context(), s)
			if err != nil {
				return Unavailable(DefaultRetryAfter, "not every session could be ended; retry").WithCause(err)
			}
			logr.FromContextOrDiscard(r.Context()).Info("signed a Discord user out everywhere", "user", s.UserID, "sessions", gone)
		}
		http.SetCookie(w, sessionCookie("", -1))
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// sameOriginOnly guards a route that ends sessions against another site's
// page (CSRF). The SameSite=Lax session cookie already stays behind on
// another site's POST; on top of that, a request is refused with 403, and
// next not run, when a browser says it came from elsewhere: Sec-Fetch-Site
// present and neither same-origin nor none (a person's own typing or
// bookmark), or Origin present and not the origin of Deps.PublicURL. A
// sibling subdomain is same-site but another origin, and refused. A
// request with neither header is let through: it is not a browser's
// (browsers send Origin with every POST, Fetch §3.1), or an old browser's,
// whose SameSite=Lax cookie stays behind on another site's POST.
func sameOriginOnly(d Deps, next HandlerFunc) HandlerFunc {
	origin := publicOrigin(d.PublicURL)
	return func(w http.ResponseWriter, r *http.Request) error {
		for _, site := range r.Header.Values("Sec-Fetch-Site") {
			if !strings.EqualFold(site, "same-origin") && !strings.EqualFold(site, "none") {
				return crossSite()
			}
		}
		for _, o := range r.Header.Values("Origin") {
			if origin == "" || !strings.EqualFold(o, origin) {
				return crossSite()
			}
		}
		return next(w, r)
	}
}

func crossSite() *Error {
	return Errorf(http.StatusForbidden, "a request from another site cannot end a session; use this site's own page")
}

// publicOrigin is the origin (RFC 6454) a browser sends in Origin for
// this server's own pages: scheme://host, with the port only when it is
// not the scheme's default. It is "" when publicURL names none, and then
// every Origin is refused.
func publicOrigin(publicURL string) string {
	u, err := url.Parse(publicURL)
	if err != nil || u.Scheme == "" || u.Hostname() == "" {
		return ""
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		return scheme + "://" + net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 literal
	}
	return scheme + "://" + host
}
