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
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"

	"flag"
	"fmt"
	"net/http"
	"os"

	"github.com/switchboard-dev/switchboard/internal/blob"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/session"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

func main() {
	opts := webhook.Options{}
	var publicURL, stateNamespace string
	var linkNamespace, linkKeys, s3Public, discordClient, watchNamespaces string
	var presignTTL, auditFlush time.Duration
	ups := upstream.NewSet()
	flag.StringVar(&opts.Addr, "bind-address", ":9443", "Address of the public listener: GET / and the inbound routes only.")
	flag.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8080", "Address the Prometheus /metrics endpoint binds to, apart from the public listener; 0 disables it.")
	flag.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to, apart from the public listener; 0 disables them.")
	flag.StringVar(&publicURL, "public-url", "", "Externally visible base URL of this server (for OAuth redirect URIs and the webhook URLs shown to people), e.g. https://hooks.example.com.")
	flag.StringVar(&stateNamespace, "state-namespace", envOr("POD_NAMESPACE", "default"), "Namespace of the OAuth state Secrets; the default is the pod's namespace, from $POD_NAMESPACE.")
	flag.StringVar(&linkNamespace, "link-namespace", envOr("POD_NAMESPACE", "default"), "Namespace of the ReceiveLink short-token objects (the manager's --link-namespace).")
	flag.StringVar(&linkKeys, "link-key-secret", "switchboard-link-keys", "Secret in --link-namespace with the keys of ReceiveLinks naming no encryptionKeySecretRef (the manager's --link-key-secret).")
	flag.StringVar(&s3Public, "s3-public-endpoint", "", "Base URL of the S3 API as receivers' browsers reach it, for presigned download URLs; default the --upstream s3 URL.")
	flag.DurationVar(&presignTTL, "presign-ttl", webhook.DefaultPresignTTL, "How long a resolved share link's download URL works (never past the link's expiry).")
	flag.DurationVar(&auditFlush, "audit-flush-interval", webhook.DefaultAuditFlush, "How often resolve counts are added to ReceiveLinks' status (each resolve's Event is sent at once).")
	flag.StringVar(&discordClient, "discord-client-secret", "", "Secret in --state-namespace (NAME, or NAMESPACE/NAME with that namespace) with the Discord application's client_id and client_secret, for receivers' Discord sign-in; empty disables it (links restricted to a Discord user then answer 503).")
	flag.StringVar(&watchNamespaces, "watch-namespaces", "", "Comma-separated namespaces whose resources the routes serve (the manager's --watch-namespaces); empty serves every namespace.")
	flag.Int64Var(&opts.MaxBodyBytes, "max-body-bytes", webhook.DefaultMaxBodyBytes, "Largest request body accepted; larger ones get 413.")
	flag.DurationVar(&opts.ReadHeaderTimeout, "read-header-timeout", webhook.DefaultReadHeaderTimeout, "Time a client has to send its request headers.")
	flag.DurationVar(&opts.ReadTimeout, "read-timeout", webhook.DefaultReadTimeout, "Time a client has to send its whole request.")
	flag.DurationVar(&opts.WriteTimeout, "write-timeout", webhook.DefaultWriteTimeout, "Time allowed to write an answer.")
	flag.DurationVar(&opts.IdleTimeout, "idle-timeout", webhook.DefaultIdleTimeout, "Time an idle keep-alive connection is kept.")
	flag.DurationVar(&opts.ShutdownDelay, "shutdown-delay", webhook.DefaultShutdownDelay, "Time the server keeps serving on SIGTERM, with /readyz failing and every answer closing its connection, before it stops accepting connections: the time the endpoints need to drop the pod.")
	flag.DurationVar(&opts.ShutdownTimeout, "shutdown-timeout", webhook.DefaultShutdownTimeout, "Time in-flight requests get to finish on SIGTERM, after --shutdown-delay.")
	flag.Float64Var(&opts.RateLimit.Rate, "rate-limit", webhook.DefaultRateLimit, "Requests per second allowed per client address; 0 disables the limit.")
	flag.IntVar(&opts.RateLimit.Burst, "rate-limit-burst", webhook.DefaultBurst, "Requests a client may make at once.")
	flag.BoolVar(&opts.RateLimit.TrustForwardedFor, "trust-forwarded-for", false, "Key the rate limit by the first X-Forwarded-For address (only behind a proxy that sets it).")
	flag.Var(ups, "upstream", "Base URL of an outside API as NAME=URL (repeatable); the webhook server calls only the OAuth token endpoints.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()

	log := setup.InitLogging(&zapOpts)
	opts.Log = log.WithName("webhook")
	setupLog := log.WithName("setup")

	cfg, err := ctrl.GetConfig()
	if err != nil {
		setupLog.Error(err, "no Kubernetes configuration")
		os.Exit(1)
	}
	scheme := setup.Scheme()
	cl, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = scheme
		// The webhook faces the internet: it caches (and may read) only the
		// managed-by Secrets of its own namespace and the link namespace.
		o.Cache = setup.Scope{Watch: setup.ParseNamespaces(watchNamespaces), Own: []string{stateNamespace, linkNamespace},
			SecretsOnlyInOwn: true}.CacheOptions(scheme)
	})
	if err != nil {
		setupLog.Error(err, "cannot create Kubernetes client")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := index.Register(ctx, cl.GetFieldIndexer()); err != nil {
		setupLog.Error(err, "cannot register field indexes")
		os.Exit(1)
	}

	go func() {
		if err := cl.Start(ctx); err != nil {
			setupLog.Error(err, "Kubernetes cache stopped")
			os.Exit(1)
		}
	}()
	// Ready when the cache has synced and the API server answers: a
	// replica that cannot reach it cannot record any event, so the Service
	// should send traffic to the others.
	apiCheck, err := setup.NewAPIServerCheck(cfg, cl.GetHTTPClient())
	if err != nil {
		setupLog.Error(err, "cannot build the API server check")
		os.Exit(1)
	}
	cacheSynced := setup.CacheSynced(cl.GetCache())
	opts.Ready = func(r *http.Request) error {
		return errors.Join(cacheSynced(r), apiCheck.Check(r))
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opts.Registerer, opts.Gatherer = reg, reg

	out, err := outbound.New(ups, outbound.Options{Registerer: reg})
	if err != nil {
		setupLog.Error(err, "cannot build the outbound HTTP client")
		os.Exit(1)
	}
	deps := webhook.Deps{
		Client:         cl.GetClient(),
		APIReader:      cl.GetAPIReader(),
		Upstreams:      ups,
		Outbound:       out,
		PublicURL:      publicURL,
		StateNamespace: stateNamespace,
		Log:            opts.Log,
	}
	links, stopLinks, err := receiveLinks(ctx, cfg, cl, out, linksConfig{namespace: linkNamespace, keys: linkKeys,
		s3Public: s3Public, presignTTL: presignTTL, auditFlush: auditFlush, log: opts.Log})
	if err != nil {
		setupLog.Error(err, "cannot set up the share-link routes")
		os.Exit(1)
	}
	defer stopLinks()
	deps.Links = links
	if discordClient != "" {
		key, err := namespacedName(discordClient, stateNamespace)
		if err != nil {
			setupLog.Error(err, "invalid --discord-client-secret")
			os.Exit(1)
		}
		deps.SignIn = &webhook.SignIn{Sessions: &session.Store{Reader: cl.GetAPIReader(), Writer: cl.GetClient(), Namespace: stateNamespace,
			Engine: &oauth.Engine{Store: &oauth.Store{Reader: cl.GetAPIReader(), Writer: cl.GetClient()}, Out: out}, ClientKey: key}}
	}
	families := webhook.Registered()
	srv, err := webhook.NewServer(opts, deps, families...)
	if err != nil {
		setupLog.Error(err, "cannot build webhook server")
		os.Exit(1)
	}
	setupLog.Info("starting webhook server", "addr", opts.Addr, "metricsAddr", opts.MetricsAddr, "probeAddr", opts.ProbeAddr,
		"routeFamilies", len(families), "upstreams", ups.String())
	if err := srv.ListenAndServe(ctx); err != nil {
		setupLog.Error(err, "webhook server stopped with an error")
		os.Exit(1)
	}
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

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
