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
	"html/template"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/go-logr/logr"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// The oauth route family connects a resource to a provider:
//
//	GET /oauth/{target}/connect?namespace=…&name=…&token=…  → 302 to the consent page
//	GET /oauth/{target}/callback?code=…&state=…            → the grant in the token Secret
//
// It knows no integration: each route family registers its target
// (RegisterOAuthTarget) with the provider, how to read the resource, and
// the page shown once connected.

// OAuthTarget is one kind of resource the OAuth routes connect.
type OAuthTarget struct {
	// Kind names the resource for people: in pages and in the `kubectl get`
	// they are told to run ("notionintegration").
	Kind string
	// Provider is the OAuth provider; its Scopes and AuthParams go into the
	// authorize URL.
	Provider oauth.Provider
	// Resolve reads the resource from the API server (never a cache: a
	// person may open the link the moment they applied it). A missing
	// resource must be an error for which apierrors.IsNotFound is true.
	Resolve func(ctx context.Context, d Deps, key types.NamespacedName) (*OAuthResource, error)
	// Success writes the body of the page shown after the grant is saved
	// (nil: a generic page). It must answer at once from what it is given:
	// the resource as the callback read it, and the new grant. It must not
	// show anything secret that is not already in the resource's status.
	Success func(w io.Writer, d Deps, res *OAuthResource, tok oauth.Token) error
}

// OAuthResource is what the OAuth routes need of one resource.
type OAuthResource struct {
	// Object is the resource. Its connect Secret must be controlled by it.
	Object client.Object
	// Credentials name its OAuth client and token Secrets.
	Credentials v1alpha1.OAuthCredentials
	// Authenticated is the status of its Authenticated condition ("" when
	// it has none yet). A grant whose condition is False no longer works
	// and may be replaced without the reconnect annotation.
	Authenticated metav1.ConditionStatus
	// Provider, when its Name is set, replaces the target's for this
	// resource (Notion: the integration's assumed token lifetime).
	Provider oauth.Provider
}

func (t *OAuthTarget) provider(res *OAuthResource) oauth.Provider {
	if res.Provider.Name != "" {
		return res.Provider
	}
	return t.Provider
}

var (
	oauthTargetsMu sync.RWMutex
	oauthTargets   = map[string]OAuthTarget{}
)

// RegisterOAuthTarget adds a target under /oauth/{name}/…; each route
// family calls it from an init function. A second registration of a name
// replaces the first.
func RegisterOAuthTarget(name string, t OAuthTarget) {
	oauthTargetsMu.Lock()
	defer oauthTargetsMu.Unlock()
	oauthTargets[name] = t
}

