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

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/controller/grant"
	"github.com/switchboard-dev/switchboard/internal/controller/notionintegration"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/controller/wire"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// The token benchmark (-suite tokens): OAuth token refreshes as deadlines
// at scale. For each OAuth kind with a grant of its own per object —
// NotionIntegration, then SheetConnection, each with its own manager —
// -token-grants objects are connected with grants whose access tokens all
// fall due for refresh within one minute (tokens_refresh.go measures the
// refreshes). A grant is written into its token Secret as the OAuth
// engine writes one after a refresh made a token lifetime earlier: the
// access and refresh tokens the sandbox issued, and the expiry (Google's
// from the emulator's clock set back to the issue, Notion's assumed, as
// Notion states none). The Grant phase requeues each object at expiry −
// spec refreshBefore, its due instant.

// tokenOptions size the token benchmark.
type tokenOptions struct {
	// kinds are the kinds measured, comma-separated (-token-kinds):
	// notion, sheets.
	kinds string
	// grants of each kind (-token-grants).
	grants int
	// workers is both controllers' --<kind>-workers (0: each one's
	// default), and the baselines' writers.
	workers int
	// budget is how long the manager gets to take every object of a kind
	// to Ready; the first token falls due this long after the first
	// create (0: defaultTokenBudget).
	budget time.Duration
	// window is how long the due instants are spread over (a minute: the
	// issue's; shorter makes a burst of a few grants): the grants are due
	// in equal shares at each whole second of it, since a token Secret's
	// expiry is RFC 3339, whole seconds.
	window time.Duration
}

// defaultTokenBudget is 30 s and 60 ms per grant: eight workers connected
// 300 grants in about 10 s on a busy 2-core machine, and a larger cache
// slows every one.
func defaultTokenBudget(grants int) time.Duration {
	return 30*time.Second + time.Duration(grants)*60*time.Millisecond
}

const (
	// tokenCreators create the benchmark's objects and Secrets.
	tokenCreators = 16
	// notionRefreshBefore and sheetsRefreshBefore are the kinds' default
	// spec refreshBefore (the CRDs'), written out so that due instants do
	// not depend on defaulting.
	notionRefreshBefore = 24 * time.Hour
	sheetsRefreshBefore = 5 * time.Minute
	tokensSheetID       = "1BenchTokenSpreadsheet00000000000000000000000"
	tokensSheetTab      = "Time log"
)

// tokenKind is one OAuth kind as the benchmark drives it, with its rig.
type tokenKind struct {
	*rig
	// kind names the objects in the output; controller is the
	// controller's name (its workqueue's); ns holds the objects.
	kind, controller, ns string
	// workers is the controller's worker count.
	workers int
	// provider is the kind's token endpoint (upstream, path, encoding)
	// and, for Notion, the lifetime assumed for each new access token.
	provider oauth.Provider
	// tokenRoute is the sandbox's route of that endpoint.
	tokenRoute string
	// clientID and clientSecret are the OAuth client's, in the Secret
	// named clientSecretName.
	clientID, clientSecret string
	// refreshBefore is every object's spec refreshBefore.
	refreshBefore time.Duration
	// object is an empty object of the kind, for its informer.
	object client.Object
	// shared creates the namespace's Secrets every object names.
	shared func(ctx context.Context, c client.Client) error
	// grant issues a new grant and answers its refresh token.
	grant func() string
	// issue answers the token Secret data of grant refresh whose access
	// token expires at expiry, as the OAuth engine writes it.
	issue func(ctx context.Context, refresh string, expiry time.Time) (map[string]string, error)
	// create creates the object name whose token Secret is tokenSecret.
	create func(ctx context.Context, c client.Client, name, tokenSecret string) error
	// expiring, when set, is called before issue with the expiry of the
	// access tokens it is about to issue, and with a zero time after the
	// last: it sets the emulator's clock back to their issue.
	expiring func(time.Time)
}

// tokenObjectName, tokenSecretName and baseSecretName name the i-th
// object, its token Secret, and the baseline's grant for it.
func tokenObjectName(i int) string       { return fmt.Sprintf("g%05d", i) }
func tokenSecretName(name string) string { return "tok-" + name }
func baseSecretName(name string) string  { return "base-" + name }

