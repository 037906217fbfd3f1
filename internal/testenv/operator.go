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

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// Operator is o as a suite or a benchmark runs it: the manager
// cmd/manager builds (wire.Operator), with no metrics listener, no log,
// and the controllers' names free to be registered again, since a suite
// restarts its manager and the benchmarks run one after another in one
// process. o.Options applies after these (a suite's own logger).
func Operator(o wire.Operator) wire.Operator {
	own := o.Options
	o.Options = func(mo *ctrl.Options) {
		mo.Metrics = metricsserver.Options{BindAddress: "0"}
		mo.Logger = logr.Discard()
		mo.Controller.SkipNameValidation = ptr.To(true)
		if own != nil {
			own(mo)
		}
	}
	return o
}

// StartOperator builds o (Operator) on cfg, usually ChartRBAC.Manager,
// and starts it; stop stops it.
func StartOperator(cfg *rest.Config, o wire.Operator) (b *wire.Built, stop func(), err error) {
	if b, err = Operator(o).Build(context.Background(), cfg); err != nil {
		return nil, nil, err
	}
	return b, StartManager(b.Manager), nil
}

// WebhookCluster is the webhook server's cache and client as cmd/webhook
// builds them (setup.WebhookCluster), on cfg (usually ChartRBAC.Webhook):
// Secrets cached only in the own namespaces, the field indexes registered,
// no log unless opts set one. Start it with StartManager.
func WebhookCluster(cfg *rest.Config, own []string, opts ...func(*cluster.Options)) (cluster.Cluster, error) {
	quiet := func(o *cluster.Options) { o.Logger = logr.Discard() }
	return setup.WebhookCluster(context.Background(), cfg, nil, own, append([]func(*cluster.Options){quiet}, opts...)...)
}
