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

package setup_test

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// countingWebhookCluster is a started webhook cluster (setup.WebhookCluster)
// watching watch, with its cache's Lists counted.
func countingWebhookCluster(ctx context.Context, t *testing.T, watch []string, own string) (cluster.Cluster, *testenv.ListCounting) {
	t.Helper()
	var counted *testenv.ListCounting
	cl, err := setup.WebhookCluster(ctx, env.Config, watch, []string{own}, func(o *cluster.Options) {
		o.NewCache = func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
			c, err := cache.New(cfg, opts)
			counted = &testenv.ListCounting{Cache: c}
			return counted, err
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = cl.Start(ctx) }()
	if !cl.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	return cl, counted
}

// sheetConnection creates a SheetConnection in ns listening on path.
func sheetConnection(ctx context.Context, t *testing.T, ns, name, path string) {
	t.Helper()
	sc := &v1alpha1.SheetConnection{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	sc.Spec.SpreadsheetID = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"
	sc.Spec.Sheet.Title = "Log"
	sc.Spec.OAuth.ClientSecretRef.Name, sc.Spec.OAuth.TokenSecretRef.Name, sc.Spec.IngestTokenSecretRef.Name = "c", "t", "i"
	sc.Spec.ColumnMapping = map[string]v1alpha1.ColumnRef{"title": "A", "startedAt": "B", "endedAt": "C", "durationSeconds": "Duration"}
	if err := env.Client.Create(ctx, sc); err != nil {
		t.Fatal(err)
	}
	sc.Status.IngestPath = path
	if err := env.Client.Status().Update(ctx, sc); err != nil {
		t.Fatal(err)
	}
}

// routedNames lists, as a route does (index.RoutePaths, uncopied), the
// SheetConnections listening on path, by namespace/name.
func routedNames(ctx context.Context, t *testing.T, c client.Reader, path string) []string {
	t.Helper()
	var list v1alpha1.SheetConnectionList
	if err := c.List(ctx, &list, client.MatchingFields{index.RoutePaths: path}, client.UnsafeDisableDeepCopy); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sc := range list.Items {
		names = append(names, sc.Namespace+"/"+sc.Name)
	}
	slices.Sort(names)
	return names
}

// The webhook's client answers a route's List (one indexed field across
// namespaces, uncopied) from the informer's index, with what the cache's
// List answers, and follows a change of the field; a path nobody listens
// on, any other List, and a cache of several watched namespaces (whose
// informers keep no index of their own to ask) are the cache's List.
func TestTheWebhooksClientListsARoutesObjectsFromTheIndex(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := env.Namespace("indexed-a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := env.Namespace("indexed-b")
	if err != nil {
		t.Fatal(err)
	}
	// Paths of this run's own: the cluster watches every namespace, and a
	// run before this one (-count) left its connections in its namespaces.
	shared, own, moved := "/sheets/ingest/shared-"+a, "/sheets/ingest/own-"+a, "/sheets/ingest/moved-"+a
	sheetConnection(ctx, t, a, "one", shared)
	sheetConnection(ctx, t, b, "two", shared)
	sheetConnection(ctx, t, b, "three", own)

	cl, counted := countingWebhookCluster(ctx, t, nil, a)
	c := cl.GetClient()
	want := []string{a + "/one", b + "/two"}
	testenv.EventuallyWithin(t, 30*time.Second, "the cache holding the connections", func() bool {
		return slices.Equal(routedNames(ctx, t, cl.GetCache(), shared), want)
	})

	before := counted.Lists.Load()
	if got := routedNames(ctx, t, c, shared); !slices.Equal(got, want) {
		t.Fatalf("the route's List: %v, want %v", got, want)
	}
	if got := routedNames(ctx, t, c, own); !slices.Equal(got, []string{b + "/three"}) {
		t.Fatalf("the route's List: %v, want [%s/three]", got, b)
	}
	if n := counted.Lists.Load() - before; n != 0 {
		t.Fatalf("the cache's List answered %d of the route's Lists, want none: the index answers them", n)
	}

	// A change of the path moves the object in the index.
	var three v1alpha1.SheetConnection
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: b, Name: "three"}, &three); err != nil {
		t.Fatal(err)
	}
	three.Status.IngestPath = moved
	if err := env.Client.Status().Update(ctx, &three); err != nil {
		t.Fatal(err)
	}
	testenv.EventuallyWithin(t, 30*time.Second, "the moved path found", func() bool {
		return slices.Equal(routedNames(ctx, t, c, moved), []string{b + "/three"})
	})

	// The rest is the cache's List: a miss, a List with copies, one in a
	// namespace.
	before = counted.Lists.Load()
	if got := routedNames(ctx, t, c, own); len(got) != 0 {
		t.Fatalf("the old path: %v, want none", got)
	}
	var copied v1alpha1.SheetConnectionList
	if err := c.List(ctx, &copied, client.MatchingFields{index.RoutePaths: shared}); err != nil || len(copied.Items) != 2 {
		t.Fatalf("a List with copies: %d items, %v; want 2", len(copied.Items), err)
	}
	if err := c.List(ctx, &copied, client.InNamespace(b)); err != nil || len(copied.Items) != 2 {
		t.Fatalf("a List in one namespace: %d items, %v; want 2", len(copied.Items), err)
	}
	if n := counted.Lists.Load() - before; n != 3 {
		t.Fatalf("the cache's List answered %d of the three other Lists, want all", n)
	}

	// Watching namespaces, the informers are the cache's of each: its List.
	nsCl, nsCounted := countingWebhookCluster(ctx, t, []string{a, b}, a)
	testenv.EventuallyWithin(t, 30*time.Second, "the namespaced cache holding the connections", func() bool {
		before := nsCounted.Lists.Load()
		got := routedNames(ctx, t, nsCl.GetClient(), shared)
		return slices.Equal(got, want) && nsCounted.Lists.Load()-before == 1
	})
}