// startNotionTokens starts a manager running the NotionIntegration
// controller alone, with workers (0: its default), against a sandbox with
// one Notion workspace every grant is for.
func startNotionTokens(ctx context.Context, cfg *rest.Config, workers int) (*tokenKind, error) {
	notion := sandbox.NewNotion()
	notion.AddClient("bench-client", "bench-secret")
	ws := sandbox.NotionWorkspace{ID: "be4c0000-0000-4000-8000-000000000021", Name: "Bench", BotID: "b0000000-0000-4000-8000-000000000021"}
	notion.AddPage(ws.ID, "Bench page")
	r, err := newRig(ctx, cfg, sandbox.New(notion), &apiCounter{})
	if err != nil {
		return nil, err
	}
	k := &tokenKind{rig: r, kind: "NotionIntegration", controller: "notionintegration", ns: "bench-tok-notion",
		workers: wire.Workers{N: workers}.Or(notionintegration.DefaultWorkers), provider: oauth.Notion.WithAssumedLifetime(7 * 24 * time.Hour),
		tokenRoute: sandbox.NotionOAuthToken, clientID: "bench-client", clientSecret: "bench-secret",
		refreshBefore: notionRefreshBefore, object: &v1alpha1.NotionIntegration{}}
	k.shared = func(ctx context.Context, c client.Client) error {
		return createSecrets(ctx, c, k.ns, map[string]map[string]string{
			"notion-client":  {oauth.KeyClientID: k.clientID, oauth.KeyClientSecret: k.clientSecret},
			"notion-webhook": {"token": "bench-webhook-token-0123456789"},
		})
	}
	k.grant = func() string { return notion.IssueRefreshToken(k.clientID, ws) }
	k.issue = func(_ context.Context, refresh string, expiry time.Time) (map[string]string, error) {
		// Notion states no expiry: the engine assumes one from the issue.
		return map[string]string{oauth.KeyAccessToken: notion.IssueAccessToken(k.clientID, ws), oauth.KeyRefreshToken: refresh,
			oauth.KeyTokenType: "bearer", oauth.KeyExpiry: expiry.UTC().Format(time.RFC3339),
			"workspace_id": ws.ID, "workspace_name": ws.Name, "bot_id": ws.BotID,
			oauth.KeyGrantedAt: expiry.Add(-k.provider.AssumedLifetime).UTC().Format(time.RFC3339Nano)}, nil
	}
	k.create = func(ctx context.Context, c client.Client, name, tokenSecret string) error {
		ni := &v1alpha1.NotionIntegration{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns}}
		ni.Spec.OAuth.ClientSecretRef.Name, ni.Spec.OAuth.TokenSecretRef.Name = "notion-client", tokenSecret
		ni.Spec.WebhookSecretRef.Name = "notion-webhook"
		ni.Spec.TokenRefresh.AssumedLifetime = metav1.Duration{Duration: k.provider.AssumedLifetime}
		ni.Spec.TokenRefresh.RefreshBefore = metav1.Duration{Duration: k.refreshBefore}
		return c.Create(ctx, ni)
	}
	if err := wire.SetupAll(r.mgr, wire.Deps{Outbound: r.out, OAuth: r.engine, PublicURL: r.hookURL},
		&notionintegration.Controller{Workers: wire.Workers{N: workers}}); err != nil {
		r.close()
		return nil, err
	}
	return k, r.start(ctx)
}

