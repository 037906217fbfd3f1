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
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/pages"
)

// The signup route family starts self-service sign-up (seed 000 §1.1,
// §3.1.1: a researcher opens the service, allows access, and is done):
//
//	GET /signup/{target}/{namespace}/{name}  → 302 to the provider's consent page
//
// The callback is the connect flow's (/oauth/{target}/callback), so the
// provider knows one redirect URI. Whoever opens the URL may start, so
// nothing here is a capability: a start is bounded instead — a rate per
// client address and one overall (in this replica), at most
// SignUpLimits.Pending browsers with a flow in progress per sign-up, and
// the sign-up's own maxIntegrations, which the manager checks when the
// grant arrives. Past a bound the person gets a page that says so, and
// nothing is created. The route reads only what the sign-up's controller
// published in this server's namespace (oauth.PublishSignUp) and writes
// only the state there, as the connect route does.

// SignUpLimits bound the starts of sign-ups in one webhook replica.
type SignUpLimits struct {
	// PerAddress is how many starts one client address may make an hour
	// (zero: no limit).
	PerAddress int
	// Overall is how many starts all addresses together may make an hour
	// (zero: no limit).
	Overall int
	// Pending bounds the browsers with a sign-up in progress (a state not
	// yet used or expired) for one sign-up, across replicas: a start from
	// a further browser is refused with the wait until a slot frees up
	// (DefaultSignUpsPending when zero). Each browser keeps at most 3
	// states, so a sign-up holds at most 3 × Pending.
	Pending int
}

// Defaults for SignUpLimits: a person signs up once, and a few tries from
// one address (an office behind one NAT) pass; a hundred strangers an
// hour is more than a lab's sign-up sees, and bounds what a crawler costs.
const (
	DefaultSignUpsPerAddress = 10
	DefaultSignUpsOverall    = 100
	DefaultSignUpsPending    = 100
)

// signUpLimiters are SignUpLimits as token buckets: a client's, and one
// for everyone (the key "").
type signUpLimiters struct {
	perAddress, overall *limiter
	trustForwarded      bool
	pending             int
}

func newSignUpLimiters(l SignUpLimits, trustForwarded bool) *signUpLimiters {
	perHour := func(n int) RateLimit {
		return RateLimit{Rate: float64(n) / time.Hour.Seconds(), Burst: max(1, n/2)}
	}
	pending := l.Pending
	if pending <= 0 {
		pending = DefaultSignUpsPending
	}
	return &signUpLimiters{perAddress: newLimiter(perHour(l.PerAddress)), overall: newLimiter(perHour(l.Overall)),
		trustForwarded: trustForwarded, pending: pending}
}

// allow takes a start for r's client address, then one from the overall
// bucket; busy tells which bound stopped it.
func (s *signUpLimiters) allow(r *http.Request) (wait time.Duration, busy bool, ok bool) {
	if wait, ok := s.perAddress.allow(clientIP(r, s.trustForwarded)); !ok {
		return wait, false, false
	}
	if wait, ok := s.overall.allow(""); !ok {
		return wait, true, false
	}
	return 0, false, true
}

// The signup family is a NotionSignup's public start page.
var _ = family(Family{Name: "signup", Routes: oneRoute("GET /signup/{target}/{namespace}/{name}", signUpStart)})

// signUpStart sends a person to the consent page of a sign-up that is
// open, with a state marked SignUp, bound to the browser, valid 10
// minutes, usable once.
func signUpStart(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		name := r.PathValue("target")
		target, ok := d.lookupOAuthTarget(name)
		ns, signUp := r.PathValue("namespace"), r.PathValue("name")
		if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(signUp)) > 0 {
			return showPage(w, r, signUpNotFound(), nil)
		}
		if wait, busy, ok := d.signUpLimits.allow(r); !ok {
			line := pages.Say(pages.TooManyLine)
			if busy {
				line = pages.Say(pages.SignUpBusyLine)
			}
			return showPage(w, r, retrying(http.StatusTooManyRequests, retryAfterSeconds(wait), pages.TryAgainTitle, line), nil)
		}
		ctx := r.Context()
		pub, found, err := oauth.ReadSignUp(ctx, d.Client, d.StateNamespace, name, ns, signUp)
		switch {
		case err != nil:
			return showPage(w, r, startFailed(), err)
		case !found:
			return showPage(w, r, signUpNotFound(), nil)
		case pub.Closed:
			return showPage(w, r, signUpClosed(), nil)
		}
		provider := target.Provider
		verifier := pkceVerifier(provider)
		browser := browserOrNew(r)
		states := d.oauthStates()
		states.MaxBrowsers = d.signUpLimits.pending
		state, err := states.Create(ctx, oauth.State{Target: name, Namespace: ns, Name: signUp, ResourceUID: pub.UID,
			Verifier: verifier, BrowserDigest: browserDigest(browser), SignUp: true})
		var tooMany *oauth.TooManyStartsError
		switch {
		case errors.As(err, &tooMany):
			return showPage(w, r, retrying(http.StatusTooManyRequests, retryAfterSeconds(tooMany.RetryAfter), pages.TryAgainTitle,
				pages.Say(pages.SignUpBusyLine)), nil)
		case err != nil:
			return showPage(w, r, startFailed(), err)
		}
		setBrowserCookie(w, browser)
		privatePage(w)
		http.Redirect(w, r, authorizeURL(d, provider, d.redirectURI(name), pub.ClientID, state, verifier), http.StatusFound)
		return nil
	}
}

// signUpNotFound is the answer for a start URL that names no published
// sign-up (a wrong address, or a sign-up deleted).
func signUpNotFound() pages.Page {
	return refusal(http.StatusNotFound, pages.SignUpNotFoundTitle, pages.Say(pages.SignUpNotFoundLine))
}

// signUpClosed is the answer for a closed sign-up, at the start and at
// the callback of a flow started before it closed.
func signUpClosed() pages.Page {
	p := refusal(http.StatusForbidden, pages.SignUpClosedTitle, pages.Say(pages.SignUpClosedLine))
	p.Mark = pages.Info
	return p
}

// signUpFull is the answer when the sign-up made as many integrations as
// it may and the person's workspace has none: nothing was created.
func signUpFull() pages.Page {
	return refusal(http.StatusForbidden, pages.SignUpFullTitle, pages.Say(pages.SignUpFullLine))
}
