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

package notionsignup

import (
	"errors"
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
)

// DefaultWorkers is how many sign-ups are reconciled at once: each
// reconcile is a few API calls and no upstream one.
const DefaultWorkers = 2

// Controller is NotionSignup's controller as the manager lists it.
type Controller struct {
	Workers wire.Workers
}

// Name is the controller's name and flag prefix.
func (*Controller) Name() string { return "notionsignup" }

// BindFlags registers --notionsignup-workers.
func (c *Controller) BindFlags(fs *flag.FlagSet) {
	c.Workers.Bind(fs, c.Name(), "NotionSignups", DefaultWorkers)
}

// Setup registers the controller; its sign-ups publish themselves in the
// webhook's namespace (d.StateNamespace).
func (c *Controller) Setup(mgr ctrl.Manager, d wire.Deps) error {
	if d.StateNamespace == "" {
		return errors.New("notionsignup: the webhook's namespace (wire.Deps.StateNamespace) is not set")
	}
	r := &Reconciler{Client: mgr.GetClient(), Store: d.OAuth.Store, Recorder: wire.Recorder(mgr, c.Name()),
		PublicURL: d.PublicURL, StateNamespace: d.StateNamespace}
	return r.setup(mgr, controller.Options{MaxConcurrentReconciles: c.Workers.Or(DefaultWorkers)})
}

// SignUps gives the OAuth Receiver NotionSignup's sign-up (wire.SignUps).
func (*Controller) SignUps() []oauth.SignUp { return []oauth.SignUp{SignUp} }
