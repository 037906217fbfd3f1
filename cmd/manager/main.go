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
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	_ "time/tzdata" // spreadsheet time zones are IANA names; a static image has no zoneinfo

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/controller"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/resmetrics"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

func main() {
	var opts options
	opts.bind(flag.CommandLine)
	controllers := controller.All(podNamespace())
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
	fail := func(err error, msg string) {
		setupLog.Error(err, msg)
		os.Exit(1)
	}
	if err := audit.Setup(ctrl.Log, ctrlmetrics.Registry); err != nil {
		fail(err, "cannot set up the audit record")
	}
	resources := &resmetrics.Handler{}
	ctx := ctrl.SetupSignalHandler()
	op, err := build(ctx, &opts, controllers, resources)
	if err != nil {
		fail(err, "cannot build the manager")
	}
	mgr := op.Manager
	resources.Reader, resources.Namespaces, resources.Serving = mgr.GetCache(), op.Deps.Watch, elected(mgr.Elected())
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

// build builds the manager as every suite and benchmark does
// (wire.Operator), with the manager's flags: its cache scoped to the
// watched namespaces plus the operator's own (OAuth states, short-token
// objects), its outbound policy, its metrics server serving resources'
// metrics beside its own, its probes and its leader election.
func build(ctx context.Context, o *options, controllers []wire.Kind, resources http.Handler) (*wire.Built, error) {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("no Kubernetes configuration: %w", err)
	}
	return wire.Operator{
		Kinds:     controllers,
		Upstreams: o.upstreams,
		OutboundOptions: outbound.Options{Timeout: o.outboundTimeout, Registerer: ctrlmetrics.Registry,
			Sink: outbound.SinkPolicy{DenyPrivateNetworks: o.sinkDenyPrivate}},
		Deps: wire.Deps{PublicURL: o.publicURL, StateNamespace: o.stateNamespace, Registerer: ctrlmetrics.Registry,
			Shard: o.shard, Watch: setup.ParseNamespaces(o.watchNamespaces)},
		Options: func(mo *ctrl.Options) {
			mo.Metrics = metricsserver.Options{BindAddress: o.metricsAddr, ExtraHandlers: map[string]http.Handler{resmetrics.Path: resources}}
			mo.HealthProbeBindAddress, mo.PprofBindAddress = o.probeAddr, o.pprofAddr
			o.leader.apply(mo)
			if o.kubeAPI.QPS > 0 {
				// The Lease is renewed outside --kube-api-qps: a client busy
				// up to its limit must not cost the leader its lease.
				mo.LeaderElectionConfig = cfg
			}
		},
	}.Build(ctx, o.kubeAPI.Limit(cfg))
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
