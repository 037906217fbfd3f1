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
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/pages"
)

// The oauth route family connects a resource to a provider:
//
//	GET /oauth/{target}/connect?namespace=…&name=…&token=…  → 302 to the consent page
//	GET /oauth/{target}/callback?code=…&state=…            → the grant in the token Secret
//
// It knows no integration: each route family carries its target
// (Family.OAuth) with the provider, how to read the resource, and the page
// shown once connected, and the routes serve the targets of the families
// the Server was built with.

// OAuthTarget is one kind of resource the OAuth routes connect: the
// oauth.Target the manager finishes flows for, and the page shown once
// connected.
type OAuthTarget struct {
	oauth.Target
	// Success answers with the page shown after the grant is saved (nil:
	// a generic page), from what it is given — the resource as read after
	// the manager received the grant, and the provider's fields of the
	// grant that are not secret (oauth.Outcome) — and what it may read of
	// that resource for a few seconds more (Notion's database, which the
	// manager finds or creates just after). It must not show anything
	// secret that is not already in the resource's status.
	Success func(w http.ResponseWriter, r *http.Request, d Deps, res *oauth.Resource, extra map[string]string) error
}

// Every family keeps its state in Secrets of the webhook's own namespace
// (OAuth states and handovers, sign-in sessions, the Notion verification
// token, the Sheets ledger it reads), and in no other: a Role there.
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get;list;watch;create;update;patch;delete

// The oauth family serves the OAuth routes of the targets of the families the
// Server was built with (Family.OAuth).
var _ = family(Family{Name: "oauth", Routes: func(d Deps) []Route {
	return []Route{
		{Pattern: "GET /oauth/{target}/connect", Handler: connect(d)},
		{Pattern: "GET /oauth/{target}/callback", Handler: callback(d)},
	}
}})

// oauthTargetsOf indexes the OAuth targets of families by name: two
// families may not carry targets of one name.
func oauthTargetsOf(families []Family) (map[string]OAuthTarget, error) {
	targets := map[string]OAuthTarget{}
	owner := map[string]string{}
	for _, f := range families {
		if f.OAuth == nil {
			continue
		}
		name := f.OAuth.Name
		if name == "" {
			return nil, fmt.Errorf("webhook: route family %s: its OAuth target has no name", f.Name)
		}
		if prev, dup := owner[name]; dup {
			return nil, fmt.Errorf("webhook: route families %s and %s both carry the OAuth target %q", prev, f.Name, name)
		}
		targets[name], owner[name] = *f.OAuth, f.Name
	}
	return targets, nil
}

func (d Deps) lookupOAuthTarget(name string) (OAuthTarget, bool) {
	t, ok := d.oauthTargets[name]
	return t, ok
}

func (d Deps) redirectURI(target string) string {
	return strings.TrimSuffix(d.PublicURL, "/") + "/oauth/" + target + "/callback"
}

func (d Deps) handovers() *oauth.Handovers {
	return &oauth.Handovers{Reader: d.Client, Writer: d.Client, Namespace: d.StateNamespace, Wait: d.HandoverWait}
}

func (d Deps) oauthStates() *oauth.States {
	return &oauth.States{Reader: d.APIReader, Writer: d.Client, Namespace: d.StateNamespace}
}

// refuseConnect is the one answer to every connect request that does not
// prove the capability: no token, a wrong one, a resource that does not
// exist or has no connect token published. One page for all, so a stranger
// learns nothing, not even whether the resource exists (issue 7 §1.3).
func refuseConnect(w http.ResponseWriter, r *http.Request) error {
	return showPage(w, r, refusal(http.StatusForbidden, pages.ConnectInvalidTitle, pages.Say(pages.ConnectInvalidLine)), nil)
}

