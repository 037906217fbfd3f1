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

package wire_test

import (
	"context"
	"flag"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// recordingKind records what the Operator set it up with.
type recordingKind struct {
	name string
	own  []string
	mgr  ctrl.Manager
	deps wire.Deps
}

func (k *recordingKind) Name() string            { return k.name }
func (k *recordingKind) BindFlags(*flag.FlagSet) {}
func (k *recordingKind) OwnNamespaces() []string { return k.own }
func (k *recordingKind) Setup(mgr ctrl.Manager, d wire.Deps) error {
	k.mgr, k.deps = mgr, d
	return nil
}

func TestOperatorSetsUpEveryKindWithTheSameDeps(t *testing.T) {
	a, b := &recordingKind{name: "a"}, &recordingKind{name: "b"}
	built, stop, err := testenv.StartOperator(env.Config, wire.Operator{Kinds: []wire.Kind{a, b},
		Deps: wire.Deps{PublicURL: "https://hooks.example", StateNamespace: "default"}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, k := range []*recordingKind{a, b} {
		if k.mgr != built.Manager {
			t.Errorf("kind %s was set up on another manager than the one built", k.name)
		}
		d := k.deps
		if d.Outbound == nil || d.Outbound != built.Deps.Outbound || d.OAuth == nil || d.OAuth != built.Deps.OAuth {
			t.Errorf("kind %s got outbound %p and engine %p, the operator has %p and %p: one of each for every kind",
				k.name, d.Outbound, d.OAuth, built.Deps.Outbound, built.Deps.OAuth)
		}
		if d.PublicURL != "https://hooks.example" || d.StateNamespace != "default" {
			t.Errorf("kind %s got public URL %q and state namespace %q", k.name, d.PublicURL, d.StateNamespace)
		}
	}
}

// A watched namespace, the state namespace and a kind's own namespace are
// in the manager's cache, with Secrets kept without their data, as the
// manager binary's; another namespace is not.
func TestOperatorCachesTheNamespacesTheBinaryDoes(t *testing.T) {
	ctx := context.Background()
	names := map[string]string{}
	for _, role := range []string{"watched", "state", "own", "elsewhere"} {
		ns, err := env.Namespace("op-" + role)
		if err != nil {
			t.Fatal(err)
		}
		names[role] = ns
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "managed",
			Labels: map[string]string{setup.ManagedByLabel: setup.ManagedByValue}}, StringData: map[string]string{"k": "v"}}
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	built, stop, err := testenv.StartOperator(env.Config, wire.Operator{Kinds: []wire.Kind{&recordingKind{name: "c", own: []string{names["own"]}}},
		Deps: wire.Deps{Watch: []string{names["watched"]}, StateNamespace: names["state"]}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cache := built.Manager.GetCache()
	for _, role := range []string{"watched", "state", "own"} {
		var s corev1.Secret
		testenv.Eventually(t, "the "+role+" namespace's Secret in the cache", func() bool {
			return cache.Get(ctx, client.ObjectKey{Namespace: names[role], Name: "managed"}, &s) == nil
		})
		if len(s.Data) != 0 {
			t.Errorf("the cached Secret of the %s namespace keeps its data %v: the manager reads Secrets from the API server", role, s.Data)
		}
	}
	var s corev1.Secret
	if err := cache.Get(ctx, client.ObjectKey{Namespace: names["elsewhere"], Name: "managed"}, &s); err == nil {
		t.Error("the cache holds a Secret of a namespace neither watched nor the operator's")
	}
}
