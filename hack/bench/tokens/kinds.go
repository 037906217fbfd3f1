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

package tokens

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/internal/controller/notionintegration"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// tokenKind is one OAuth kind as the benchmark drives it, with its rig.
type tokenKind struct {
	*bench.Rig
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
func tokenObjectName(i int) string { return fmt.Sprintf("g%05d", i) }

func tokenSecretName(name string) string { return "tok-" + name }

func baseSecretName(name string) string { return "base-" + name }

// startNotionTokens starts a manager running the NotionIntegration
// controller alone, with workers (0: its default), against a sandbox with
// one Notion workspace every grant is for.
func startNotionTokens(ctx context.Context, cfg *rest.Config, workers int) (*tokenKind, error) {
	notion := sandbox.NewNotion()
	notion.AddClient("bench-client", "bench-secret")
	ws := sandbox.NotionWorkspace{ID: "be4c0000-0000-4000-8000-000000000021", Name: "Bench", BotID: "b0000000-0000-4000-8000-000000000021"}
	notion.AddPage(ws.ID, "Bench page")
	r, err := bench.NewRig(ctx, cfg, sandbox.New(notion), &bench.APICounter{}, func(r *bench.Rig) wire.Operator {
		return wire.Operator{Kinds: []wire.Kind{&notionintegration.Controller{Workers: wire.Workers{N: workers}}}, Deps: wire.Deps{PublicURL: r.HookURL}}
	})
	if err != nil {
		return nil, err
	}
	k := &tokenKind{Rig: r, kind: "NotionIntegration", controller: "notionintegration", ns: "bench-tok-notion",
		workers: wire.Workers{N: workers}.Or(notionintegration.DefaultWorkers), provider: oauth.Notion.WithAssumedLifetime(7 * 24 * time.Hour),
		tokenRoute: sandbox.NotionOAuthToken, clientID: "bench-client", clientSecret: "bench-secret",
		refreshBefore: notionRefreshBefore, object: &v1alpha1.NotionIntegration{}}
	k.shared = func(ctx context.Context, c client.Client) error {
		return bench.CreateSecrets(ctx, c, k.ns, map[string]map[string]string{
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
	return k, r.Start(ctx)
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
	r, err := bench.NewRig(ctx, cfg, sandbox.New(google, sheets), &bench.APICounter{}, func(r *bench.Rig) wire.Operator {
		return wire.Operator{Kinds: []wire.Kind{&sheetconnection.Controller{Workers: wire.Workers{N: workers}}}, Deps: wire.Deps{PublicURL: r.HookURL}}
	})
	if err != nil {
		return nil, err
	}
	k := &tokenKind{Rig: r, kind: "SheetConnection", controller: "sheetconnection", ns: "bench-tok-sheets",
		workers: wire.Workers{N: workers}.Or(sheetconnection.DefaultWorkers), provider: targets.Sheets.Provider,
		tokenRoute: sandbox.GoogleOAuthToken, clientID: "sheet-client", clientSecret: "sheet-secret",
		refreshBefore: sheetsRefreshBefore, object: &v1alpha1.SheetConnection{}}
	k.shared = func(ctx context.Context, c client.Client) error {
		return bench.CreateSecrets(ctx, c, k.ns, map[string]map[string]string{
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
	k.create = k.createSheetConnection
	return k, r.Start(ctx)
}

// createSheetConnection creates the SheetConnection name, on the bench
// spreadsheet, whose token Secret is tokenSecret.
func (k *tokenKind) createSheetConnection(ctx context.Context, c client.Client, name, tokenSecret string) error {
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
