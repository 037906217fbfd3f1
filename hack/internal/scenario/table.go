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
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	if err := EachObject(ctx, d.C, d.Previous, func(kind string, o *unstructured.Unstructured) error {
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
		return nil
	}); err != nil {
		return err
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

// EachObject hands each object of every Switchboard kind that c lists
// with opts to each, kind by kind. A kind the cluster does not serve is
// an error, unless unserved is set (a previous release, which lacks the
// newer kinds): then it is passed over.
func EachObject(ctx context.Context, c client.Reader, unserved bool, each func(kind string, o *unstructured.Unstructured) error, opts ...client.ListOption) error {
	for _, kind := range v1alpha1.Kinds() {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(kind + "List"))
		if err := c.List(ctx, list, opts...); meta.IsNoMatchError(err) && unserved {
			continue
		} else if err != nil {
			return err
		}
		for i := range list.Items {
			if err := each(kind, &list.Items[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