// OAuthTargets lists the registered target names, sorted.
func OAuthTargets() []string {
	oauthTargetsMu.RLock()
	defer oauthTargetsMu.RUnlock()
	names := make([]string, 0, len(oauthTargets))
	for n := range oauthTargets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func lookupOAuthTarget(name string) (OAuthTarget, bool) {
	oauthTargetsMu.RLock()
	defer oauthTargetsMu.RUnlock()
	t, ok := oauthTargets[name]
	return t, ok
}

func init() {
	Register(Family{Name: "oauth", Routes: func(d Deps) []Route {
		return []Route{
			{Pattern: "GET /oauth/{target}/connect", Handler: connect(d)},
			{Pattern: "GET /oauth/{target}/callback", Handler: callback(d)},
		}
	}})
}

func (d Deps) redirectURI(target string) string {
	return strings.TrimSuffix(d.PublicURL, "/") + "/oauth/" + target + "/callback"
}

func (d Deps) oauthStore() *oauth.Store { return &oauth.Store{Reader: d.APIReader, Writer: d.Client} }

func (d Deps) oauthStates() *oauth.States {
	return &oauth.States{Reader: d.APIReader, Writer: d.Client, Namespace: d.StateNamespace}
}

// errRefused is the one answer to every connect request that does not
// prove the capability: no token, a wrong one, a resource or connect Secret
// that does not exist. One page for all, so a stranger learns nothing, not
// even whether the resource exists (issue 7 §1.3).
func refuseConnect(w http.ResponseWriter) error {
	return htmlError(w, http.StatusForbidden, "This connect link is not valid",
		"Ask whoever manages the resource for its current connect link. Links work once: a new one is made after each successful connect.")
}

// connect starts the OAuth flow for one resource (seed 000 §3.1.1), but
// only for whoever holds its connect token: a random state bound to the
// resource, valid 10 minutes, usable once, kept in a Secret so any webhook
// replica can finish the flow; PKCE where the provider supports it.
// Nothing is written before the token is proven.
func connect(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		name := r.PathValue("target")
		target, ok := lookupOAuthTarget(name)
		if !ok {
			return htmlError(w, http.StatusNotFound, "Unknown OAuth target", "Nothing connects under /oauth/"+name+"/.")
		}
		ctx := r.Context()
		q := r.URL.Query()
		key := types.NamespacedName{Namespace: q.Get("namespace"), Name: q.Get("name")}
		connectSec, err := proveConnectToken(ctx, d, key, q.Get("token"))
		if err != nil {
			return htmlErrorCause(w, r, http.StatusServiceUnavailable, "Try again", "The sign-in could not be started.", err)
		}
		if connectSec == nil {
			return refuseConnect(w)
		}
		// The token is proven: from here on, answers may differ.
		res, err := target.Resolve(ctx, d, key)
		switch {
		case apierrors.IsNotFound(err):
			return refuseConnect(w) // the connect Secret outlived its resource for a moment
		case err != nil:
			return htmlErrorCause(w, r, http.StatusServiceUnavailable, "Try again", "The sign-in could not be started.", err)
		case !metav1.IsControlledBy(connectSec, res.Object):
			return refuseConnect(w) // a Secret someone made by hand, or left by an older resource of that name
		}
		if _, locked, err := grantLocked(ctx, d, res); err != nil {
			return htmlErrorCause(w, r, http.StatusServiceUnavailable, "Try again", "The sign-in could not be started.", err)
		} else if locked {
			return alreadyConnected(w, target.Kind, key)
		}
		provider := target.provider(res)
		creds, err := d.oauthStore().LoadClient(ctx, credKey(key.Namespace, res.Credentials.ClientSecretRef))
		if err != nil {
			return htmlErrorCause(w, r, http.StatusInternalServerError, "Not configured", "The OAuth client Secret is missing or incomplete.", err)
		}
		verifier := pkceVerifier(provider)
		state, err := d.oauthStates().Create(ctx, oauth.State{Target: name, Namespace: key.Namespace, Name: key.Name,
			ResourceUID: res.Object.GetUID(), ConnectUID: connectSec.UID, Verifier: verifier})
		if err != nil {
			return htmlErrorCause(w, r, http.StatusServiceUnavailable, "Try again", "The sign-in could not be started.", err)
		}
		privatePage(w)
		http.Redirect(w, r, authorizeURL(d, provider, d.redirectURI(name), creds.ID, state, verifier), http.StatusFound)
		return nil
	}
}

// proveConnectToken reads the resource's connect Secret and compares its
// token in constant time. It returns nil (and no error) whenever the
// request does not prove the token; an error only for a failure to read.
// The Secret is read by its fixed name, so a request for a missing
// resource costs the same one read as one for an existing resource.
func proveConnectToken(ctx context.Context, d Deps, key types.NamespacedName, token string) (*corev1.Secret, error) {
	// A name the API server could not hold is refused like a missing one,
	// before any read (and before the client rejects it with an error of
	// another shape).
	if token == "" || len(validation.IsDNS1123Label(key.Namespace)) > 0 ||
		len(validation.IsDNS1123Subdomain(oauth.ConnectSecretName(key.Name))) > 0 {
		return nil, nil
	}
	var sec corev1.Secret
	err := d.APIReader.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: oauth.ConnectSecretName(key.Name)}, &sec)
	switch {
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err), apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		// Forbidden and Invalid (a malformed name) depend on what was asked,
		// not on what exists: refused like a missing Secret.
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read connect Secret: %w", err)
	}
	want := string(sec.Data[oauth.ConnectTokenKey])
	if want == "" || !capability.Equal(token, want) {
		return nil, nil
	}
	return &sec, nil
}

// grantLocked reports whether the resource's grant works and may not be
// replaced: its token Secret holds a refresh token, its Authenticated
// condition is not False, and it does not carry a reconnect annotation
// with a value other than the one the grant was written for. reconnect is
// the annotation's value, to record with the new grant.
func grantLocked(ctx context.Context, d Deps, res *OAuthResource) (reconnect string, locked bool, err error) {
	reconnect = res.Object.GetAnnotations()[v1alpha1.ReconnectAnnotation]
	g, err := d.oauthStore().Grant(ctx, credKey(res.Object.GetNamespace(), res.Credentials.TokenSecretRef))
	if err != nil {
		return "", false, err
	}
	works := g.HasRefreshToken && res.Authenticated != metav1.ConditionFalse
	asked := reconnect != "" && reconnect != g.ReconnectedFor
	return reconnect, works && !asked, nil
}

