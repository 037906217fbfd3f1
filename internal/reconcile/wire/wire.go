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

// Package wire is how the manager builds every kind's controller the same
// way: each kind's package exports a Controller that binds its own flags
// and sets itself up from the manager's shared Deps, and cmd/manager lists
// them, one line a kind. Operator builds the manager around them, for
// cmd/manager, the suites and the benchmarks alike.
package wire

import (
	"flag"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Deps are what the manager shares with every controller.
type Deps struct {
	// Outbound is the one outbound HTTP policy.
	Outbound *outbound.Client
	// OAuth is the one OAuth engine.
	OAuth *oauth.Engine
	// PublicURL is the webhook server's public base URL (connect links,
	// share URLs, push addresses).
	PublicURL string
	// Registerer receives the controllers' own metrics (nil: none).
	Registerer prometheus.Registerer
	// Shard is the manager's --watch-label-selector (nil or empty: every
	// object): what runs beside a controller and lists from the API
	// server acts only on the objects it selects.
	Shard labels.Selector
	// StateNamespace is the webhook's namespace (the manager's
	// --state-namespace): OAuth states and handovers, and the sign-ups a
	// controller publishes for the webhook's start route.
	StateNamespace string
	// Watch are the manager's --watch-namespaces (empty: every
	// namespace): what runs beside a controller and lists from the API
	// server lists each of them, since a namespaced install may list
	// nothing cluster-wide.
	Watch []string
}

// Kind is one controller as the manager lists it.
type Kind interface {
	// Name is the controller's name, the prefix of its flags
	// (--<name>-workers) and its Event recorder's name.
	Name() string
	// BindFlags registers the controller's flags on fs.
	BindFlags(fs *flag.FlagSet)
	// Setup registers the controller, and what runs beside it, with mgr.
	Setup(mgr ctrl.Manager, d Deps) error
}

// SetupFunc is a Kind that is only its Setup: a suite's controller built
// its own way (a wrapped client, a shortened schedule) on the Deps the
// operator shares, so that the suite still builds its manager with
// Operator. It binds no flags.
type SetupFunc struct {
	// Named is the controller's name.
	Named string
	// Func registers the controller with mgr.
	Func func(mgr ctrl.Manager, d Deps) error
}

// Name implements Kind.
func (f SetupFunc) Name() string { return f.Named }

// BindFlags implements Kind: none.
func (SetupFunc) BindFlags(*flag.FlagSet) {}

// Setup implements Kind.
func (f SetupFunc) Setup(mgr ctrl.Manager, d Deps) error { return f.Func(mgr, d) }

// OwnNamespaces is what a Kind implements whose controller reads objects
// in namespaces of its own beyond the watched ones (ReceiveLink's
// --link-namespace); the manager's cache holds them.
type OwnNamespaces interface {
	OwnNamespaces() []string
}

// SignUpper is what a Kind implements whose objects are sign-ups of an
// OAuth target: the manager's OAuth Receiver turns their grants into
// resources.
type SignUpper interface {
	SignUps() []oauth.SignUp
}

// SignUps are the sign-ups of kinds, for the OAuth Receiver.
func SignUps(kinds []Kind) []oauth.SignUp {
	var out []oauth.SignUp
	for _, k := range kinds {
		if s, ok := k.(SignUpper); ok {
			out = append(out, s.SignUps()...)
		}
	}
	return out
}

// Namespaces are the namespaces of its own that each of kinds reads.
func Namespaces(kinds []Kind) []string {
	var ns []string
	for _, k := range kinds {
		if o, ok := k.(OwnNamespaces); ok {
			ns = append(ns, o.OwnNamespaces()...)
		}
	}
	return ns
}

// Workers is the option every controller has: how many objects it
// reconciles at once (controller-runtime's MaxConcurrentReconciles).
type Workers struct {
	// N is the count; Or gives the default for 0.
	N int
}

// Recorder is the Event recorder of the controller named name, as every
// controller names its own.
func Recorder(mgr ctrl.Manager, name string) events.EventRecorder {
	return mgr.GetEventRecorder(name + "-controller")
}

// Bind registers --<name>-workers, of default def, for objects (a plural
// kind, for the help text).
func (w *Workers) Bind(fs *flag.FlagSet, name, objects string, def int) {
	fs.IntVar(&w.N, name+"-workers", def, fmt.Sprintf("How many %s the manager reconciles at once.", objects))
}

// Or is N, or def when N is not positive.
func (w Workers) Or(def int) int {
	if w.N > 0 {
		return w.N
	}
	return def
}

// SetupAll sets up each of kinds with d, in order: the manager's loop, for
// tests and benchmarks that run a few controllers as the manager does.
func SetupAll(mgr ctrl.Manager, d Deps, kinds ...Kind) error {
	for _, k := range kinds {
		if err := k.Setup(mgr, d); err != nil {
			return fmt.Errorf("set up %s: %w", k.Name(), err)
		}
	}
	return nil
}