// connect starts the OAuth flow for one resource (seed 000 §3.1.1), but
// only for whoever holds its connect token, and only until the link
// expires (status.connectExpiresAt): a random state bound to the
// resource, valid 10 minutes, usable once, kept in a Secret so any webhook
// replica can finish the flow; PKCE where the provider supports it.
// Nothing is written before the token is proven. The token is checked
// against the hash the controller publishes in status, and the consent
// page's client id is the one it publishes there: the webhook reads no
// Secret in the resource's namespace.
func connect(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		name := r.PathValue("target")
		target, ok := d.lookupOAuthTarget(name)
		if !ok {
			return showPage(w, r, refusal(http.StatusNotFound, pages.NotFoundTitle, pages.Say(pages.UnknownTargetLine, pages.Code("/oauth/"+name+"/"))), nil)
		}
		ctx := r.Context()
		q := r.URL.Query()
		key := types.NamespacedName{Namespace: q.Get("namespace"), Name: q.Get("name")}
		res, err := proveConnectToken(ctx, d, target, key, q.Get("token"))
		if err != nil {
			return showPage(w, r, startFailed(), err)
		}
		if res == nil {
			return refuseConnect(w, r)
		}
		// The token is proven: from here on, answers may differ.
		if exp := res.Connect.ConnectExpiresAt; exp != nil && !d.now().Before(exp.Time) {
			p := refusal(http.StatusForbidden, pages.ConnectExpiredTitle, pages.Say(pages.ConnectExpiredLine, int(oauth.ConnectTTL/time.Minute)))
			p.Admin = []string{fmt.Sprintf("kubectl get secret -n %s %s -o jsonpath='{.data.url}' | base64 -d", key.Namespace, oauth.ConnectSecretName(key.Name))}
			return showPage(w, r, p, nil)
		}
		if oauth.StatusLocked(res) {
			return alreadyConnected(w, r, target.Kind, key)
		}
		if res.Connect.ClientID == "" {
			return showPage(w, r, notSetUp(fmt.Sprintf("kubectl describe %s -n %s %s", target.Kind, key.Namespace, key.Name)), nil)
		}
		provider := target.ProviderFor(res)
		verifier := pkceVerifier(provider)
		state, err := d.oauthStates().Create(ctx, oauth.State{Target: name, Namespace: key.Namespace, Name: key.Name,
			ResourceUID: res.Object.GetUID(), ConnectTokenHash: res.Connect.ConnectTokenHash, Verifier: verifier})
		if err != nil {
			return showPage(w, r, startFailed(), err)
		}
		privatePage(w)
		http.Redirect(w, r, authorizeURL(d, provider, d.redirectURI(name), res.Connect.ClientID, state, verifier), http.StatusFound)
		return nil
	}
}

// proveConnectToken reads the resource and compares the hash of token
// with the one its controller published, in constant time. It returns nil
// (and no error) whenever the request does not prove the token; an error
// only for a failure to read. A request for a missing resource costs the
// same one read as one for an existing resource.
func proveConnectToken(ctx context.Context, d Deps, target OAuthTarget, key types.NamespacedName, token string) (*oauth.Resource, error) {
	// A name the API server could not hold is refused like a missing one,
	// before any read (and before the client rejects it with an error of
	// another shape).
	if token == "" || len(validation.IsDNS1123Label(key.Namespace)) > 0 || len(validation.IsDNS1123Subdomain(key.Name)) > 0 {
		return nil, nil
	}
	res, err := target.Resolve(ctx, d.APIReader, key)
	switch {
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err), apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		// Forbidden (a namespace this install does not watch) and Invalid
		// depend on what was asked, not on what exists: refused like a
		// missing resource.
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read %s %s: %w", target.Kind, key, err)
	}
	want := res.Connect.ConnectTokenHash
	if want == "" || !capability.Equal(capability.Hash(token), want) {
		return nil, nil
	}
	return res, nil
}

// alreadyConnected refuses to replace a grant that works; the platform
// team's line says how to let a fresh connect link replace it.
func alreadyConnected(w http.ResponseWriter, r *http.Request, kind string, key types.NamespacedName) error {
	p := refusal(http.StatusConflict, pages.AlreadyTitle, pages.Say(pages.AlreadyLine))
	p.Mark = pages.Info
	p.Admin = []string{fmt.Sprintf("kubectl annotate -n %s --overwrite %s/%s %s=\"$(date +%%s)\"", key.Namespace, kind, key.Name, v1alpha1.ReconnectAnnotation)}
	return showPage(w, r, p, nil)
}

