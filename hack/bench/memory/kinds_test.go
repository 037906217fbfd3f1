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

package memory

import (
	"testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// Every kind is benchmarked or skipped with a reason, and each maker makes
// an object of its own kind, whose list the scheme knows.
func TestEveryKindIsMadeOrSkipped(t *testing.T) {
	kinds, err := memKinds()
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds)+len(memSkipped) != len(v1alpha1.Kinds()) {
		t.Fatalf("%d kinds made and %d skipped, want %d in all", len(kinds), len(memSkipped), len(v1alpha1.Kinds()))
	}
	for _, k := range kinds {
		gvks, _, err := setup.Scheme().ObjectKinds(k.make(1))
		if err != nil || len(gvks) != 1 || gvks[0].Kind != k.name {
			t.Errorf("the %s maker makes %v (%v)", k.name, gvks, err)
		}
		if _, ok := k.list().(interface{ GetResourceVersion() string }); !ok {
			t.Errorf("the %s list is not a list", k.name)
		}
	}
}

// A kind with neither a maker nor a reason to skip it is an error.
func TestAKindWithNoMakerIsAnError(t *testing.T) {
	kept := memMakers["ReceiveLink"]
	delete(memMakers, "ReceiveLink")
	defer func() { memMakers["ReceiveLink"] = kept }()
	if _, err := memKinds(); err == nil {
		t.Fatal("memKinds took a kind with no maker")
	}
}
