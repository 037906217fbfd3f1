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

package wire

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Operator is how the manager is built, by cmd/manager, by every suite
// that runs controllers and by every benchmark rig: the manager's cache
// scoped as the binary's (setup.Scope: the watched namespaces, the
// operator's own and the kinds', Secrets kept without their data), its
// field indexes, the one outbound policy and OAuth engine, each of Kinds
// set up with the Deps they share, and the OAuth grant receiver with the
// kinds' sign-ups. A caller states only what it changes.
type Operator struct {
	// Kinds are the controllers the manager runs (cmd/manager: controller.All).
	Kinds []Kind
	// Deps are what the controllers share. Outbound, when nil, is built
	// from Upstreams and OutboundOptions; OAuth, when nil, is the engine
	// on the manager's client and API reader. Watch and Shard also scope
	// the manager's cache, and StateNamespace is among its own.
	Deps Deps
	// Upstreams are where the outbound policy sends each upstream name
	// (nil: the real endpoints), with OutboundOptions.
	Upstreams       *upstream.Set
	OutboundOptions outbound.Options
	// Indexes are the field indexes registered (zero: the manager's;
	// index.Both where the webhook's routes read the same cache).
	Indexes index.Binary
	// Targets are the OAuth targets the grant receiver serves (nil: every
	// kind's): a test's own, as the webhook's route tests bring.
	Targets []oauth.Target
	// Options, when set, changes the manager's options last: the binary's
	// listeners and leader election, a test's logger.
	Options func(*ctrl.Options)
}

// Built is an operator built and not yet started.
type Built struct {
	Manager ctrl.Manager
	// Deps are the controllers', Outbound and OAuth filled in.
	Deps Deps
}

// Build builds the operator on cfg; ctx bounds the index registration.
func (o Operator) Build(ctx context.Context, cfg *rest.Config) (*Built, error) {
	d := o.Deps
	if d.Outbound == nil {
		ups := o.Upstreams
		if ups == nil {
			ups = upstream.NewSet()
		}
		out, err := outbound.New(ups, o.OutboundOptions)
		if err != nil {
			return nil, fmt.Errorf("build the outbound HTTP client: %w", err)
		}
		d.Outbound = out
	}
	mgr, err := ctrl.NewManager(cfg, o.managerOptions())
	if err != nil {
		return nil, fmt.Errorf("create the manager: %w", err)
	}
	indexes := o.Indexes
	if indexes == 0 {
		indexes = index.Manager
	}
	if err := index.RegisterFor(ctx, mgr.GetCache(), indexes); err != nil {
		return nil, fmt.Errorf("register the field indexes: %w", err)
	}
	if d.OAuth == nil {
		d.OAuth = setup.Engine(mgr, d.Outbound)
	}
	if err := SetupAll(mgr, d, o.Kinds...); err != nil {
		return nil, err
	}
	if err := grant.SetupHandover(mgr, d.OAuth, d.StateNamespace, d.Shard, o.Targets, SignUps(o.Kinds)...); err != nil {
		return nil, fmt.Errorf("add the OAuth grant receiver: %w", err)
	}
	return &Built{Manager: mgr, Deps: d}, nil
}

// managerOptions are the binary's: its scheme, its cache scope, Secrets
// read from the API server; then Options.
func (o Operator) managerOptions() ctrl.Options {
	scheme := setup.Scheme()
	cache := setup.ClientOptions()
	var own []string
	if o.Deps.StateNamespace != "" {
		own = append(own, o.Deps.StateNamespace)
	}
	own = append(own, Namespaces(o.Kinds)...)
	mo := ctrl.Options{
		Scheme: scheme,
		Cache: setup.Scope{Watch: o.Deps.Watch, Own: own,
			Shard: o.Deps.Shard, SecretsOnlyWake: true}.CacheOptions(scheme),
		Client:         client.Options{Cache: &cache},
		MapperProvider: setup.NewMapper,
	}
	if o.Options != nil {
		o.Options(&mo)
	}
	return mo
}