// startFailed is the answer when a connect could not be started (a read
// or a state write failed): the same link, loaded again, may pass.
func startFailed() pages.Page {
	return retrying(http.StatusServiceUnavailable, retryAfterSeconds(DefaultRetryAfter), pages.TryAgainTitle, pages.Say(pages.StartFailedLine))
}

// notSetUp is the answer when the provider's client is not configured:
// the person is told whom to tell, the platform team where to look.
func notSetUp(admin ...string) pages.Page {
	p := refusal(http.StatusInternalServerError, pages.NotSetUpTitle, pages.Say(pages.NotSetUpLine))
	p.Admin = admin
	return p
}

// pkceVerifier is a new PKCE code verifier (RFC 7636 §4.1: 43 to 128
// characters; 48 random bytes make 64), or "" for a provider without PKCE.
func pkceVerifier(p oauth.Provider) string {
	if !p.PKCE {
		return ""
	}
	return capability.Random(48)
}

// authorizeURL is the provider's consent page with the flow's parameters:
// the callback's redirectURI, the state, and the S256 challenge of the
// verifier when there is one.
func authorizeURL(d Deps, p oauth.Provider, redirectURI, clientID, state, verifier string) string {
	q := url.Values{"client_id": {clientID}, "redirect_uri": {redirectURI}, "response_type": {"code"}, "state": {state}}
	if len(p.Scopes) > 0 {
		q.Set("scope", strings.Join(p.Scopes, " "))
	}
	for k, v := range p.AuthParams {
		q.Set(k, v)
	}
	if verifier != "" {
		sum := sha256.Sum256([]byte(verifier))
		q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
		q.Set("code_challenge_method", "S256")
	}
	authorize := p.AuthorizeURL
	if p.AuthorizeUpstream != "" && d.Upstreams != nil {
		authorize = d.Upstreams.Endpoint(p.AuthorizeUpstream, p.AuthorizePath)
	}
	return authorize + "?" + q.Encode()
}

// callbackWords are what a callback's refusals tell the person.
type callbackWords struct {
	restart pages.Text // what to do after a refusal: start again from where
	who     pages.Text // who answered error=, or refused the code
}

var connectWords = callbackWords{restart: pages.StartAgainConnect, who: pages.TheProvider}

// consumeState uses a callback's state once, for target: the connect
// callback and the Discord sign-in share it. browser is the digest of the
// request's browser-binding cookie ("" without one): a state bound to
// another browser is refused and not spent. When ok is false it has
// answered: 403 for a state that is unknown, used, expired, another
// target's or another browser's; 503 when it could not be checked; 403
// when the provider answered error= (the state is spent either way).
func consumeState(w http.ResponseWriter, r *http.Request, states *oauth.States, browser, target string, words callbackWords) (st oauth.State, ok bool, _ error) {
	q := r.URL.Query()
	st, err := states.ConsumeIn(r.Context(), q.Get("state"), browser)
	switch {
	case errors.Is(err, oauth.ErrStateInvalid) || err == nil && st.Target != target:
		return st, false, showPage(w, r, refusal(http.StatusForbidden, pages.SignInInvalidTitle, pages.Say(pages.SignInInvalidLine), pages.Say(words.restart)), nil)
	case err != nil:
		return st, false, showPage(w, r, refusal(http.StatusServiceUnavailable, pages.TryAgainTitle, pages.Say(pages.CheckFailedLine), pages.Say(words.restart)), err)
	}
	if e := q.Get("error"); e != "" {
		return st, false, showPage(w, r, refusal(http.StatusForbidden, pages.DeniedTitle, pages.Say(pages.DeniedLine, words.who, pages.Code(e)), pages.Say(words.restart)), nil)
	}
	return st, true, nil
}

