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

// Command webhook serves the inbound HTTP routes (Notion automations,
// Google push notifications, OAuth callbacks, session ingest, share-link
// resolves). It is stateless: run as many replicas as needed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/contract/session"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

func main() {
	o := newOptions()
	o.bindFlags(flag.CommandLine)
	flag.Parse()
	if err := o.kubeAPI.Validate(); err != nil {
		fmt.Fprintf(flag.CommandLine.Output(), "webhook: %v\n", err)
		os.Exit(2)
	}

	log := setup.InitLogging(&o.zap)
	o.server.Log = log.WithName("webhook")
	o.links.log = o.server.Log
	setupLog := log.WithName("setup")
	setup.SetMemoryLimit(setupLog)
	exitOn := func(err error, msg string) {
		if err != nil {
			setupLog.Error(err, msg)
			os.Exit(1)
		}
	}

	unlimited, err := ctrl.GetConfig()
	exitOn(err, "no Kubernetes configuration")
	cfg := o.kubeAPI.Limit(unlimited)
	ctx := ctrl.SetupSignalHandler()
	// The webhook faces the internet: it caches (and may read) only the
	// managed-by Secrets of its own namespace and the link namespace.
	cl, err := setup.WebhookCluster(ctx, cfg, setup.ParseNamespaces(o.watchNamespaces), []string{o.stateNamespace, o.links.namespace})
	exitOn(err, "cannot create Kubernetes client")
	startCache(ctx, cl, setupLog)
	// The probe's API server check, one request every few seconds, is
	// outside --kube-api-qps: a client busy up to its limit is not down.
	o.server.Ready, err = readiness(unlimited, cl)
	exitOn(err, "cannot build the API server check")
	reg := newRegistry()
	o.server.Registerer, o.server.Gatherer = reg, reg
	exitOn(audit.Setup(log, reg), "cannot set up the audit record")

	out, err := outbound.New(o.upstreams, outbound.Options{Registerer: reg})
	exitOn(err, "cannot build the outbound HTTP client")
	deps := webhook.Deps{Client: cl.GetClient(), APIReader: cl.GetAPIReader(), Upstreams: o.upstreams, Outbound: out,
		PublicURL: o.publicURL, StateNamespace: o.stateNamespace, Log: o.server.Log}
	links, stopLinks, err := receiveLinks(ctx, cfg, cl, out, o.links)
	exitOn(err, "cannot set up the share-link routes")
	deps.Links = links
	// One Event recorder: the share links' audit and the Warning Events a
	// person can act on (a Notion Link that is not arXiv).
	deps.Recorder = links.Audit.Recorder
	deps.SignIn, err = o.signIn(cl, out)
	exitOn(err, "invalid --discord-client-secret")

	families := webhook.Families()
	srv, err := webhook.NewServer(o.server, deps, families...)
	exitOn(err, "cannot build webhook server")
	setupLog.Info("starting webhook server", "addr", o.server.Addr, "metricsAddr", o.server.MetricsAddr, "probeAddr", o.server.ProbeAddr,
		"routeFamilies", len(families), "upstreams", o.upstreams.String())
	exitOn(srv.ListenAndServe(ctx), "webhook server stopped with an error")
	// Only once the server stopped cleanly: the auditor's last flush.
	stopLinks()
}

// startCache starts the informer cache; a cache that stops ends the
// process.
func startCache(ctx context.Context, cl cluster.Cluster, log logr.Logger) {
	go func() {
		if err := cl.Start(ctx); err != nil {
			log.Error(err, "Kubernetes cache stopped")
			os.Exit(1)
		}
	}()
}

// readiness is GET /readyz's check: ready when the cache has synced and
// the API server answers. A replica that cannot reach it cannot record any
// event, so the Service should send traffic to the others.
func readiness(cfg *rest.Config, cl cluster.Cluster) (func(*http.Request) error, error) {
	apiCheck, err := setup.NewAPIServerCheck(cfg, cl.GetHTTPClient())
	if err != nil {
		return nil, err
	}
	cacheSynced := setup.CacheSynced(cl.GetCache())
	return func(r *http.Request) error {
		return errors.Join(cacheSynced(r), apiCheck.Check(r))
	}, nil
}

// newRegistry holds the server's metrics, the outbound client's and the
// Go runtime's and process's.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// signIn is the Discord sign-in of share-link receivers; nil without
// --discord-client-secret.
func (o *options) signIn(cl cluster.Cluster, out *outbound.Client) (*webhook.SignIn, error) {
	if o.discordClient == "" {
		return nil, nil
	}
	key, err := namespacedName(o.discordClient, o.stateNamespace)
	if err != nil {
		return nil, err
	}
	return &webhook.SignIn{Sessions: &session.Store{Reader: cl.GetAPIReader(), Writer: cl.GetClient(), Namespace: o.stateNamespace,
		Engine: setup.Engine(cl, out), ClientKey: key}}, nil
}

func init() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: webhook [flags]\n\nServes Switchboard's inbound HTTP routes on the public listener, and metrics and probes on their own.\n\n")
		flag.PrintDefaults()
	}
}

// linksConfig are the share-link flags.
type linksConfig struct {
	namespace, keys, s3Public string
	presignTTL, auditFlush    time.Duration
	log                       logr.Logger
}

// receiveLinks builds the share-link routes' dependencies: presigning (no
// S3 call is made here), and the auditor with its Event recorder. stop
// waits for the auditor's last flush.
func receiveLinks(ctx context.Context, cfg *rest.Config, cl cluster.Cluster, out *outbound.Client, c linksConfig) (*webhook.Links, func(), error) {
	bc, err := blob.New(blob.Options{Endpoint: out.Endpoint(upstream.S3, ""), PublicEndpoint: c.s3Public, HTTPClient: out.HTTPClient()})
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		return nil, nil, err
	}
	audit := &webhook.Auditor{Client: cl.GetClient(), Reader: cl.GetAPIReader(), Recorder: b.NewRecorder(cl.GetScheme(), "switchboard-webhook"),
		Interval: c.auditFlush, Log: c.log.WithName("audit")}
	done := make(chan struct{})
	go func() { defer close(done); _ = audit.Start(ctx) }()
	// The resolve route reads Secrets only from the cache, and only in the
	// link namespace: the manager copies what it needs there.
	links := &webhook.Links{Namespace: c.namespace, Cache: cl.GetCache(), Blobs: bc,
		DefaultKeys: types.NamespacedName{Namespace: c.namespace, Name: c.keys}, PresignTTL: c.presignTTL, Audit: audit}
	return links, func() { <-done; b.Shutdown() }, nil
}

// namespacedName parses NAME or NAMESPACE/NAME of a Secret that must be in
// namespace: the webhook reads no Secret anywhere else.
func namespacedName(s, namespace string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok {
		ns, name = namespace, s
	}
	if ns == "" || name == "" {
		return types.NamespacedName{}, fmt.Errorf("%q is not NAME or NAMESPACE/NAME", s)
	}
	if ns != namespace {
		return types.NamespacedName{}, fmt.Errorf("the Secret %s/%s is not in --state-namespace %s: the webhook reads Secrets only there", ns, name, namespace)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}
