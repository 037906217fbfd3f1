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
	"context"
	"net"
	"net/http"
	"net/http/httptest"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/switchboard-dev/switchboard/internal/controller/notionintegration"
	"github.com/switchboard-dev/switchboard/internal/controller/papersync"
	"github.com/switchboard-dev/switchboard/internal/controller/wire"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// rig is what the in-process benchmarks share, wired as the end-to-end
// tests wire it: an instant sandbox over HTTP, the outbound policy pointed
// at it, a manager with default options (its requests to the API server
// counted when calls is set), the one OAuth engine, and the webhook
// server's routes on a loopback listener (hookURL). A benchmark adds its
// controllers to mgr, then calls start.
type rig struct {
	box     *sandbox.Server
	ups     *upstream.Set
	out     *outbound.Client
	mgr     ctrl.Manager
	engine  *oauth.Engine
	hookURL string
	calls   *apiCounter
	// hookMetrics is the webhook server's metrics registry.
	hookMetrics *prometheus.Registry
	// hookCluster, when set before start, is the webhook routes' client
	// and cache, as cmd/webhook builds them (webhookCluster); nil serves
	// them on the manager's client.
	hookCluster cluster.Cluster
	ln          net.Listener
	// close stops the sandbox and the listener.
	close func()
}

func newRig(ctx context.Context, cfg *rest.Config, box *sandbox.Server, calls *apiCounter) (*rig, error) {
	r := &rig{box: box, calls: calls}
	sbx := httptest.NewServer(box)
	r.close = sbx.Close
	r.ups = sandbox.Upstreams(sbx.URL)
	var err error
	if r.out, err = outbound.New(r.ups, outbound.Options{}); err != nil {
		r.close()
		return nil, err
	}
	if calls != nil {
		cfg = rest.CopyConfig(cfg)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt, c: calls} })
	}
	// The suites run one after another in one process: each builds the
	// same controllers anew, which controller-runtime's check of unique
	// names would refuse.
	// The cache and client options are the manager binary's (setup); the
	// webhook routes served here read no Secret from the cache.
	scheme := setupScheme()
	r.mgr, err = ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: logr.Discard(),
		Cache: setup.Scope{SecretsOnlyWake: true}.CacheOptions(scheme), Client: client.Options{Cache: ptr.To(setup.ClientOptions())},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err == nil {
		err = index.Register(ctx, r.mgr.GetCache())
	}
	if err == nil {
		r.ln, r.hookURL, err = listenLoopback()
	}
	if err != nil {
		r.close()
		return nil, err
	}
	r.close = func() { _ = r.ln.Close(); sbx.Close() }
	r.engine = &oauth.Engine{Store: &oauth.Store{Reader: r.mgr.GetAPIReader(), Writer: r.mgr.GetClient()}, Out: r.out}
	return r, nil
}

// listenLoopback listens on a free loopback port, for a webhook server,
// and returns the listener and its base URL.
func listenLoopback() (net.Listener, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	return ln, "http://" + ln.Addr().String(), nil
}

// start serves the webhook routes and starts the manager until ctx ends.
func (r *rig) start(ctx context.Context) error {
	// RateLimit is zero: the per-client limit is off, since every
	// benchmark client shares 127.0.0.1.
	r.hookMetrics = prometheus.NewRegistry()
	hookClient, hookReader := r.mgr.GetClient(), r.mgr.GetAPIReader()
	if r.hookCluster != nil {
		hookClient, hookReader = r.hookCluster.GetClient(), r.hookCluster.GetAPIReader()
		go func() { _ = r.hookCluster.Start(ctx) }()
	}
	hook, err := webhook.NewServer(webhook.Options{Log: logr.Discard(), Registerer: r.hookMetrics},
		webhook.Deps{Client: hookClient, APIReader: hookReader, Upstreams: r.ups, Outbound: r.out, Log: logr.Discard(),
			PublicURL: r.hookURL, StateNamespace: "default"}, webhook.Families()...)
	if err != nil {
		r.close()
		return err
	}
	go func() { _ = hook.Serve(ctx, r.ln) }()
	go func() { _ = r.mgr.Start(ctx) }()
	return nil
}

// notionRig is what the Notion benchmarks share: the rig with Notion (one
// workspace) and arXiv in its sandbox, and the Notion controllers, arXiv
// pacing off.
type notionRig struct {
	*rig
	notion *sandbox.Notion
	ws     sandbox.NotionWorkspace
}

// startNotionRig starts the rig on cfg until ctx ends; wsID names the
// workspace. close stops the sandbox.
func startNotionRig(ctx context.Context, cfg *rest.Config, wsID string) (*notionRig, error) {
	r, err := newNotionRig(ctx, cfg, wsID)
	if err != nil {
		return nil, err
	}
	return r, r.start(ctx)
}

// newNotionRig builds the Notion rig, not yet started.
func newNotionRig(ctx context.Context, cfg *rest.Config, wsID string) (*notionRig, error) {
	r := &notionRig{notion: sandbox.NewNotion(),
		ws: sandbox.NotionWorkspace{ID: wsID, Name: "Bench", BotID: "b0000000-0000-4000-8000-" + wsID[len(wsID)-12:]}}
	r.notion.AddClient("bench-client", "bench-secret")
	r.notion.AddPage(r.ws.ID, "Bench page")
	var err error
	if r.rig, err = newRig(ctx, cfg, sandbox.New(r.notion, sandbox.NewArxiv()), nil); err != nil {
		return nil, err
	}
	reports := &notionintegration.Reports{}
	if err := wire.SetupAll(r.mgr, wire.Deps{Outbound: r.out, OAuth: r.engine},
		&notionintegration.Controller{Reports: reports}, &papersync.Controller{Integrations: reports}); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// createSecrets creates the Secrets of data (name → string data) in ns.
func createSecrets(ctx context.Context, c client.Client, ns string, data map[string]map[string]string) error {
	for name, d := range data {
		if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: d}); err != nil {
			return err
		}
	}
	return nil
}