func alreadyConnected(w http.ResponseWriter, kind string, key types.NamespacedName) error {
	return htmlError(w, http.StatusConflict, "Already connected",
		fmt.Sprintf("%s %s has a grant that works, so it was not replaced. To replace it, annotate the resource and open a fresh connect link: "+
			"kubectl annotate -n %s --overwrite %s/%s %s=\"$(date +%%s)\"",
			kind, key, key.Namespace, kind, key.Name, v1alpha1.ReconnectAnnotation))
}

func credKey(namespace string, ref v1alpha1.SecretReference) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: ref.Name}
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
	links   string // what lasts 10 minutes: "links", "sign-ins"
	restart string // after a state that is not valid
	retry   string // after a state that could not be checked
	who     string // who answered error=
	denied  string // after an error= answer
}

var connectWords = callbackWords{links: "links", restart: "Start again from the connect link.",
	retry: "Start again from the connect link.", who: "The provider", denied: "Start again to connect."}

// consumeState uses a callback's state once, for target: the connect
// callback and the Discord sign-in share it. When ok is false it has
// answered: 403 for a state that is unknown, used, expired or another
// target's; 503 when it could not be checked; 403 when the provider
// answered error= (the state is spent either way).
func consumeState(w http.ResponseWriter, r *http.Request, d Deps, target string, words callbackWords) (st oauth.State, ok bool, _ error) {
	q := r.URL.Query()
	st, err := d.oauthStates().Consume(r.Context(), q.Get("state"))
	switch {
	case errors.Is(err, oauth.ErrStateInvalid) || err == nil && st.Target != target:
		return st, false, htmlError(w, http.StatusForbidden, "This sign-in link is not valid",
			"It was already used, it expired ("+words.links+" last 10 minutes), or it was not issued here. "+words.restart)
	case err != nil:
		return st, false, htmlErrorCause(w, r, http.StatusServiceUnavailable, "Try again", "The sign-in could not be checked. "+words.retry, err)
	}
	if e := q.Get("error"); e != "" {
		return st, false, htmlError(w, http.StatusForbidden, "Access was not granted", words.who+" answered: "+e+". "+words.denied)
	}
	return st, true, nil
}

// callback finishes the flow (seed 000 §3.1.2): a mismatched, reused or
// expired state is 403; a code the provider refuses is 401; a grant that
// started working since the connect is not replaced (409). The grant goes
// to the resource's token Secret, whose change reconciles it; then the
// connect token is rotated and the resource's other states are dropped, so
// the link that was used works no more.
func callback(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		name := r.PathValue("target")
		ctx := r.Context()
		q := r.URL.Query()
		st, ok, err := consumeState(w, r, d, name, connectWords)
		if !ok {
			return err
		}
		target, ok := lookupOAuthTarget(name)
		key := types.NamespacedName{Namespace: st.Namespace, Name: st.Name}
		var res *OAuthResource
		if ok {
			res, err = target.Resolve(ctx, d, key)
		}
		switch {
		case !ok || apierrors.IsNotFound(err) || err == nil && res.Object.GetUID() != st.ResourceUID:
			return htmlError(w, http.StatusNotFound, "Not found", "The resource this sign-in was for no longer exists.")
		case err != nil:
			return htmlErrorCause(w, r, http.StatusServiceUnavailable, "Try again", "The resource could not be read. Start again from the connect link.", err)
		}
		// Checked again: the grant may have started working since the connect.
		reconnect, locked, err := grantLocked(ctx, d, res)
		if err != nil {
			return htmlErrorCause(w, r, http.StatusServiceUnavailable, "Try again", "The grant could not be checked. Start again from the connect link.", err)
		}
		if locked {
			return alreadyConnected(w, target.Kind, key)
		}
		store := d.oauthStore()
		creds, err := store.LoadClient(ctx, credKey(key.Namespace, res.Credentials.ClientSecretRef))
		if err != nil {
			return htmlErrorCause(w, r, http.StatusInternalServerError, "Not configured", "The OAuth client Secret is missing or incomplete.", err)
		}
		engine := &oauth.Engine{Store: store, Out: d.Outbound}
		tok, err := engine.Exchange(ctx, target.provider(res), creds, q.Get("code"), d.redirectURI(name), st.Verifier)
		switch {
		case errors.Is(err, oauth.ErrReauthRequired):
			return htmlError(w, http.StatusUnauthorized, "The sign-in code was refused", "The provider did not accept the code. Start again from the connect link.")
		case err != nil:
			return htmlErrorCause(w, r, http.StatusBadGateway, "The provider did not answer", "Try again in a moment.", err)
		}
		if err := store.SaveConnected(ctx, credKey(key.Namespace, res.Credentials.TokenSecretRef), tok, reconnect); err != nil {
			return htmlErrorCause(w, r, http.StatusInternalServerError, "The grant could not be saved", "Try again.", err)
		}
		rotateConnectToken(ctx, d, key, st)
		privatePage(w)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if target.Success != nil {
			return target.Success(w, d, res, tok)
		}
		return genericSuccess.Execute(w, successVars(target.Kind, key))
	}
}

