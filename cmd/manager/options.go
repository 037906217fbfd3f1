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
	"flag"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// options are the manager's own flags; each controller binds its own
// (wire.Kind.BindFlags).
type options struct {
	metricsAddr, probeAddr    string
	pprofAddr                 string
	leader                    leaderOptions
	outboundTimeout           time.Duration
	sinkDenyPrivate           bool
	watchNamespaces           string
	watchSelector             string
	shard                     labels.Selector // watchSelector parsed
	publicURL, stateNamespace string
	upstreams                 *upstream.Set
	kubeAPI                   setup.KubeAPI
	zap                       zap.Options
}

// leaderOptions are leader election's.
type leaderOptions struct {
	elect                                     bool
	namespace, id                             string
	leaseDuration, renewDeadline, retryPeriod time.Duration
}

func (o *options) bind(fs *flag.FlagSet) {
	o.upstreams = upstream.NewSet()
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "Address the Prometheus metrics endpoint binds to; 0 disables it.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to; 0 disables them.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "", "Address Go's profiling endpoints (/debug/pprof/) bind to, for a heap or CPU profile on a live manager; empty or 0 disables them. Never expose it outside the pod.")
	o.leader.bind(fs)
	fs.DurationVar(&o.outboundTimeout, "outbound-timeout", outbound.DefaultTimeout, "Timeout of each outbound request to an upstream API.")
	fs.BoolVar(&o.sinkDenyPrivate, "sink-deny-private-networks", false, "Also refuse HTTP sinks (a CalendarWatch's spec.sink.http.url) at private addresses (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7), where cluster-local Services are; loopback, link-local (the cloud metadata service) and unspecified addresses are always refused.")
	fs.StringVar(&o.watchNamespaces, "watch-namespaces", "", "Comma-separated namespaces whose resources the manager reconciles (a namespaced install: RBAC as Roles in each); empty watches every namespace.")
	fs.StringVar(&o.watchSelector, "watch-label-selector", "", "Label selector of the Switchboard objects this manager reconciles, to share them among several managers (sharding): e.g. \"sharding.switchboard.dev/key in (shard1)\" on a shard and \"sharding.switchboard.dev/key notin (shard1)\" on the main manager. Each manager needs its own --leader-election-id. Empty reconciles every object.")
	fs.StringVar(&o.publicURL, "public-url", "", "Externally visible base URL of the webhook server (its --public-url), e.g. https://hooks.example.com: the OAuth connect links kept in each resource's <name>-oauth-connect Secret are built on it. Empty keeps only the token.")
	fs.StringVar(&o.stateNamespace, "state-namespace", podNamespace(), "Namespace of the webhook's OAuth state Secrets (its --state-namespace), where expired states are deleted.")
	fs.Var(o.upstreams, "upstream", "Base URL of an outside API as NAME=URL (repeatable). Names: "+names()+". Defaults are the real public endpoints; outbound requests reach only these hosts.")
	setup.BindKubeAPIFlags(&o.kubeAPI, fs)
	setup.BindLogFlags(&o.zap, fs)
}

func (o *leaderOptions) bind(fs *flag.FlagSet) {
	fs.BoolVar(&o.elect, "leader-elect", false, "Elect a leader so that only one replica reconciles (enable when running more than one).")
	fs.StringVar(&o.id, "leader-election-id", defaultLeaderElectionID, "Name of the leader election Lease; each shard (--watch-label-selector) has its own.")
	fs.StringVar(&o.namespace, "leader-election-namespace", "", "Namespace of the leader election Lease (default: the pod's namespace).")
	fs.DurationVar(&o.leaseDuration, "leader-election-lease-duration", defaultLeaseDuration, "How long a lease lasts without renewal: a standby takes over a leader that stopped renewing after this long.")
	fs.DurationVar(&o.renewDeadline, "leader-election-renew-deadline", defaultRenewDeadline, "How long the leader keeps trying to renew its lease (through an API server outage, say) before it gives up leadership and exits, for the kubelet to restart it; shorter than the lease duration.")
	fs.DurationVar(&o.retryPeriod, "leader-election-retry-period", defaultRetryPeriod, "Time between two attempts to acquire or renew the lease; the renew deadline must exceed 1.2 times it.")
}

// apply sets the manager's leader election from the flags; the lease is
// released when the manager stops, so a standby takes over at once.
func (o *leaderOptions) apply(mo *ctrl.Options) {
	mo.LeaderElection, mo.LeaderElectionID, mo.LeaderElectionNamespace = o.elect, o.id, o.namespace
	mo.LeaseDuration, mo.RenewDeadline, mo.RetryPeriod = &o.leaseDuration, &o.renewDeadline, &o.retryPeriod
	mo.LeaderElectionReleaseOnCancel = true
}

// validate checks what flag parsing cannot, naming the flags, and parses
// --watch-label-selector.
func (o *options) validate() error {
	if err := validateLeaderElection(o.leader.leaseDuration, o.leader.renewDeadline, o.leader.retryPeriod); err != nil {
		return err
	}
	if err := o.kubeAPI.Validate(); err != nil {
		return err
	}
	if o.leader.id == "" {
		return fmt.Errorf("--leader-election-id must not be empty")
	}
	sel, err := labels.Parse(o.watchSelector)
	if err != nil {
		return fmt.Errorf("--watch-label-selector %q is not a label selector: %w", o.watchSelector, err)
	}
	o.shard = sel
	return nil
}

func names() string {
	var s []string
	for _, n := range upstream.Names() {
		s = append(s, string(n))
	}
	return strings.Join(s, ", ")
}

func init() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: manager [flags]\n\nRuns the Switchboard controllers.\n\n")
		flag.PrintDefaults()
	}
}
