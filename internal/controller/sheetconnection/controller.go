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

package sheetconnection

import (
	"context"
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/upstream/gsheets"
)

// DefaultWorkers is how many connections are reconciled at once. A
// refresh mostly waits on Google and the API server (three writes, two
// reconciles, each reading the sheet's row 1): in the bench one worker
// refreshed about 16 grants a second — 10,000 falling due within a minute
// would take ten minutes, past their tokens' expiry five minutes after —
// and eight about 42 (hack/bench -suite tokens, docs/install.md
// "Workers").
const DefaultWorkers = 8

// Controller is SheetConnection's controller as the manager lists it.
type Controller struct {
	Workers wire.Workers
	// Reports is the mailbox the SheetSync controller posts to (a new one
	// when nil): give both controllers the same.
	Reports *Reports
}

// Name is the controller's name and flag prefix.
func (*Controller) Name() string { return "sheetconnection" }

// BindFlags registers --sheetconnection-workers.
func (c *Controller) BindFlags(fs *flag.FlagSet) {
	c.Workers.Bind(fs, c.Name(), "SheetConnections", DefaultWorkers)
}

// Setup registers the controller with the Sheets client.
func (c *Controller) Setup(mgr ctrl.Manager, d wire.Deps) error {
	sc, err := gsheets.New(context.Background(), d.Outbound)
	if err != nil {
		return err
	}
	if c.Reports == nil {
		c.Reports = &Reports{}
	}
	return (&Reconciler{
		Client: mgr.GetClient(), OAuth: d.OAuth, Sheets: sc, Recorder: wire.Recorder(mgr, c.Name()),
		PublicURL: d.PublicURL, Reports: c.Reports, Workers: c.Workers.N,
	}).SetupWithManager(mgr)
}
