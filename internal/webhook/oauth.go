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
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/go-logr/logr"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// StateTTL is how long a connect link's state is valid (seed 000 §3.1.1:
// 10 minutes).
const StateTTL = 10 * time.Minute

// successPageWait bounds how long the success page waits for the
// database to appear in the integration's status.
const successPageWait = 5 * time.Second

// stateLabel marks the Secrets that hold OAuth states.
const stateLabel = "switchboard.dev/oauth-state"

// oauthTarget is the resource a grant is for.
type oauthTarget struct {
	provider            oauth.Provider
	clientKey, tokenKey types.NamespacedName
	// page renders the success page.
	page func(ctx context.Context, d Deps, tok oauth.Token) map[string]any
}

// targets resolve a provider's connect request to a resource; each
// integration adds its kind here.
var targets = map[string]func(ctx context.Context, d Deps, key types.NamespacedName) (*oauthTarget, error){
	"notion": notionTarget,
}

func init() {
	Register(Family{Name: "oauth", Routes: func(d Deps) []Route {
		return []Route{
			{Pattern: "GET /oauth/{provider}/connect", Handler: connect(d)},
			{Pattern: "GET /oauth/{provider}/callback", Handler: callback(d)},
		}
	}})
}

func notionTarget(ctx context.Context, d Deps, key types.NamespacedName) (*oauthTarget, error) {
	// Read from the API server: a person may open the connect link the
	// moment they applied the resource, before the cache has it.
	ni := &v1alpha1.NotionIntegration{}
	if err := d.APIReader.Get(ctx, key, ni); err != nil {
		return nil, err
	}
	return &oauthTarget{
		provider:  oauth.Notion,
		clientKey: types.NamespacedName{Namespace: key.Namespace, Name: ni.Spec.OAuth.ClientSecretRef.Name},
		tokenKey:  types.NamespacedName{Namespace: key.Namespace, Name: ni.Spec.OAuth.TokenSecretRef.Name},
		page: func(ctx context.Context, d Deps, tok oauth.Token) map[string]any {
			// The new grant reconciles the integration, which finds or
			// creates the database within moments: wait briefly so that the
			// page can link it, as the seed's page does.
			fresh := &v1alpha1.NotionIntegration{}
			deadline := time.Now().Add(successPageWait)
		wait:
			for {
				err := d.APIReader.Get(ctx, key, fresh)
				if err != nil || fresh.Status.DatabaseURL != "" && fresh.Status.WebhookPath != "" || time.Now().After(deadline) {
					break
				}
				select {
				case <-ctx.Done():
					break wait
				case <-time.After(100 * time.Millisecond):
				}
			}
			webhookURL := ""
			if fresh.Status.WebhookPath != "" {
				webhookURL = d.PublicURL + fresh.Status.WebhookPath
			}
			return map[string]any{
				"Workspace": tok.Extra["workspace_name"], "WorkspaceID": tok.Extra["workspace_id"],
				"DatabaseURL": fresh.Status.DatabaseURL, "WebhookURL": webhookURL,
				"Resource": key.String(),
			}
		},
	}, nil
}

func (d Deps) redirectURI(provider string) string {
	return d.PublicURL + "/oauth/" + provider + "/callback"
}

func stateSecretName(state string) string {
	sum := sha256.Sum256([]byte(state))
	return "oauth-state-" + hex.EncodeToString(sum[:16])
}