// rotateConnectToken makes the used link worthless: it deletes the connect
// Secret the flow started from (the UID precondition spares a newer one)
// and the resource's other outstanding states. The controller owns the
// connect Secret and mints a new token when it is gone. The grant is saved
// by now, so a failure here is logged, not shown: the grant works, and a
// working grant already refuses the old link without the reconnect
// annotation.
func rotateConnectToken(ctx context.Context, d Deps, key types.NamespacedName, st oauth.State) {
	log := logr.FromContextOrDiscard(ctx)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: oauth.ConnectSecretName(key.Name)}}
	uid := st.ConnectUID
	if err := d.Client.Delete(ctx, sec, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		log.Error(err, "could not rotate the connect token", "resource", key)
	}
	if err := d.oauthStates().DeleteFor(ctx, key.Namespace, key.Name); err != nil {
		log.Error(err, "could not drop the resource's other OAuth states", "resource", key)
	}
}

// successInfo is what every success page may show.
type successInfo struct {
	Kind, Namespace, Name string
	// KubectlGet shows the resource's status.
	KubectlGet string
}

func successVars(kind string, key types.NamespacedName) successInfo {
	return successInfo{Kind: kind, Namespace: key.Namespace, Name: key.Name,
		KubectlGet: fmt.Sprintf("kubectl get %s -n %s %s", kind, key.Namespace, key.Name)}
}

var genericSuccess = template.Must(template.New("success").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Connected</title></head>
<body>
<h1>✅ Connected</h1>
<p>The grant for {{.Kind}} {{.Namespace}}/{{.Name}} is saved; its controller takes it from here.</p>
<p>Follow it with <code>{{.KubectlGet}}</code>.</p>
</body></html>
`))

// htmlError answers a person's browser (seed 000 §7.3: OAuth errors are
// HTML pages). It returns nil: the answer is written.
func htmlError(w http.ResponseWriter, status int, title, message string) error {
	return htmlErrorCause(w, nil, status, title, message, nil)
}

// htmlErrorCause is htmlError that logs the cause of a server-side failure
// (never shown to the browser). A 503 carries Retry-After, as every 503 of
// the webhook does.
func htmlErrorCause(w http.ResponseWriter, r *http.Request, status int, title, message string, cause error) error {
	if r != nil && cause != nil {
		logr.FromContextOrDiscard(r.Context()).Error(cause, "OAuth route failed", "status", status)
	}
	privatePage(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfterHeader(DefaultRetryAfter))
	}
	w.WriteHeader(status)
	return errorPage.Execute(w, map[string]any{"Title": title, "Message": message, "Status": status})
}

// privatePage keeps an OAuth page out of caches and its URL (which carries
// the connect token, or a code and state) out of the Referer header of any
// link the page shows.
func privatePage(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
}

var errorPage = template.Must(template.New("error").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body><h1>{{.Title}}</h1><p>{{.Message}}</p><p><small>HTTP {{.Status}}</small></p></body></html>
`))

// Resolver is the Resolve of an OAuth target whose kind keeps its OAuth
// credentials in its spec and an Authenticated condition in its status:
// it reads the resource from the API server.
func Resolver[T interface {
	client.Object
	v1alpha1.StatusObject
}](newObj func() T, creds func(T) v1alpha1.OAuthCredentials) func(context.Context, Deps, types.NamespacedName) (*OAuthResource, error) {
	return func(ctx context.Context, d Deps, key types.NamespacedName) (*OAuthResource, error) {
		obj := newObj()
		if err := d.APIReader.Get(ctx, key, obj); err != nil {
			return nil, err
		}
		res := &OAuthResource{Object: obj, Credentials: creds(obj)}
		if c := meta.FindStatusCondition(obj.GetReconcileStatus().Conditions, v1alpha1.AuthenticatedCondition); c != nil {
			res.Authenticated = c.Status
		}
		return res, nil
	}
}