// startSheetsTokens starts a manager running the SheetConnection
// controller alone, with workers (0: its default), against a sandbox with
// Google OAuth and the Sheets emulator holding the one spreadsheet every
// connection appends to. The Google emulator's clock is the real one but
// while the setup issues access tokens (expiring).
func startSheetsTokens(ctx context.Context, cfg *rest.Config, workers int) (*tokenKind, error) {
	google := sandbox.NewGoogleOAuth()
	google.AddClient("sheet-client", "sheet-secret")
	var frozen atomic.Int64
	google.Now = func() time.Time {
		if ms := frozen.Load(); ms != 0 {
			return time.UnixMilli(ms)
		}
		return time.Now()
	}
	sheets := sandbox.NewGoogleSheets(google)
	sheets.AddSpreadsheet(tokensSheetID, "Asia/Tokyo", sandbox.SheetSpec{ID: 0, Title: tokensSheetTab, Rows: [][]string{testenv.SheetHeader}})
	r, err := newRig(ctx, cfg, sandbox.New(google, sheets), &apiCounter{})
	if err != nil {
		return nil, err
	}
	k := &tokenKind{rig: r, kind: "SheetConnection", controller: "sheetconnection", ns: "bench-tok-sheets",
		workers: wire.Workers{N: workers}.Or(sheetconnection.DefaultWorkers), provider: targets.Sheets.Provider,
		tokenRoute: sandbox.GoogleOAuthToken, clientID: "sheet-client", clientSecret: "sheet-secret",
		refreshBefore: sheetsRefreshBefore, object: &v1alpha1.SheetConnection{}}
	k.shared = func(ctx context.Context, c client.Client) error {
		return createSecrets(ctx, c, k.ns, map[string]map[string]string{
			"google-client": {oauth.KeyClientID: k.clientID, oauth.KeyClientSecret: k.clientSecret},
			"sheet-ingest":  {"token": testenv.SheetIngestToken},
		})
	}
	k.grant = func() string { return google.IssueRefreshToken(k.clientID, strings.Join(k.provider.Scopes, " ")) }
	k.expiring = func(expiry time.Time) {
		if expiry.IsZero() {
			frozen.Store(0)
			return
		}
		frozen.Store(expiry.Add(-google.AccessTokenLifetime).UnixMilli())
	}
	k.issue = func(ctx context.Context, refresh string, expiry time.Time) (map[string]string, error) {
		// A real refresh at the issue instant: Google states the lifetime.
		t, err := k.tokenCall(ctx, refresh)
		if err != nil {
			return nil, err
		}
		return map[string]string{oauth.KeyAccessToken: t.access, oauth.KeyRefreshToken: refresh, oauth.KeyTokenType: "Bearer",
			oauth.KeyExpiry: expiry.UTC().Format(time.RFC3339), oauth.KeySubject: google.DefaultSubject,
			oauth.KeyGrantedAt: expiry.Add(-t.lifetime).UTC().Format(time.RFC3339Nano)}, nil
	}
	k.create = func(ctx context.Context, c client.Client, name, tokenSecret string) error {
		sc := &v1alpha1.SheetConnection{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns}}
		sc.Spec.SpreadsheetID, sc.Spec.Sheet.Title = tokensSheetID, tokensSheetTab
		sc.Spec.OAuth.ClientSecretRef.Name, sc.Spec.OAuth.TokenSecretRef.Name = "google-client", tokenSecret
		sc.Spec.IngestTokenSecretRef.Name = "sheet-ingest"
		sc.Spec.TokenRefreshBefore = metav1.Duration{Duration: k.refreshBefore}
		sc.Spec.ColumnMapping = map[string]v1alpha1.ColumnRef{
			"title": "A", "startedAt": "Started", "endedAt": "C", "durationSeconds": "Seconds",
			"id": "Session ID", "project": "F", "tags": "Tags",
		}
		return c.Create(ctx, sc)
	}
	if err := wire.SetupAll(r.mgr, wire.Deps{Outbound: r.out, OAuth: r.engine, PublicURL: r.hookURL},
		&sheetconnection.Controller{Workers: wire.Workers{N: workers}}); err != nil {
		r.close()
		return nil, err
	}
	return k, r.start(ctx)
}

// issuedToken is what a token endpoint answered a refresh: the new access
// token, the refresh token when it rotated one, and the lifetime the
// engine gives the access token (Google's expires_in, or the lifetime
// assumed for a provider that states none).
type issuedToken struct {
	access, refresh string
	lifetime        time.Duration
}

// tokenCall makes the one call a refresh needs, as the OAuth engine makes
// it: a POST of the refresh_token grant to the kind's token endpoint,
// with the client authenticated by HTTP Basic, in the provider's body
// encoding (Notion's JSON, Google's form). Errors name no token.
func (k *tokenKind) tokenCall(ctx context.Context, refresh string) (issuedToken, error) {
	var body []byte
	contentType := "application/x-www-form-urlencoded"
	if k.provider.Encoding == oauth.JSON {
		body, _ = json.Marshal(map[string]string{"grant_type": "refresh_token", "refresh_token": refresh})
		contentType = "application/json"
	} else {
		body = []byte(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}.Encode())
	}
	req := outbound.Request{Upstream: k.provider.TokenUpstream, Method: http.MethodPost, Path: k.provider.TokenPath, Body: bytes.NewReader(body),
		Header: http.Header{"Content-Type": {contentType}, "Accept": {"application/json"}}}
	req.Header.Set("Authorization", basicAuth(k.clientID, k.clientSecret))
	resp, err := k.out.Do(ctx, req)
	if err != nil {
		return issuedToken{}, fmt.Errorf("%s token endpoint: %w", k.provider.Name, err)
	}
	var answer struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		ExpiresIn    int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(resp.Body, &answer); err != nil || answer.AccessToken == "" {
		return issuedToken{}, errors.New(k.provider.Name + " token endpoint: the answer has no access_token")
	}
	t := issuedToken{access: answer.AccessToken, refresh: answer.RefreshToken, lifetime: k.provider.AssumedLifetime}
	if answer.ExpiresIn > 0 {
		t.lifetime = time.Duration(answer.ExpiresIn) * time.Second
	}
	return t, nil
}