func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// connect starts the OAuth flow for one resource (seed 000 §3.1.1): a
// random state bound to the resource, valid 10 minutes, usable once, kept
// in a Secret so any webhook replica can finish the flow; PKCE where the
// provider supports it.
func connect(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		provider := r.PathValue("provider")
		resolve, ok := targets[provider]
		if !ok {
			return htmlError(w, http.StatusNotFound, "Unknown provider", "There is no OAuth provider named "+provider+".")
		}
		key := types.NamespacedName{Namespace: r.URL.Query().Get("namespace"), Name: r.URL.Query().Get("name")}
		if key.Namespace == "" || key.Name == "" {
			return htmlError(w, http.StatusBadRequest, "Which resource?", "Add ?namespace=…&name=… naming the resource to connect.")
		}
		target, err := resolve(r.Context(), d, key)
		if err != nil {
			return htmlError(w, http.StatusNotFound, "Not found", "There is no such resource to connect.")
		}
		creds, err := oauthStore(d).LoadClient(r.Context(), target.clientKey)
		if err != nil {
			return htmlErrorCause(w, r, http.StatusInternalServerError, "Not configured", "The OAuth client Secret is missing or incomplete.", err)
		}
		state := random(32)
		verifier := ""
		if target.provider.PKCE {
			verifier = random(48)
		}
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: stateSecretName(state), Namespace: d.StateNamespace,
				Labels: map[string]string{setup.ManagedByLabel: setup.ManagedByValue, stateLabel: provider}},
			StringData: map[string]string{"namespace": key.Namespace, "name": key.Name, "provider": provider,
				"verifier": verifier, "expires": time.Now().Add(StateTTL).UTC().Format(time.RFC3339)},
		}
		if err := d.Client.Create(r.Context(), sec); err != nil {
			return htmlErrorCause(w, r, http.StatusInternalServerError, "Try again", "The sign-in could not be started.", err)
		}
		q := url.Values{"client_id": {creds.ID}, "redirect_uri": {d.redirectURI(provider)}, "response_type": {"code"}, "state": {state}}
		for k, v := range target.provider.AuthParams {
			q.Set(k, v)
		}
		if verifier != "" {
			sum := sha256.Sum256([]byte(verifier))
			q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
			q.Set("code_challenge_method", "S256")
		}
		authorize := target.provider.AuthorizeURL
		if target.provider.AuthorizeUpstream != "" && d.Upstreams != nil {
			authorize = d.Upstreams.Endpoint(target.provider.AuthorizeUpstream, target.provider.AuthorizePath)
		}
		http.Redirect(w, r, authorize+"?"+q.Encode(), http.StatusFound)
		return nil
	}
}

func oauthStore(d Deps) *oauth.Store { return &oauth.Store{Reader: d.APIReader, Writer: d.Client} }

// consumeState reads a state and deletes it in one step: only the first
// callback that deletes it wins; a second use, an unknown or an expired
// state is refused.
func consumeState(ctx context.Context, d Deps, state string) (map[string]string, bool) {
	if state == "" {
		return nil, false
	}
	var sec corev1.Secret
	key := types.NamespacedName{Namespace: d.StateNamespace, Name: stateSecretName(state)}
	if err := d.APIReader.Get(ctx, key, &sec); err != nil {
		return nil, false
	}
	uid, rv := sec.UID, sec.ResourceVersion
	if err := d.Client.Delete(ctx, &sec, client.Preconditions{UID: &uid, ResourceVersion: &rv}); err != nil {
		return nil, false // already consumed by a concurrent callback
	}
	data := map[string]string{}
	for k, v := range sec.Data {
		data[k] = string(v)
	}
	expires, err := time.Parse(time.RFC3339, data["expires"])
	if err != nil || time.Now().After(expires) {
		return nil, false
	}
	return data, true
}

