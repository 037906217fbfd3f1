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

package testenv

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// Eventually polls cond every 25 ms for up to 20 s, failing the test with
// what it waited for.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Webhook is the webhook server of an end-to-end suite, serving every
// registered route family on a loopback listener.
type Webhook struct {
	// URL is its base URL, also its public URL.
	URL string
	// Links and SignIn, when set before Serve, serve share links and the
	// Discord sign-in.
	Links  *webhook.Links
	SignIn *webhook.SignIn
	// Registerer, when set before Serve, receives the server's metrics.
	Registerer prometheus.Registerer
	// StateNamespace is the server's own namespace ("default" when empty).
	StateNamespace string
	// SignUp bounds the sign-ups' starts (none but the default sign-ups
	// in progress when zero).
	SignUp webhook.SignUpLimits
	// HandoverWait is how long an OAuth callback waits for the manager
	// (oauth.DefaultHandoverWait when zero).
	HandoverWait time.Duration
	// Cache, when set before Serve, wraps the cached client the routes
	// read through (a test's cache that lags the API server).
	Cache func(client.Client) client.Client
	srv   *httptest.Server
}

// NewWebhook listens on loopback; Serve starts it on the manager's cache
// (the URL is known first, so controllers can be given it).
func NewWebhook() *Webhook {
	srv := httptest.NewUnstartedServer(nil)
	return &Webhook{URL: "http://" + srv.Listener.Addr().String(), srv: srv}
}

// Serve builds the webhook server on mgr's client and starts it.
func (w *Webhook) Serve(mgr cluster.Cluster, ups *upstream.Set, out *outbound.Client, log logr.Logger) error {
	stateNS := w.StateNamespace
	if stateNS == "" {
		stateNS = "default"
	}
	cached := mgr.GetClient()
	if w.Cache != nil {
		cached = w.Cache(cached)
	}
	hook, err := webhook.NewServer(webhook.Options{Log: log, Registerer: w.Registerer, SignUp: w.SignUp},
		webhook.Deps{Client: cached, APIReader: mgr.GetAPIReader(), Upstreams: ups, Outbound: out, Log: logr.Discard(),
			PublicURL: w.URL, StateNamespace: stateNS, Links: w.Links, SignIn: w.SignIn, Recorder: mgr.GetEventRecorder("switchboard-webhook"),
			HandoverWait: w.HandoverWait},
		webhook.Families()...)
	if err != nil {
		return err
	}
	w.srv.Config.Handler = hook.Handler()
	w.srv.Start()
	return nil
}

// Close stops the server.
func (w *Webhook) Close() { w.srv.Close() }

// StartManager runs mgr (a manager, or a cluster: its cache) until the
// returned stop function is called.
func StartManager(mgr interface{ Start(context.Context) error }) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return func() { cancel(); <-done }
}

// CalendarWatch creates, in ns, a CalendarWatch "visits" on calendarID
// with ConfigMaps as its appointments, its Google client Secret
// ("google-client": cal-client / cal-secret) and its token Secret
// ("google-token", holding refreshToken; also an empty "fresh-token" for
// tests that connect through the OAuth routes). change edits the watch
// before it is created.
func CalendarWatch(ctx context.Context, c client.Client, ns, calendarID, refreshToken string, change func(*v1alpha1.CalendarWatch)) error {
	for name, data := range map[string]map[string]string{
		"google-client": {"client_id": "cal-client", "client_secret": "cal-secret"},
		"google-token":  {"refresh_token": refreshToken},
		"fresh-token":   {},
	} {
		if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: data}); err != nil {
			return err
		}
	}
	w := &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Name: "visits", Namespace: ns}}
	w.Spec.CalendarID = calendarID
	w.Spec.OAuth.ClientSecretRef.Name = "google-client"
	w.Spec.OAuth.TokenSecretRef.Name = "google-token"
	w.Spec.Sink.Objects = &v1alpha1.ObjectSink{APIVersion: "v1", Kind: "ConfigMap"}
	if change != nil {
		change(w)
	}
	return c.Create(ctx, w)
}

// SheetHeader is row 1 of the sheet SheetConnection maps.
var SheetHeader = []string{"Title", "Started", "Ended", "Seconds", "Session ID", "Project", "Tags"}

// SheetIngestToken is the ingest token of SheetConnection's Secret
// "sheet-ingest".
const SheetIngestToken = "ingest-token-0123456789abcdef"

// SheetConnection creates a SheetConnection "timesheet" appending to the
// sheet sheetTitle of spreadsheetID, mapping title, startedAt, endedAt,
// durationSeconds, id, project and tags to the columns of SheetHeader
// (some by letter, some by header name), with its Google client Secret
// ("google-client": sheet-client / sheet-secret), its token Secret
// ("google-token", holding refreshToken; none when it is empty) and its
// ingest Secret ("sheet-ingest": SheetIngestToken). change edits the
// connection before it is created.
func SheetConnection(ctx context.Context, c client.Client, ns, spreadsheetID, sheetTitle, refreshToken string, change func(*v1alpha1.SheetConnection)) error {
	secrets := map[string]map[string]string{
		"google-client": {"client_id": "sheet-client", "client_secret": "sheet-secret"},
		"sheet-ingest":  {"token": SheetIngestToken},
	}
	if refreshToken != "" {
		secrets["google-token"] = map[string]string{"refresh_token": refreshToken, "granted_at": time.Now().UTC().Format(time.RFC3339Nano)}
	}
	for name, data := range secrets {
		if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: data}); err != nil {
			return err
		}
	}
	sc := &v1alpha1.SheetConnection{ObjectMeta: metav1.ObjectMeta{Name: "timesheet", Namespace: ns}}
	sc.Spec.SpreadsheetID = spreadsheetID
	sc.Spec.Sheet.Title = sheetTitle
	sc.Spec.OAuth.ClientSecretRef.Name = "google-client"
	sc.Spec.OAuth.TokenSecretRef.Name = "google-token"
	sc.Spec.IngestTokenSecretRef.Name = "sheet-ingest"
	sc.Spec.ColumnMapping = map[string]v1alpha1.ColumnRef{
		"title": "A", "startedAt": "Started", "endedAt": "C", "durationSeconds": "Seconds",
		"id": "Session ID", "project": "F", "tags": "Tags",
	}
	if change != nil {
		change(sc)
	}
	return c.Create(ctx, sc)
}
