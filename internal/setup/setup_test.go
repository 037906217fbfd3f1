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
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

var env *testenv.Env

// klogOut receives what goes through klog's fallback logger, which
// InitLogging sets before anything runs, as the binaries do: klog's global
// logger may not be changed while other goroutines log.
var klogOut syncBuffer

func TestMain(m *testing.M) {
	setup.InitLogging(highest(&klogOut))
	testenv.Main(m, &env)
}

func TestOnlyManagedSecretsAreCachedButAllCanBeRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := env.Namespace("setup")
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name string, lbls map[string]string) {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
			StringData: map[string]string{"token": "x"}}
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	mk("person-made", nil)
	mk("operator-made", map[string]string{setup.ManagedByLabel: setup.ManagedByValue})

	cl := startCluster(ctx, t, setup.Scope{})

	var cached corev1.SecretList
	if err := cl.GetCache().List(ctx, &cached); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, s := range cached.Items {
		names[s.Namespace+"/"+s.Name] = true
	}
	if names[ns+"/person-made"] {
		t.Error("an unlabelled Secret is held in the cache")
	}
	if !names[ns+"/operator-made"] {
		t.Error("the operator's own Secret is not in the cache")
	}
	// The client reads Secrets from the API server, so both are found.
	for _, name := range []string{"person-made", "operator-made"} {
		var s corev1.Secret
		if err := cl.GetClient().Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &s); err != nil {
			t.Errorf("get %s: %v", name, err)
		}
	}
}

// TestEachScopeCachesSecretsWithOneRule: the cache takes one rule for
// Secrets, whose namespaces are the scope's. Two rules (ByObject is keyed
// by pointer, so two &corev1.Secret{} keys are two entries) left the
// choice to map order: now and then a cluster-wide Secret informer, which
// a namespaced install's RBAC refuses.
func TestEachScopeCachesSecretsWithOneRule(t *testing.T) {
	for _, c := range []struct {
		what  string
		scope setup.Scope
		want  []string // nil: every namespace
	}{
		{"cluster-wide", setup.Scope{Own: []string{"sb"}}, nil},
		{"the webhook, cluster-wide", setup.Scope{Own: []string{"sb", "links"}, SecretsOnlyInOwn: true}, []string{"links", "sb"}},
		{"namespaced", setup.Scope{Watch: []string{"a", "b"}, Own: []string{"sb"}}, []string{"a", "b", "sb"}},
		{"the webhook, namespaced", setup.Scope{Watch: []string{"a"}, Own: []string{"sb"}, SecretsOnlyInOwn: true}, []string{"sb"}},
	} {
		opts := c.scope.CacheOptions(env.Scheme)
		var rules []cache.ByObject
		for obj, by := range opts.ByObject {
			if _, ok := obj.(*corev1.Secret); ok {
				rules = append(rules, by)
			}
		}
		if len(rules) != 1 {
			t.Errorf("%s: %d cache rules for Secrets, want 1", c.what, len(rules))
			continue
		}
		got := slices.Sorted(maps.Keys(rules[0].Namespaces))
		if !slices.Equal(got, c.want) || rules[0].Label.String() != "app.kubernetes.io/managed-by=switchboard" {
			t.Errorf("%s: Secrets cached in %v with %q, want %v with the managed-by label", c.what, got, rules[0].Label, c.want)
		}
	}
}

// The manager reads every Secret from the API server and watches Secrets
// only to be woken: its cache keeps each Secret's metadata and a digest of
// its grant, no data and no managed fields.
func TestTheManagersCacheHoldsNoSecretData(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := env.Namespace("setup")
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{setup.ManagedByLabel: setup.ManagedByValue, "app": "sheets"}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "grant", Namespace: ns, Labels: labels},
		StringData: map[string]string{"access_token": "at", "refresh_token": "rt"}}); err != nil {
		t.Fatal(err)
	}
	cl := startCluster(ctx, t, setup.Scope{Watch: []string{ns}, SecretsOnlyWake: true})
	var cached corev1.Secret
	key := types.NamespacedName{Namespace: ns, Name: "grant"}
	if err := cl.GetCache().Get(ctx, key, &cached); err != nil {
		t.Fatal(err)
	}
	if cached.Data != nil || len(cached.ManagedFields) != 0 || cached.Labels["app"] != "sheets" ||
		cached.Labels[oauth.GrantDigestLabel] != oauth.GrantDigest(map[string][]byte{"access_token": []byte("at"), "refresh_token": []byte("rt")}) {
		t.Fatalf("cached Secret: data %v, managed fields %d, labels %v", cached.Data, len(cached.ManagedFields), cached.Labels)
	}
	var live corev1.Secret
	if err := cl.GetClient().Get(ctx, key, &live); err != nil {
		t.Fatal(err)
	}
	if string(live.Data["refresh_token"]) != "rt" || live.Labels[oauth.GrantDigestLabel] != "" {
		t.Fatalf("the client's Secret: data %v, labels %v", live.Data, live.Labels)
	}
}

// The manager's cache keeps connect Secrets without data or digest, and
// one label map for all of a target's: tens of thousands of them each held
// a map of their own.
func TestTheManagersCacheKeepsOneLabelMapForATargetsConnectSecrets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := env.Namespace("setup")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a-connect", "b-connect"} {
		if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			Labels: map[string]string{setup.ManagedByLabel: setup.ManagedByValue, oauth.ConnectTargetLabel: "notion"}},
			StringData: map[string]string{oauth.ConnectTokenKey: name}}); err != nil {
			t.Fatal(err)
		}
	}
	cl := startCluster(ctx, t, setup.Scope{Watch: []string{ns}, SecretsOnlyWake: true})
	inf, err := cl.GetCache().GetInformer(ctx, &corev1.Secret{})
	if err != nil {
		t.Fatal(err)
	}
	// The informer's own objects, not the deep copies the cache hands
	// out: a handler added after the sync is given each as an add.
	added := make(chan *corev1.Secret, 16)
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		if s, ok := o.(*corev1.Secret); ok {
			added <- s
		}
	}}); err != nil {
		t.Fatal(err)
	}
	var held []*corev1.Secret
	for len(held) < 2 {
		var s *corev1.Secret
		select {
		case s = <-added:
		case <-ctx.Done():
			t.Fatalf("the informer gave %d of the 2 connect Secrets", len(held))
		}
		if s.Data != nil || len(s.Labels) != 2 || s.Labels[oauth.ConnectTargetLabel] != "notion" {
			t.Fatalf("cached connect Secret %s: data %v, labels %v", s.Name, s.Data, s.Labels)
		}
		held = append(held, s)
	}
	if reflect.ValueOf(held[0].Labels).UnsafePointer() != reflect.ValueOf(held[1].Labels).UnsafePointer() {
		t.Fatalf("two connect Secrets of one target hold a label map each")
	}
}

// startCluster starts a client and informer cache with scope's cache
// options and the binaries' client options, and waits until it synced.
func startCluster(ctx context.Context, t *testing.T, scope setup.Scope) cluster.Cluster {
	t.Helper()
	scheme := setup.Scheme()
	cl, err := cluster.New(env.Config, func(o *cluster.Options) {
		o.Scheme = scheme
		o.Cache = scope.CacheOptions(scheme)
		co := setup.ClientOptions()
		o.Client.Cache = &co
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = cl.Start(ctx) }()
	if !cl.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	return cl
}