// callback finishes the flow (seed 000 §3.1.2): a mismatched, reused or
// expired state is 403; a code the provider refuses is 401; the grant is
// written to the resource's token Secret, whose change reconciles it.
func callback(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		provider := r.PathValue("provider")
		q := r.URL.Query()
		data, ok := consumeState(r.Context(), d, q.Get("state"))
		if !ok || data["provider"] != provider {
			return htmlError(w, http.StatusForbidden, "This sign-in link is not valid",
				"It was already used, it expired (links last 10 minutes), or it was not issued here. Start again from the connect link.")
		}
		if e := q.Get("error"); e != "" {
			return htmlError(w, http.StatusForbidden, "Access was not granted", "The provider answered: "+e+". Start again to connect.")
		}
		key := types.NamespacedName{Namespace: data["namespace"], Name: data["name"]}
		target, err := targets[provider](r.Context(), d, key)
		if err != nil {
			return htmlError(w, http.StatusNotFound, "Not found", "The resource this sign-in was for no longer exists.")
		}
		store := oauthStore(d)
		creds, err := store.LoadClient(r.Context(), target.clientKey)
		if err != nil {
			return htmlErrorCause(w, r, http.StatusInternalServerError, "Not configured", "The OAuth client Secret is missing or incomplete.", err)
		}
		engine := &oauth.Engine{Store: store, Out: d.Outbound}
		tok, err := engine.Exchange(r.Context(), target.provider, creds, q.Get("code"), d.redirectURI(provider), data["verifier"])
		switch {
		case errors.Is(err, oauth.ErrReauthRequired):
			return htmlError(w, http.StatusUnauthorized, "The sign-in code was refused", "The provider did not accept the code. Start again from the connect link.")
		case err != nil:
			return htmlErrorCause(w, r, http.StatusBadGateway, "The provider did not answer", "Try again in a moment.", err)
		}
		if err := store.Save(r.Context(), target.tokenKey, tok); err != nil {
			return htmlErrorCause(w, r, http.StatusInternalServerError, "The grant could not be saved", "Try again.", err)
		}
		vars := target.page(r.Context(), d, tok)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		return successPage.Execute(w, vars)
	}
}

// htmlError answers a person's browser (seed 000 §7.3: OAuth errors are
// HTML pages). It returns nil: the answer is written.
func htmlError(w http.ResponseWriter, status int, title, message string) error {
	return htmlErrorCause(w, nil, status, title, message, nil)
}

// htmlErrorCause is htmlError that logs the cause of a server-side failure
// (never shown to the browser).
func htmlErrorCause(w http.ResponseWriter, r *http.Request, status int, title, message string, cause error) error {
	if r != nil && cause != nil {
		logr.FromContextOrDiscard(r.Context()).Error(cause, "OAuth route failed", "status", status)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return errorPage.Execute(w, map[string]any{"Title": title, "Message": message, "Status": status})
}

var errorPage = template.Must(template.New("error").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body><h1>{{.Title}}</h1><p>{{.Message}}</p><p><small>HTTP {{.Status}}</small></p></body></html>
`))

// successPage follows seed 000 §3.1.2's page: the database, the webhook URL
// and the Automation steps.
var successPage = template.Must(template.New("success").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Notion connected</title></head>
<body>
<h1>✅ Connected{{if .Workspace}} to {{.Workspace}}{{end}}</h1>
<p>Database: {{if .DatabaseURL}}<a href="{{.DatabaseURL}}" target="_blank">ArXiv Papers</a>{{else}}being prepared — see <code>kubectl get notionintegration</code> for {{.Resource}}{{end}}</p>
<h2>Next: a Notion Automation</h2>
<ol>
<li>Open the database in Notion.</li>
<li>“…” → Automations → New automation.</li>
<li>Trigger: When a page is updated (optionally: when Link changes).</li>
<li>Action: Send HTTP request.</li>
<li>URL: <code>{{if .WebhookURL}}{{.WebhookURL}}{{else}}the webhook URL in the status of {{.Resource}} (status.webhookPath after the public URL){{end}}</code></li>
<li>Method: <code>POST</code>, header <code>Content-Type: application/json</code></li>
<li>Body: <code>{"workspace_id": "{{.WorkspaceID}}", "page_id": "{{"{{"}}page_id{{"}}"}}", "link": "{{"{{"}}Link{{"}}"}}"}</code></li>
</ol>
<h2>Use</h2>
<ol><li>Add a page to the database.</li><li>Put an arXiv URL in Link, e.g. https://arxiv.org/abs/2301.12345.</li><li>Seconds later the title, authors, summary and year are filled in.</li></ol>
</body></html>
`))