// basicAuth is an Authorization header value of HTTP Basic.
func basicAuth(id, secret string) string {
	r, _ := http.NewRequest(http.MethodGet, "/", http.NoBody)
	r.SetBasicAuth(id, secret)
	return r.Header.Get("Authorization")
}

// tokenPlan is when each object's first access token expires (as its
// token Secret says) and falls due for refresh, and the baseline's grant
// Secret of each.
type tokenPlan struct {
	expires, due map[string]time.Time
	// order is the objects by due instant.
	order             []string
	firstDue, lastDue time.Time
	// lead is how early the controller begins each refresh
	// (grant.RefreshLead of the kind's refreshBefore): every object must
	// be connected lead before firstDue.
	lead time.Duration
	// base holds each baseline grant Secret as last written.
	base map[string]*corev1.Secret
}

// connectGrants creates the kind's objects, each with its token Secret
// (its access token expiring refreshBefore after its due instant: as many
// due at each whole second of the window from firstDue) and the baseline's
// grant Secret, and waits until every object is Ready with the Grant
// phase having recorded that expiry, which must be before the controller
// begins the first refresh, its lead before firstDue.
func connectGrants(ctx context.Context, c client.Client, k *tokenKind, o tokenOptions, firstDue time.Time, l *tokenLog) (*tokenPlan, error) {
	n := o.grants
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.ns}}); err != nil {
		return nil, err
	}
	if err := k.shared(ctx, c); err != nil {
		return nil, err
	}
	began := time.Now()
	p := &tokenPlan{expires: map[string]time.Time{}, due: map[string]time.Time{}, order: make([]string, n), base: map[string]*corev1.Secret{},
		lead: grant.RefreshLead(k.refreshBefore)}
	seconds := max(int(o.window/time.Second), 1)
	data := make([]map[string]string, n)
	// Grants by due second, so that the emulator's clock stands at each
	// second's issue instant once.
	for s := range seconds {
		lo, hi := (s*n+seconds-1)/seconds, ((s+1)*n+seconds-1)/seconds
		due := firstDue.Add(time.Duration(s) * time.Second)
		expiry := due.Add(k.refreshBefore)
		if k.expiring != nil {
			k.expiring(expiry)
		}
		err := parallel(hi-lo, tokenCreators, func(j int) error {
			i := lo + j
			name := tokenObjectName(i)
			p.order[i] = name
			var err error
			data[i], err = k.issue(ctx, k.grant(), expiry)
			return err
		})
		if err != nil {
			return nil, err
		}
		for i := lo; i < hi; i++ {
			p.expires[p.order[i]], p.due[p.order[i]] = expiry, due
		}
	}
	if k.expiring != nil {
		k.expiring(time.Time{})
	}
	p.firstDue, p.lastDue = p.due[p.order[0]], p.due[p.order[n-1]]
	l.plan(p)
	bases := make([]*corev1.Secret, n)
	err := parallel(n, tokenCreators, func(i int) error {
		name := p.order[i]
		if err := c.Create(ctx, managedSecret(k.ns, tokenSecretName(name), data[i])); err != nil {
			return err
		}
		bases[i] = managedSecret(k.ns, baseSecretName(name), map[string]string{oauth.KeyRefreshToken: k.grant()})
		if err := c.Create(ctx, bases[i]); err != nil {
			return err
		}
		return k.create(ctx, c, name, tokenSecretName(name))
	})
	if err != nil {
		return nil, err
	}
	for i, name := range p.order {
		p.base[name] = bases[i]
	}
	created := time.Since(began)
	if err := l.waitConnected(ctx, n, firstDue.Add(-p.lead)); err != nil {
		return nil, fmt.Errorf("%w: raise -token-budget (now %s)", err, o.budget)
	}
	fmt.Printf("setup: %d %ss created in %s (%d clients, with their token Secrets and the baseline's grants); all Ready, each token's expiry in status, %s after the first create\n",
		n, k.kind, created.Round(time.Millisecond), tokenCreators, time.Since(began).Round(time.Millisecond))
	return p, nil
}

// managedSecret is a Secret of string data with the operator's managed-by
// label, as the OAuth engine writes a token Secret: the manager caches it.
func managedSecret(ns, name string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
		Labels: map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue}}, Type: corev1.SecretTypeOpaque, StringData: data}
}
