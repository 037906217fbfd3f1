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

package scenario

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// staged are the objects the demo leaves not Ready on purpose, and why.
var staged = map[string]string{
	"SlideStock/demo/missing-deck": "a deck SpeakerDeck does not have: Failed",
	"ReceiveLink/demo/handout-bob": "a 20 s share link, shown expiring: Expired",
}

// CheckTable checks that every Switchboard object is Ready but the staged
// ones and extra, and says which those are. It needs only C.
func (d *Demo) CheckTable(ctx context.Context, extra map[string]string) error {
	all := maps.Clone(staged)
	maps.Copy(all, extra)
	var notReady []string
	for _, kind := range v1alpha1.Kinds() {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(kind + "List"))
		if err := d.C.List(ctx, list); meta.IsNoMatchError(err) && d.Previous {
			continue // a kind the previous release does not have
		} else if err != nil {
			return err
		}
		for _, o := range list.Items {
			key := kind + "/" + o.GetNamespace() + "/" + o.GetName()
			conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
			ready := false
			for _, c := range conds {
				m, _ := c.(map[string]any)
				ready = ready || m["type"] == "Ready" && m["status"] == "True"
			}
			_, isStaged := all[key]
			switch {
			case !ready && !isStaged:
				notReady = append(notReady, key)
			case ready && isStaged:
				return fmt.Errorf("%s is Ready, but the demo staged it not to be (%s)", key, all[key])
			}
		}
	}
	if len(notReady) > 0 {
		return fmt.Errorf("not Ready: %s", strings.Join(notReady, ", "))
	}
	fmt.Printf("    every object is Ready but the %d staged:\n", len(all))
	for _, key := range slices.Sorted(maps.Keys(all)) {
		fmt.Printf("      %-38s %s\n", key, all[key])
	}
	return nil
}
