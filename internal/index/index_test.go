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

package index_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// indexedCache starts an informer cache with every index, and a fresh
// namespace to create objects in.
func indexedCache(ctx context.Context, t *testing.T, prefix string) (string, cache.Cache) {
	return indexedCacheFor(ctx, t, prefix, index.Both)
}

// indexedCacheFor is indexedCache with the indexes binary reads.
func indexedCacheFor(ctx context.Context, t *testing.T, prefix string, binary index.Binary) (string, cache.Cache) {
	t.Helper()
	ns, err := env.Namespace(prefix)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := index.RegisterFor(ctx, c, binary); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	return ns, c
}

func TestLookupsByIndexedStatusFields(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, c := indexedCache(ctx, t, "index")

	for i, ws := range []string{"ws-a", "ws-b"} {
		ni := &v1alpha1.NotionIntegration{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i), Namespace: ns}}
		ni.Spec.OAuth.ClientSecretRef.Name = "c"
		ni.Spec.OAuth.TokenSecretRef.Name = "token-" + ws
		ni.Spec.WebhookSecretRef.Name = "w"
		if err := env.Client.Create(ctx, ni); err != nil {
			t.Fatal(err)
		}
		ni.Status.WebhookPath = "/notion/webhook/" + ns + "/" + ws // paths are looked up across namespaces
		if err := env.Client.Status().Update(ctx, ni); err != nil {
			t.Fatal(err)
		}
	}
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	testenv.EventuallyReport(t, 10*time.Second, "the lookups by token Secret and by webhook path to find n1", func() (bool, string) {
		var bySecret, byPath v1alpha1.NotionIntegrationList
		if err := c.List(ctx, &bySecret, client.InNamespace(ns), client.MatchingFields{index.OAuthSecrets: "token-ws-b"}); err != nil {
			t.Fatal(err)
		}
		if err := c.List(ctx, &byPath, client.MatchingFields{index.RoutePaths: "/notion/webhook/" + ns + "/ws-b"}); err != nil {
			t.Fatal(err)
		}
		if len(bySecret.Items) == 1 && bySecret.Items[0].Name == "n1" && len(byPath.Items) == 1 && byPath.Items[0].Name == "n1" {
			return true, ""
		}
		return false, fmt.Sprintf("lookup by token Secret found %d objects, by webhook path %d", len(bySecret.Items), len(byPath.Items))
	})
}

func TestOnlyUnfinishedPaperSyncsAreIndexedAsPending(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, c := indexedCache(ctx, t, "pending")
	for _, name := range []string{"pending", "finished"} {
		ps := &v1alpha1.PaperSync{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1alpha1.PaperSyncSpec{IntegrationRef: v1alpha1.LocalObjectReference{Name: "research"},
				PageID: "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", Link: "https://arxiv.org/abs/2301.12345", ArxivID: "2301.12345"}}
		if err := env.Client.Create(ctx, ps); err != nil {
			t.Fatal(err)
		}
		if name == "finished" {
			now := metav1.Now()
			ps.Status.Phase, ps.Status.CompletedAt = v1alpha1.SyncSucceeded, &now
			if err := env.Client.Status().Update(ctx, ps); err != nil {
				t.Fatal(err)
			}
		}
	}
	var pending v1alpha1.PaperSyncList
	testenv.EventuallyWithin(t, 10*time.Second, "the cache to show the finished sync", func() bool {
		var all v1alpha1.PaperSyncList
		if err := c.List(ctx, &all, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		pending = v1alpha1.PaperSyncList{}
		if err := c.List(ctx, &pending, client.InNamespace(ns), client.MatchingFields{index.PendingChildren: "research"}); err != nil {
			t.Fatal(err)
		}
		for _, ps := range all.Items {
			if ps.Status.CompletedAt != nil {
				return true
			}
		}
		return false
	})
	if len(pending.Items) != 1 || pending.Items[0].Name != "pending" {
		t.Fatalf("pending lookup found %d objects, want only the unfinished one", len(pending.Items))
	}
}

// One index serves every OAuth kind: a SheetConnection is found by its
// token Secret and by its ingest token Secret.
func TestEveryOAuthKindIsFoundByTheSecretsItNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, c := indexedCache(ctx, t, "oauth")
	if err := testenv.SheetConnection(ctx, env.Client, ns, "spreadsheet-0123456789", "Log", "refresh", nil); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the SheetConnection found by both its Secrets", func() bool {
		for _, secret := range []string{"google-token", "sheet-ingest"} {
			var l v1alpha1.SheetConnectionList
			if err := c.List(ctx, &l, client.InNamespace(ns), client.MatchingFields{index.OAuthSecrets: secret}); err != nil || len(l.Items) != 1 {
				return false
			}
		}
		return true
	})
}

