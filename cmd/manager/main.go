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
	"net/http"
	"os"
	_ "time/tzdata" // spreadsheet time zones are IANA names; a static image has no zoneinfo

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/controller/grant"
	"github.com/switchboard-dev/switchboard/internal/controller/kinds"
	"github.com/switchboard-dev/switchboard/internal/controller/wire"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/resmetrics"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

func main() {
	var opts options
	opts.bind(flag.CommandLine)
	controllers := kinds.All(podNamespace())
	for _, k := range controllers {
		k.BindFlags(flag.CommandLine)
	}
	flag.Parse()
	if err := opts.validate(); err != nil {
		fmt.Fprintf(flag.CommandLine.Output(), "manager: %v\n", err)
		os.Exit(2)
	}
	setupLog := setup.InitLogging(&opts.zap).WithName("setup")
	setup.SetMemoryLimit(setupLog)
	fail := func(err error, msg string, kv ...any) {
		setupLog.Error(err, msg, kv...)
		os.Exit(1)
	}
	if err := audit.Setup(ctrl.Log, ctrlmetrics.Registry); err != nil {
		fail(err, "cannot set up the audit record")
	}
	resources := &resmetrics.Handler{}
	mgr, err := newManager(&opts, wire.Namespaces(controllers), resources)
	if err != nil {
		fail(err, "cannot create manager")
	}
	resources.Reader, resources.Namespaces, resources.Serving = mgr.GetCache(), setup.ParseNamespaces(opts.watchNamespaces), elected(mgr.Elected())
	ctx := ctrl.SetupSignalHandler()
	if err := index.RegisterFor(ctx, mgr.GetCache(), index.Manager); err != nil {
		fail(err, "cannot register field indexes")
	}
	out, err := outbound.New(opts.upstreams, outbound.Options{Timeout: opts.outboundTimeout, Registerer: ctrlmetrics.Registry,
		Sink: outbound.SinkPolicy{DenyPrivateNetworks: opts.sinkDenyPrivate}})
	if err != nil {
		fail(err, "cannot build the outbound HTTP client")
	}
	engine := &oauth.Engine{Store: &oauth.Store{Reader: mgr.GetAPIReader(), Writer: mgr.GetClient()}, Out: out}
	deps := wire.Deps{Outbound: out, OAuth: engine, PublicURL: opts.publicURL, StateNamespace: opts.stateNamespace,
		Registerer: ctrlmetrics.Registry, Shard: opts.shard,
		Watch: setup.ParseNamespaces(opts.watchNamespaces)}
	for _, k := range controllers {
		if err := k.Setup(mgr, deps); err != nil {
			fail(err, "cannot set up controller", "controller", k.Name())
		}
	}
	if err := grant.SetupHandover(mgr, engine, opts.stateNamespace, opts.shard, wire.SignUps(controllers)...); err != nil {
		fail(err, "cannot add the OAuth grant receiver")
	}
	if err := addCollectors(mgr, opts.stateNamespace); err != nil {
		fail(err, "cannot add the collectors")
	}
	if err := addChecks(mgr); err != nil {
		fail(err, "cannot add the health checks")
	}
	setupLog.Info("starting manager", "upstreams", opts.upstreams.String(), "controllers", len(controllers))
	if err := mgr.Start(ctx); err != nil {
		fail(err, "manager stopped with an error")
	}
}

// newManager builds the manager: its cache scoped to the watched
// namespaces plus the operator's own (OAuth states, short-token objects),
// and its metrics server serving resources' metrics beside its own.
func newManager(o *options, own []string, resources http.Handler) (ctrl.Manager, error) {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("no Kubernetes configuration: %w", err)
	}
	scheme := setup.Scheme()
	cache := setup.ClientOptions()
	mo := ctrl.Options{
		Scheme: scheme,
		Cache: setup.Scope{Watch: setup.ParseNamespaces(o.watchNamespaces),
			Own: append([]string{o.stateNamespace}, own...), Shard: o.shard, SecretsOnlyWake: true}.CacheOptions(scheme),
		Client: client.Options{Cache: &cache},
		Metrics: metricsserver.Options{BindAddress: o.metricsAddr,
			ExtraHandlers: map[string]http.Handler{resmetrics.Path: resources}},
		HealthProbeBindAddress:        o.probeAddr,
		PprofBindAddress:              o.pprofAddr,
		LeaderElection:                o.leader.elect,
		LeaderElectionID:              o.leader.id,
		LeaderElectionNamespace:       o.leader.namespace,
		LeaseDuration:                 &o.leader.leaseDuration,
		RenewDeadline:                 &o.leader.renewDeadline,
		RetryPeriod:                   &o.leader.retryPeriod,
		LeaderElectionReleaseOnCancel: true,
	}
	if o.kubeAPI.QPS > 0 {
		// The Lease is renewed outside --kube-api-qps: a client busy up to
		// its limit must not cost the leader its lease.
		mo.LeaderElectionConfig = cfg
	}
	return ctrl.NewManager(o.kubeAPI.Limit(cfg), mo)
}

// elected reports whether the manager leads: only the leader serves the
// resources' metrics, so that replicas do not repeat each other's series.
func elected(ch <-chan struct{}) func() bool {
	return func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
}

// addChecks adds the probes: alive, and ready once the informer cache has
// synced (before that the controllers would read an empty world).
func addChecks(mgr ctrl.Manager) error {
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("cache-synced", setup.CacheSynced(mgr.GetCache()))
}
