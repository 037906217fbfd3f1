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

package sheetsync

import (
	"context"
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/upstream/gsheets"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Controller is SheetSync's controller as the manager lists it.
type Controller struct {
	Workers wire.Workers
	// Connections is the SheetConnection controller's mailbox (its
	// Controller's Reports).
	Connections Connections
	// Retries replaces the schedule (tests shorten it).
	Retries outbound.Schedule
}

// Name is the controller's name and flag prefix.
func (*Controller) Name() string { return "sheetsync" }

// BindFlags registers --sheetsync-workers.
func (c *Controller) BindFlags(fs *flag.FlagSet) {
	c.Workers.Bind(fs, c.Name(), "SheetSyncs", DefaultWorkers)
}

// Setup registers the controller with the Sheets client.
func (c *Controller) Setup(mgr ctrl.Manager, d wire.Deps) error {
	sc, err := gsheets.New(context.Background(), d.Outbound)
	if err != nil {
		return err
	}
	return (&Reconciler{
		Client: mgr.GetClient(), OAuth: d.OAuth, Sheets: sc, Recorder: wire.Recorder(mgr, c.Name()),
		Retries: c.Retries, Connections: c.Connections, Workers: c.Workers.N, LedgerNamespace: d.StateNamespace,
	}).SetupWithManager(mgr)
}