// Every child kind (v1alpha1.ChildObject) is indexed by its parent while
// it is not finished, by the one extractor: a child kind left out would
// never be batched, and one still indexed once finished would be taken
// again.
func TestEveryChildKindIsIndexedByItsParentWhileUnfinished(t *testing.T) {
	var want []string
	for _, kind := range v1alpha1.Kinds() {
		if o, err := env.Scheme.New(v1alpha1.GroupVersion.WithKind(kind)); err == nil {
			if _, ok := o.(v1alpha1.ChildObject); ok {
				want = append(want, kind)
			}
		}
	}
	if got := index.Kinds(index.PendingChildren); len(want) < 2 || !slices.Equal(got, want) {
		t.Fatalf("PendingChildren is on %v, want every child kind %v", got, want)
	}
	done := metav1.Now()
	ps := &v1alpha1.PaperSync{Spec: v1alpha1.PaperSyncSpec{IntegrationRef: v1alpha1.LocalObjectReference{Name: "research"}}}
	ss := &v1alpha1.SheetSync{Spec: v1alpha1.SheetSyncSpec{ConnectionRef: v1alpha1.LocalObjectReference{Name: "log"}}}
	for _, tc := range []struct {
		obj    client.Object
		parent string
	}{{ps, "research"}, {ss, "log"}} {
		if got := index.PendingChild(tc.obj); !slices.Equal(got, []string{tc.parent}) {
			t.Errorf("unfinished %T indexed as %v, want [%s]", tc.obj, got, tc.parent)
		}
		tc.obj.(v1alpha1.ChildObject).GetChildStatus().CompletedAt = &done
		if got := index.PendingChild(tc.obj); got != nil {
			t.Errorf("finished %T indexed as %v, want nothing", tc.obj, got)
		}
	}
}

// Each binary registers only the indexes it reads: the webhook's cache
// has no index (and so no informer) for the kinds it only creates.
func TestEachBinaryRegistersOnlyTheIndexesItReads(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lookups := []struct {
		list  client.ObjectList
		field string
		by    index.Binary
	}{
		{&v1alpha1.NotionIntegrationList{}, index.OAuthSecrets, index.Manager},
		{&v1alpha1.PaperSyncList{}, index.PendingChildren, index.Manager},
		{&v1alpha1.SheetSyncList{}, index.PendingChildren, index.Manager},
		{&v1alpha1.NotionIntegrationList{}, index.RoutePaths, index.Webhook},
		{&v1alpha1.CalendarWatchList{}, index.CalendarWatchUID, index.Webhook},
		{&v1alpha1.SheetConnectionList{}, index.RoutePaths, index.Webhook},
	}
	for _, binary := range []index.Binary{index.Manager, index.Webhook} {
		ns, c := indexedCacheFor(ctx, t, "index-binary", binary)
		if !c.WaitForCacheSync(ctx) {
			t.Fatal("cache did not sync")
		}
		for _, l := range lookups {
			err := c.List(ctx, l.list, client.InNamespace(ns), client.MatchingFields{l.field: "x"})
			if registered := l.by == binary; registered != (err == nil) {
				t.Errorf("binary %d, index %s: registered %v, List error %v", binary, l.field, registered, err)
			}
		}
	}
}

