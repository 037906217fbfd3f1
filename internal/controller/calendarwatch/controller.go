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

package calendarwatch

import (
	"context"
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/upstream/gcalendar"
)

// DefaultWorkers is how many watches are reconciled at once. A reconcile
// mostly waits on Google and the API server: with one worker the bench
// renewed at most ~110 channels a second, with eight 10,000 channels due
// within a minute were each renewed before their predecessor expired
// (make bench, docs/install.md "Workers").
const DefaultWorkers = 8

// Controller is CalendarWatch's controller as the manager lists it.
type Controller struct{ Workers wire.Workers }

// Name is the controller's name and flag prefix.
func (*Controller) Name() string { return "calendarwatch" }

// BindFlags registers --calendarwatch-workers.
func (c *Controller) BindFlags(fs *flag.FlagSet) {
	c.Workers.Bind(fs, c.Name(), "CalendarWatches", DefaultWorkers)
}

// Setup registers the controller with the Calendar client.
func (c *Controller) Setup(mgr ctrl.Manager, d wire.Deps) error {
	cal, err := gcalendar.New(context.Background(), d.Outbound)
	if err != nil {
		return err
	}
	return (&Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), OAuth: d.OAuth, Calendar: cal, Out: d.Outbound,
		Recorder: wire.Recorder(mgr, c.Name()), PublicURL: d.PublicURL, Workers: c.Workers.N,
	}).SetupWithManager(mgr)
}