// callback finishes the flow (seed 000 §3.1.2): a mismatched, reused or
// expired state is 403. The code is handed to the manager (oauth.Handover)
// in the webhook's own namespace; the manager checks the resource, exchanges
// the code, writes the token Secret (whose change reconciles the resource)
// and rotates the connect token, so the link that was used works no more.
// The page follows the manager's outcome: a code the provider refuses is
// 401, a grant that started working since the connect is not replaced
// (409), a resource gone is 404. When the manager does not answer within
// the wait, the page says the grant is on its way (202).
func callback(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		name := r.PathValue("target")
		ctx := r.Context()
		q := r.URL.Query()
		// A state a sign-up bound to a browser is spent only by that
		// browser (or one that lost its cookie); a connect link's is bound
		// to none.
		st, ok, err := consumeState(w, r, d.oauthStates(), browserDigestOf(r), name, connectWords)
		if !ok {
			return err
		}
		target, ok := d.lookupOAuthTarget(name)
		if !ok {
			return showPage(w, r, refusal(http.StatusNotFound, pages.NotFoundTitle, pages.Say(pages.GoneLine)), nil)
		}
		key := types.NamespacedName{Namespace: st.Namespace, Name: st.Name}
		handovers := d.handovers()
		hk, err := handovers.Create(ctx, q.Get("state"), oauth.Handover{Target: name, Namespace: key.Namespace, Name: key.Name,
			ResourceUID: st.ResourceUID, ConnectTokenHash: st.ConnectTokenHash, Code: q.Get("code"), Verifier: st.Verifier,
			RedirectURI: d.redirectURI(name), SignUp: st.SignUp})
		if err != nil {
			return showPage(w, r, refusal(http.StatusServiceUnavailable, pages.TryAgainTitle, pages.Say(pages.HandoverFailedLine), pages.Say(pages.StartAgainConnect)), err)
		}
		out, answered := handovers.Await(ctx, hk)
		if !answered {
			p := pages.Page{Status: http.StatusAccepted, Mark: pages.Wait, Title: pages.Say(pages.ConnectingTitle),
				Lines: []pages.Line{pages.Say(pages.ConnectingLine), pages.Say(pages.CloseThisPage)}}
			if !st.SignUp { // a sign-up's resource is not known until the manager answers
				p.Admin = []string{kubectlGet(target.Kind, key)}
			}
			return showPage(w, r, p, nil)
		}
		switch out.Result {
		case oauth.Locked:
			return alreadyConnected(w, r, target.Kind, key)
		case oauth.Stale:
			return refuseConnect(w, r)
		}
		if p, failed := handoverFailed(out.Result, st.SignUp); failed {
			return showPage(w, r, p, nil)
		}
		// The resource the grant went to: the state's, or the one a
		// sign-up made or found.
		key = types.NamespacedName{Namespace: out.Namespace, Name: out.Name}
		res, err := target.Resolve(ctx, d.APIReader, key)
		if err != nil || target.Success == nil {
			// The grant is saved: a page without the resource's details.
			return genericSuccess(w, r, target.Kind, key)
		}
		return target.Success(w, r, d, res, out.Extra)
	}
}

// handoverFailed is the page of a handover the manager could not turn
// into a grant (signUp: of a flow a sign-up started); failed is false for
// a grant saved (oauth.Connected).
func handoverFailed(result oauth.Result, signUp bool) (_ pages.Page, failed bool) {
	switch result {
	case oauth.Connected:
		return pages.Page{}, false
	case oauth.Gone:
		if signUp {
			return signUpNotFound(), true
		}
		return refusal(http.StatusNotFound, pages.NotFoundTitle, pages.Say(pages.GoneLine)), true
	case oauth.Closed:
		return signUpClosed(), true
	case oauth.Full:
		return signUpFull(), true
	case oauth.Refused:
		return refusal(http.StatusUnauthorized, pages.CodeRefusedTitle, pages.Say(pages.CodeRefusedLine, pages.TheProvider), pages.Say(pages.StartAgainConnect)), true
	case oauth.Unavailable:
		p := refusal(http.StatusBadGateway, pages.ProviderDownTtl, pages.Say(pages.StartAgainConnect))
		p.Title = pages.Say(pages.ProviderDownTtl, pages.TheProvider)
		return p, true
	case oauth.Misconfigured:
		return notSetUp(), true
	}
	return refusal(http.StatusInternalServerError, pages.SaveFailedTitle, pages.Say(pages.StartAgainConnect)), true
}
