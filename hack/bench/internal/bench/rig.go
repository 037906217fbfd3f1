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

package bench

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// Rig is what the in-process benchmarks share, wired as the end-to-end
// tests wire it: an instant sandbox over HTTP, the manager cmd/manager
// builds (wire.Operator: the outbound policy pointed at the sandbox, the
// one OAuth engine, the benchmark's controllers; its requests to the API
// server counted when Calls is set), and the webhook server's routes on a
// loopback listener (HookURL). A benchmark names its controllers to
// NewRig, then calls Start.
type Rig struct {
	Box       *sandbox.Server
	Upstreams *upstream.Set
	Out       *outbound.Client
	Mgr       ctrl.Manager
	Engine    *oauth.Engine
	HookURL   string
	// SandboxURL is the sandbox's base URL, for a binary's --upstream
	// flags (sandbox.UpstreamFlags).
	SandboxURL string
	Calls      *APICounter
	// HookMetrics is the webhook server's metrics registry.
	HookMetrics *prometheus.Registry
	// ExternalHook, when set before Start, is the base URL of a webhook
	// server running elsewhere (bin/webhook, StartWebhook): Start serves
	// none here, and HookURL is it.
	ExternalHook string
	// StopManager stops the manager Start started and waits until it has
	// stopped; the webhook keeps serving.
	StopManager func()
	ln          net.Listener
	// Close stops the sandbox and the listener.
	Close func()
}

// NewRig builds the rig on cfg around box, not yet started: the manager
// operator returns (wire.Operator, as a suite runs it: testenv.Operator)
// given the rig's webhook address and sandbox; calls, when not nil,
// counts the manager's requests to the API server. The webhook routes
// served here read no Secret from the cache.
func NewRig(ctx context.Context, cfg *rest.Config, box *sandbox.Server, calls *APICounter, operator func(*Rig) wire.Operator) (*Rig, error) {
	r := &Rig{Box: box, Calls: calls}
	sbx := httptest.NewServer(box)
	r.Upstreams, r.SandboxURL = sandbox.Upstreams(sbx.URL), sbx.URL
	var err error
	if r.ln, r.HookURL, err = ListenLoopback(); err != nil {
		sbx.Close()
		return nil, err
	}
	r.Close = func() { _ = r.ln.Close(); sbx.Close() }
	if calls != nil {
		cfg = Counted(cfg, calls)
	}
	o := operator(r)
	o.Upstreams, o.Indexes = r.Upstreams, index.Both
	b, err := testenv.Operator(o).Build(ctx, cfg)
	if err != nil {
		r.Close()
		return nil, err
	}
	r.Mgr, r.Out, r.Engine = b.Manager, b.Deps.Outbound, b.Deps.OAuth
	return r, nil
}

// ListenLoopback listens on a free loopback port, for a webhook server,
// and returns the listener and its base URL.
func ListenLoopback() (net.Listener, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	return ln, "http://" + ln.Addr().String(), nil
}

// Start serves the webhook routes (unless ExternalHook serves them) and
// starts the manager until ctx ends.
func (r *Rig) Start(ctx context.Context) error {
	if r.ExternalHook != "" {
		r.HookURL = r.ExternalHook
		r.startManager(ctx)
		return nil
	}
	// RateLimit is zero: the per-client limit is off, since every
	// benchmark client shares 127.0.0.1.
	r.HookMetrics = prometheus.NewRegistry()
	hook, err := webhook.NewServer(webhook.Options{Log: logr.Discard(), Registerer: r.HookMetrics},
		webhook.Deps{Client: r.Mgr.GetClient(), APIReader: r.Mgr.GetAPIReader(), Upstreams: r.Upstreams, Outbound: r.Out, Log: logr.Discard(),
			PublicURL: r.HookURL, StateNamespace: "default"}, webhook.Families()...)
	if err != nil {
		r.Close()
		return err
	}
	go func() { _ = hook.Serve(ctx, r.ln) }()
	r.startManager(ctx)
	return nil
}

// startManager starts the manager until ctx ends or StopManager is
// called.
func (r *Rig) startManager(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = r.Mgr.Start(ctx)
	}()
	r.StopManager = func() { cancel(); <-stopped }
}

// CreateSecrets creates the Secrets of data (name → string data) in ns.
func CreateSecrets(ctx context.Context, c client.Client, ns string, data map[string]map[string]string) error {
	for name, d := range data {
		if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: d}); err != nil {
			return err
		}
	}
	return nil
}

// APICounter counts a client's requests to the API server by kind.
type APICounter struct{ reads, writes, watches atomic.Int64 }

// Snapshot is the reads, writes and watches counted so far.
func (c *APICounter) Snapshot() [3]int64 {
	return [3]int64{c.reads.Load(), c.writes.Load(), c.watches.Load()}
}

// Counted is a copy of cfg whose requests calls counts.
func Counted(cfg *rest.Config, calls *APICounter) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt, c: calls} })
	return cfg
}

type countingTransport struct {
	next http.RoundTripper
	c    *APICounter
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case req.Method == http.MethodGet && strings.Contains(req.URL.RawQuery, "watch=true"):
		t.c.watches.Add(1)
	case req.Method == http.MethodGet:
		t.c.reads.Add(1)
	default:
		t.c.writes.Add(1)
	}
	return t.next.RoundTrip(req)
}
