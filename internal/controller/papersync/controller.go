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

package papersync

import (
	"flag"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/reconcile/children"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/upstream/arxiv"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Controller is PaperSync's controller as the manager lists it.
type Controller struct {
	Workers wire.Workers
	// Integrations is the NotionIntegration controller's mailbox (its
	// Controller's Reports).
	Integrations children.Tallies
	// ArxivInterval is the least time between two arXiv requests.
	ArxivInterval time.Duration
	// Retries and Recheck replace the schedules (tests shorten them).
	Retries, Recheck outbound.Schedule
}

// Name is the controller's name and flag prefix.
func (*Controller) Name() string { return "papersync" }

// BindFlags registers --papersync-workers and --arxiv-min-interval.
func (c *Controller) BindFlags(fs *flag.FlagSet) {
	c.Workers.Bind(fs, c.Name(), "PaperSyncs", DefaultWorkers)
	fs.DurationVar(&c.ArxivInterval, "arxiv-min-interval", arxiv.MinInterval, "Least time between two arXiv API requests (arXiv asks for 3s); 0 disables pacing, for benchmarks against the sandbox only.")
}

// Setup registers the controller with the arXiv and Notion clients.
func (c *Controller) Setup(mgr ctrl.Manager, d wire.Deps) error {
	return (&Reconciler{
		Client: mgr.GetClient(), OAuth: d.OAuth, Notion: &notion.Client{Out: d.Outbound}, Pacer: &notion.Pacer{},
		Arxiv:    &arxiv.Client{Out: d.Outbound, Pacer: &arxiv.Pacer{Interval: c.ArxivInterval}},
		Recorder: wire.Recorder(mgr, c.Name()), Retries: c.Retries, Recheck: c.Recheck,
		Workers: c.Workers.N, Integrations: c.Integrations,
	}).SetupWithManager(mgr)
}
