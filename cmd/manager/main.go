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

// Command manager runs the Switchboard controllers: one per kind, all
// outbound SaaS calls, retries and token refresh. It is leader-elected.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
	_ "time/tzdata" // spreadsheet time zones are IANA names; a static image has no zoneinfo

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/switchboard-dev/switchboard/internal/arxiv"
	"github.com/switchboard-dev/switchboard/internal/controller"
	"github.com/switchboard-dev/switchboard/internal/controller/receivelink"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/session"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/upstream"
)

func main() {
	var (
		metricsAddr, probeAddr, leaderNamespace string
		leaderElect                             bool
		leaseDuration, outboundTimeout          time.Duration
		renewDeadline, retryPeriod              time.Duration
		arxivInterval                           time.Duration
		links                                   controller.LinksDeps
		linkKeys, watchNamespaces               string
		sinkDenyPrivate                         bool
	)
	ups := upstream.NewSet()
	var oauthOpts oauthFlags
	oauthOpts.bind(flag.CommandLine)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "Address the Prometheus metrics endpoint binds to; 0 disables it.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to; 0 disables them.")
	flag.BoolVar(&leaderElect, "leader-elect", false, "Elect a leader so that only one replica reconciles (enable when running more than one).")
	flag.StringVar(&leaderNamespace, "leader-election-namespace", "", "Namespace of the leader election Lease (default: the pod's namespace).")
	flag.DurationVar(&leaseDuration, "leader-election-lease-duration", defaultLeaseDuration, "How long a lease lasts without renewal: a standby takes over a leader that stopped renewing after this long.")
	flag.DurationVar(&renewDeadline, "leader-election-renew-deadline", defaultRenewDeadline, "How long the leader keeps trying to renew its lease (through an API server outage, say) before it gives up leadership and exits, for the kubelet to restart it; shorter than the lease duration.")
	flag.DurationVar(&retryPeriod, "leader-election-retry-period", defaultRetryPeriod, "Time between two attempts to acquire or renew the lease; the renew deadline must exceed 1.2 times it.")
	flag.DurationVar(&outboundTimeout, "outbound-timeout", outbound.DefaultTimeout, "Timeout of each outbound request to an upstream API.")
	flag.DurationVar(&arxivInterval, "arxiv-min-interval", arxiv.MinInterval, "Least time between two arXiv API requests (arXiv asks for 3s); 0 disables pacing, for benchmarks against the sandbox only.")
	flag.StringVar(&links.Namespace, "link-namespace", podNamespace(), "Namespace of the ReceiveLink short-token objects (the webhook's --link-namespace); the default is the pod's namespace.")
	flag.StringVar(&linkKeys, "link-key-secret", "switchboard-link-keys", "Secret in --link-namespace with the AES-256 keys that seal ReceiveLinks naming no encryptionKeySecretRef; created with one key when missing.")
	flag.Float64Var(&links.DeleteRate, "blob-delete-rate", receivelink.DefaultDeleteRate, "Most S3 deletes per second of expired ReceiveLinks' blobs, across the manager.")
	flag.IntVar(&links.Workers, "link-workers", receivelink.DefaultWorkers, "How many ReceiveLinks the manager reconciles at once.")
	flag.DurationVar(&links.SweepInterval, "link-sweep-interval", receivelink.DefaultSweepInterval, "How often the ReceiveLink sweep looks for short-token objects whose link is gone and links past their expiry.")
	flag.BoolVar(&sinkDenyPrivate, "sink-deny-private-networks", false, "Also refuse HTTP sinks (a CalendarWatch's spec.sink.http.url) at private addresses (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7), where cluster-local Services are; loopback, link-local (the cloud metadata service) and unspecified addresses are always refused.")
	flag.StringVar(&watchNamespaces, "watch-namespaces", "", "Comma-separated namespaces whose resources the manager reconciles (a namespaced install: RBAC as Roles in each); empty watches every namespace.")
	flag.Var(ups, "upstream", "Base URL of an outside API as NAME=URL (repeatable). Names: "+names()+". Defaults are the real public endpoints; outbound requests reach only these hosts.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	if err := validateLeaderElection(leaseDuration, renewDeadline, retryPeriod); err != nil {
		fmt.Fprintf(flag.CommandLine.Output(), "manager: %v\n", err)
		os.Exit(2)
	}

	log := setup.InitLogging(&zapOpts)
	setupLog := log.WithName("setup")

	cfg, err := ctrl.GetConfig()
	if err != nil {
		setupLog.Error(err, "no Kubernetes configuration")
		os.Exit(1)
	}
	scheme := setup.Scheme()
	clientOpts := setup.ClientOptions()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		Cache: setup.Scope{Watch: setup.ParseNamespaces(watchNamespaces),
			Own: []string{oauthOpts.stateNamespace, links.Namespace}}.CacheOptions(scheme),
		Client:                        ctrlClientOptions(clientOpts),
		Metrics:                       metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:        probeAddr,
		LeaderElection:                leaderElect,
		LeaderElectionID:              "manager.switchboard.dev",
		LeaderElectionNamespace:       leaderNamespace,
		LeaseDuration:                 &leaseDuration,
		RenewDeadline:                 &renewDeadline,
		RetryPeriod:                   &retryPeriod,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		setupLog.Error(err, "cannot create manager")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := index.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		setupLog.Error(err, "cannot register field indexes")
		os.Exit(1)
	}
	out, err := outbound.New(ups, outbound.Options{Timeout: outboundTimeout, Registerer: ctrlmetrics.Registry,
		Sink: outbound.SinkPolicy{DenyPrivateNetworks: sinkDenyPrivate}})
	if err != nil {
		setupLog.Error(err, "cannot build the outbound HTTP client")
		os.Exit(1)
	}
	engine := &oauth.Engine{Store: &oauth.Store{Reader: mgr.GetAPIReader(), Writer: mgr.GetClient()}, Out: out}
	deps := Deps{Outbound: out, OAuth: engine, ArxivPacer: &arxiv.Pacer{Interval: arxivInterval}}
	deps.PublicURL = oauthOpts.publicURL
	links.DefaultKeys = types.NamespacedName{Namespace: links.Namespace, Name: linkKeys}
	links.Registerer = ctrlmetrics.Registry
	deps.Links = links
	for _, c := range controllers {
		if err := c.setup(mgr, deps); err != nil {
			setupLog.Error(err, "cannot set up controller", "controller", c.name)
			os.Exit(1)
		}
	}
	if err := controller.SetupOAuthReceiver(mgr, engine, oauthOpts.stateNamespace); err != nil {
		setupLog.Error(err, "cannot add the OAuth grant receiver")
		os.Exit(1)
	}
	if err := addStateCollector(mgr, oauthOpts.stateNamespace); err != nil {
		setupLog.Error(err, "cannot add the OAuth state collector")
		os.Exit(1)
	}
	// Receivers' Discord sessions live beside the OAuth states (the
	// webhook's --state-namespace); expired ones are deleted on a timer.
	if err := mgr.Add(&session.Collector{Client: mgr.GetClient(), Namespace: oauthOpts.stateNamespace}); err != nil {
		setupLog.Error(err, "cannot add the session collector")
		os.Exit(1)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "cannot add health check")
		os.Exit(1)
	}
	// Ready once the informer cache has synced: before that the
	// controllers would read an empty world.
	if err := mgr.AddReadyzCheck("cache-synced", setup.CacheSynced(mgr.GetCache())); err != nil {
		setupLog.Error(err, "cannot add readiness check")
		os.Exit(1)
	}
	setupLog.Info("starting manager", "upstreams", ups.String(), "controllers", len(controllers))
	if err := mgr.Start(ctx); err != nil {
		setupLog.Error(err, "manager stopped with an error")
		os.Exit(1)
	}
}

func names() string {
	s := ""
	for i, n := range upstream.Names() {
		if i > 0 {
			s += ", "
		}
		s += string(n)
	}
	return s
}

func init() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: manager [flags]\n\nRuns the Switchboard controllers.\n\n")
		flag.PrintDefaults()
	}
}
