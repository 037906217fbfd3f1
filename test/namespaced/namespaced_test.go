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

// Package namespaced_test installs the chart's RBAC for a namespaced
// install (watchNamespaces: team-a, team-b) into a real API server and
// runs the manager as its ServiceAccount, scoped as cmd/manager scopes it
// (issue 17 §2).
package namespaced_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/controller/slidestock"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

const release = "switchboard-system"

var (
	env  *testenv.Env
	rbac *testenv.ChartRBAC
	// seen is the manager's cache: what it can see.
	seen client.Reader
)

var watched = []string{"team-a", "team-b"}

func TestMain(m *testing.M) {
	testenv.Main(m, &env, testenv.WithChartRBAC(&rbac, release, "watchNamespaces={team-a,team-b}"), func(e *testenv.Env) (func(), error) {
		ctx := context.Background()
		for _, ns := range []string{"team-a", "team-b", "team-c"} {
			if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
				return nil, err
			}
		}
		srv := httptest.NewServer(sandbox.New(sandbox.NewSpeakerDeck(), sandbox.NewDocswell(), sandbox.NewGoogleSlides()))
		built, stop, err := testenv.StartOperator(rbac.Manager, wire.Operator{Kinds: []wire.Kind{&slidestock.Controller{}},
			Upstreams: sandbox.Upstreams(srv.URL), OutboundOptions: outbound.Options{Timeout: 5 * time.Second},
			Deps: wire.Deps{Watch: watched, StateNamespace: release}})
		if err != nil {
			return nil, err
		}
		seen = built.Manager.GetCache()
		return func() { stop(); srv.Close() }, nil
	})
}

func deck(t *testing.T, ns string) *unstructured.Unstructured {
	t.Helper()
	u := testenv.Sample(t, "SlideStock")
	u.SetNamespace(ns)
	// A name of its own, so the test runs again (-count) in the same
	// namespaces.
	u.SetGenerateName(u.GetName() + "-")
	u.SetName("")
	if err := env.Client.Create(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestAWatchedNamespaceWorksAndAnotherIsNotSeen(t *testing.T) {
	ctx := context.Background()
	for _, ns := range watched {
		u := deck(t, ns)
		testenv.Eventually(t, "the SlideStock in "+ns+" Ready", func() bool {
			var s v1alpha1.SlideStock
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), &s)
			c := metaCondition(s.Status.Conditions, "Ready")
			return err == nil && c != nil && c.Status == metav1.ConditionTrue
		})
	}
	// Team C's object is not in the manager's cache at all: it cannot be
	// reconciled, and nothing fails for it.
	other := deck(t, "team-c")
	var s v1alpha1.SlideStock
	if err := seen.Get(ctx, client.ObjectKeyFromObject(other), &s); err == nil {
		t.Fatal("the manager's cache holds an object of an unwatched namespace")
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(other), &s); err != nil || s.Status.ObservedGeneration != -1 || len(s.Status.Conditions) != 0 {
		t.Fatalf("team-c's SlideStock was touched: %+v (%v)", s.Status, err)
	}
}

func TestNeitherServiceAccountMayReadSecretsOfAnUnwatchedNamespace(t *testing.T) {
	for _, user := range []string{rbac.ManagerUser, rbac.WebhookUser} {
		for _, ns := range []string{"team-c", "kube-system", ""} {
			for _, verb := range []string{"get", "list", "watch"} {
				if ok, err := rbac.Can(env, user, verb, "secrets", ns); err != nil || ok {
					t.Errorf("%s may %s Secrets in %q (%v)", user, verb, ns, err)
				}
			}
		}
		// Nor the resources there.
		if ok, err := rbac.Can(env, user, "list", "slidestocks.switchboard.dev", "team-c"); err != nil || ok {
			t.Errorf("%s may list SlideStocks in team-c (%v)", user, err)
		}
	}
	// In the watched namespaces the manager keeps the users' Secrets; the
	// webhook still has none.
	for _, ns := range watched {
		if ok, err := rbac.Can(env, rbac.ManagerUser, "get", "secrets", ns); err != nil || !ok {
			t.Errorf("the manager may not read Secrets in %s (%v)", ns, err)
		}
		if ok, err := rbac.Can(env, rbac.WebhookUser, "get", "secrets", ns); err != nil || ok {
			t.Errorf("the webhook may read Secrets in %s (%v)", ns, err)
		}
	}
}

func metaCondition(cs []metav1.Condition, typ string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

// TestTheManagerSeesItsOwnNamespacesSecrets: the operator's own namespace
// (the state and link namespace, where the webhook hands OAuth grants
// over) is cached beside the watched ones, though no team works there.
func TestTheManagerSeesItsOwnNamespacesSecrets(t *testing.T) {
	ctx := context.Background()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: release, GenerateName: "handover-",
		Labels: map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue}}}
	if err := env.Client.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the manager's cache holds the Secret of its own namespace", func() bool {
		return seen.Get(ctx, client.ObjectKeyFromObject(sec), &corev1.Secret{}) == nil
	})
}
