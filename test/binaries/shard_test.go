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

package binaries_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// fetches records which manager fetched which deck: each manager reaches
// a sandbox of its own, so the sandbox that answered names the manager.
type fetches struct {
	mu sync.Mutex
	by map[string][]string // deck URL → managers
}

func (f *fetches) serve(manager string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if deck := r.URL.Query().Get("url"); deck != "" {
			f.mu.Lock()
			if !slices.Contains(f.by[deck], manager) {
				f.by[deck] = append(f.by[deck], manager)
			}
			f.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

func (f *fetches) of(deck string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.by[deck])
}

// shard is one manager of a sharded install, as the chart renders it.
type shard struct{ name, selector, lease string }

var shards = []shard{
	{"main", v1alpha1.ShardLabel + " notin (shard1,shard2)", "manager.switchboard.dev"},
	{"shard1", v1alpha1.ShardLabel + " in (shard1)", "manager.switchboard.dev-shard1"},
	{"shard2", v1alpha1.ShardLabel + " in (shard2)", "manager.switchboard.dev-shard2"},
}

// Three managers share the objects by their shard label, as Flux's
// controllers do (--watch-label-selector, a Lease each): shard1 takes the
// objects labelled shard1, shard2 shard2's, and the main manager the
// rest, the unlabelled ones among them. Every object is reconciled, each
// by exactly one manager.
func TestShardsReconcileDisjointSharesAndTheMainManagerTheRest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns, err := env.Namespace("shards")
	if err != nil {
		t.Fatal(err)
	}
	owner := map[string]string{} // deck URL → the manager that must fetch it
	var objs []*v1alpha1.SlideStock
	for i, key := range []string{"shard1", "shard2", "", "shard1", "shard2", "", "other"} {
		s := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("deck-%d", i), Namespace: ns}}
		s.Spec.URL = fmt.Sprintf("https://speakerdeck.com/shards/deck-%d", i)
		owner[s.Spec.URL] = "main" // unlabelled, or a key no shard takes
		if key != "" {
			s.Labels = map[string]string{v1alpha1.ShardLabel: key}
			if key != "other" {
				owner[s.Spec.URL] = key
			}
		}
		objs = append(objs, s)
	}
	f := &fetches{by: map[string][]string{}}
	kc := kubeconfig(t)
	var procs []*process
	var probes []string
	for _, sh := range shards {
		sd := sandbox.NewSpeakerDeck()
		for i := range objs {
			sd.AddDeck(sandbox.SpeakerDeckDeck{User: "shards", Slug: fmt.Sprintf("deck-%d", i), Title: fmt.Sprintf("Deck %d", i),
				AuthorName: "Shards", PlayerID: fmt.Sprintf("%032x", i+1)})
		}
		srv := httptest.NewServer(f.serve(sh.name, sandbox.New(sd)))
		t.Cleanup(srv.Close)
		addr := freeAddrs(t, 1)[0]
		args := []string{"--kubeconfig", kc, "--metrics-bind-address", "0", "--health-probe-bind-address", addr,
			"--state-namespace", ns, "--link-namespace", ns,
			"--leader-elect", "--leader-election-namespace", ns, "--leader-election-id", sh.lease,
			"--watch-label-selector", sh.selector}
		for _, u := range sandbox.UpstreamFlags(srv.URL) {
			args = append(args, "--upstream", u)
		}
		procs = append(procs, start(t, "manager", args...))
		probes = append(probes, "http://"+addr+"/readyz")
	}
	waitFor(t, "the three managers ready", time.Minute, func() bool {
		for _, p := range probes {
			if !ok(p) {
				return false
			}
		}
		return true
	}, procs...)
	for _, s := range objs {
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every SlideStock Ready", time.Minute, func() bool {
		for _, s := range objs {
			var got v1alpha1.SlideStock
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(s), &got); err != nil || !status.IsTrue(&got, v1alpha1.ReadyCondition) {
				return false
			}
		}
		return true
	}, procs...)
	for _, s := range objs {
		if got, want := f.of(s.Spec.URL), []string{owner[s.Spec.URL]}; !slices.Equal(got, want) {
			t.Errorf("%s (labels %v) was fetched by %v, want only %v", s.Name, s.Labels, got, want)
		}
	}
	// Each manager led under its own Lease.
	for _, sh := range shards {
		var lease coordinationv1.Lease
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: sh.lease}, &lease); err != nil {
			t.Errorf("the %s manager's Lease %s: %v", sh.name, sh.lease, err)
		}
	}
}

// A selector that does not parse stops the manager at start-up, naming
// the flag, rather than starting a manager that reconciles nothing.
func TestManagerRefusesAWatchLabelSelectorThatDoesNotParse(t *testing.T) {
	code, out := run(t, "manager", "--watch-label-selector="+v1alpha1.ShardLabel+" in (shard1")
	if code != 2 || !strings.Contains(out, "--watch-label-selector") || !strings.Contains(out, "is not a label selector") {
		t.Fatalf("exit %d, output:\n%s\nwant exit 2 naming the flag", code, out)
	}
}
