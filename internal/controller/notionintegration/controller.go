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

package notionintegration

import (
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
)

// DefaultWorkers is how many integrations are reconciled at once. A
// refresh mostly waits on the token endpoint and the API server (three
// writes, two reconciles): in the bench one worker refreshed about 26
// grants a second, eight about 68, so 10,000 falling due within a minute
// were each refreshed inside the five minutes' lead, before their due
// instant (hack/bench -suite tokens, docs/install.md "Workers").
const DefaultWorkers = 8

// Controller is NotionIntegration's controller as the manager lists it.
type Controller struct {
	Workers wire.Workers
	// Reports is the mailbox the PaperSync controller posts to (a new one
	// when nil): give both controllers the same.
	Reports *Reports
}

// Name is the controller's name and flag prefix.
func (*Controller) Name() string { return "notionintegration" }

// BindFlags registers --notionintegration-workers.
func (c *Controller) BindFlags(fs *flag.FlagSet) {
	c.Workers.Bind(fs, c.Name(), "NotionIntegrations", DefaultWorkers)
}

// Setup registers the controller with the Notion client.
func (c *Controller) Setup(mgr ctrl.Manager, d wire.Deps) error {
	if c.Reports == nil {
		c.Reports = &Reports{}
	}
	nc := &notion.Client{Out: d.Outbound}
	return (&Reconciler{
		Client: mgr.GetClient(), OAuth: d.OAuth, Notion: nc, Recorder: wire.Recorder(mgr, c.Name()),
		Backfill: Backfill(mgr.GetClient(), nc), PublicURL: d.PublicURL, Reports: c.Reports, Workers: c.Workers.N,
	}).SetupWithManager(mgr)
}
