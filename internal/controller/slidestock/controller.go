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

package slidestock

import (
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/upstream/oembed"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Controller is SlideStock's controller as the manager lists it.
type Controller struct {
	Workers wire.Workers
	// Retries replaces the schedule (tests shorten it).
	Retries outbound.Schedule
}

// Name is the controller's name and flag prefix.
func (*Controller) Name() string { return "slidestock" }

// BindFlags registers --slidestock-workers.
func (c *Controller) BindFlags(fs *flag.FlagSet) {
	c.Workers.Bind(fs, c.Name(), "SlideStocks", DefaultWorkers)
}

// Setup registers the controller with the oEmbed client.
func (c *Controller) Setup(mgr ctrl.Manager, d wire.Deps) error {
	return (&Reconciler{Client: mgr.GetClient(), Fetcher: &oembed.Client{Out: d.Outbound},
		Recorder: wire.Recorder(mgr, c.Name()), Workers: c.Workers.N, Retries: c.Retries}).SetupWithManager(mgr)
}