// Each index holds one key per value, in the form its reader asks for it:
// the manager's in the object's namespace, the webhook's across
// namespaces. controller-runtime's IndexField stored both, a set each.
func TestAnIndexHoldsOneKeyPerValueInTheFormItsReaderAsks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, c := indexedCache(ctx, t, "index-keys")
	ni := &v1alpha1.NotionIntegration{ObjectMeta: metav1.ObjectMeta{Name: "n", Namespace: ns}}
	ni.Spec.OAuth.ClientSecretRef.Name = "c"
	ni.Spec.OAuth.TokenSecretRef.Name = "token-" + ns
	ni.Spec.WebhookSecretRef.Name = "w"
	if err := env.Client.Create(ctx, ni); err != nil {
		t.Fatal(err)
	}
	ni.Status.WebhookPath = "/notion/webhook/" + ns
	if err := env.Client.Status().Update(ctx, ni); err != nil {
		t.Fatal(err)
	}
	inf, err := c.GetInformer(ctx, &v1alpha1.NotionIntegration{})
	if err != nil {
		t.Fatal(err)
	}
	indexer := inf.(toolscache.SharedIndexInformer).GetIndexer()
	keysOf := func(field, value string) []string {
		var out []string
		for _, k := range indexer.ListIndexFuncValues("field:" + field) {
			if strings.HasSuffix(k, "/"+value) {
				out = append(out, k)
			}
		}
		slices.Sort(out)
		return out
	}
	testenv.EventuallyReport(t, 10*time.Second, "the index keys of n", func() (bool, string) {
		secret, path := keysOf(index.OAuthSecrets, ni.Spec.OAuth.TokenSecretRef.Name), keysOf(index.RoutePaths, ni.Status.WebhookPath)
		return len(secret) > 0 && len(path) > 0, fmt.Sprintf("token Secret keys %v, path keys %v", secret, path)
	})
	if got, want := keysOf(index.OAuthSecrets, ni.Spec.OAuth.TokenSecretRef.Name), []string{ns + "/" + ni.Spec.OAuth.TokenSecretRef.Name}; !slices.Equal(got, want) {
		t.Errorf("the manager's token Secret index holds %v, want only %v", got, want)
	}
	if got, want := keysOf(index.RoutePaths, ni.Status.WebhookPath), []string{"__all_namespaces/" + ni.Status.WebhookPath}; !slices.Equal(got, want) {
		t.Errorf("the webhook's path index holds %v, want only %v", got, want)
	}
}

// A lookup whose List fails wakes nothing, and says so: an OAuth kind's
// objects looked up in a cache without the index (here the webhook's,
// which does not register OAuthSecrets) used to find nothing in silence,
// so a new grant never woke them.
func TestALookupThatCannotListIsLogged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, c := indexedCacheFor(ctx, t, "requests", index.Webhook)
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	var logged []string
	ctx = logf.IntoContext(ctx, funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{}))

	if reqs := index.Requests(ctx, c, &v1alpha1.NotionIntegrationList{}, ns, index.RoutePaths, "/notion/webhook/x"); len(reqs) != 0 || len(logged) != 0 {
		t.Fatalf("a lookup on a registered index found %v and logged %q, want nothing", reqs, logged)
	}
	if reqs := index.Requests(ctx, c, &v1alpha1.NotionIntegrationList{}, ns, index.OAuthSecrets, "token"); reqs != nil {
		t.Fatalf("a lookup that cannot list found %v", reqs)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], `"error"`) || !strings.Contains(logged[0], index.OAuthSecrets) ||
		!strings.Contains(logged[0], "NotionIntegrationList") {
		t.Errorf("a lookup that cannot list logged %q, want one error naming the index and the kind", logged)
	}
}
