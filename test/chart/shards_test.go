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

package chart

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// manager.shards renders a manager Deployment per key, each with its own
// Lease, component and NetworkPolicy; their selectors share the objects
// out so that every object, labelled or not, falls to exactly one.
func TestShardsRenderOneManagerEachAndPartitionTheObjects(t *testing.T) {
	_, chartDir := paths(t)
	values := shardValues
	if out, err := helm(t, append([]string{"lint", "--strict", chartDir}, setArgs(values)...)...); err != nil {
		t.Fatalf("helm lint --strict: %v\n%s", err, out)
	}
	ns, err := env.Namespace("shards")
	if err != nil {
		t.Fatal(err)
	}
	objs := render(t, ns, values)
	dryRunApply(t, objs)
	managers := map[string]string{"sb-switchboard-manager": "", "sb-switchboard-manager-shard1": "shard1", "sb-switchboard-manager-shard2": "shard2"}
	selectors := map[string]labels.Selector{}
	leases := map[string]bool{}
	for name, key := range managers {
		d := typed[appsv1.Deployment](t, named(t, objs, "Deployment", name))
		a := args(t, objs, name)
		lease := "manager.switchboard.dev"
		if key != "" {
			lease += "-" + key
			if !slices.Contains(a, "--leader-election-id="+lease) {
				t.Errorf("%s: no --leader-election-id=%s among %v", name, lease, a)
			}
		}
		leases[lease] = true
		for _, arg := range a {
			if v, ok := strings.CutPrefix(arg, "--watch-label-selector="); ok {
				if selectors[name], err = labels.Parse(v); err != nil {
					t.Errorf("%s: %s: %v", name, arg, err)
				}
			}
		}
		if selectors[name] == nil {
			t.Errorf("%s has no --watch-label-selector among %v", name, a)
		}
		component := strings.TrimPrefix(name, "sb-switchboard-")
		if got := d.Spec.Selector.MatchLabels["app.kubernetes.io/component"]; got != component {
			t.Errorf("%s selects component %q, want %q (no two Deployments select each other's pods)", name, got, component)
		}
		named(t, objs, "NetworkPolicy", name)
		named(t, objs, "PodDisruptionBudget", name)
	}
	if len(leases) != len(managers) {
		t.Errorf("Leases %v: want one per manager", leases)
	}
	if t.Failed() {
		return
	}
	for _, l := range []map[string]string{{v1alpha1.ShardLabel: "shard1"}, {v1alpha1.ShardLabel: "shard2"}, {}, {v1alpha1.ShardLabel: "shard3"}, {"team": "a"}} {
		var takers []string
		for name, sel := range selectors {
			if sel.Matches(labels.Set(l)) {
				takers = append(takers, name)
			}
		}
		if len(takers) != 1 {
			t.Errorf("an object labelled %v is taken by %v, want exactly one manager", l, takers)
		}
	}
}
