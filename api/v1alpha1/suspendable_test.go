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

package v1alpha1_test

import (
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// TestSuspendableIsEveryKindWithSpecSuspend keeps v1alpha1.Suspendable
// true to the CRDs: a kind is Suspendable exactly when its schema has
// spec.suspend, so that `kubectl switchboard suspend` neither refuses a
// kind that can be suspended nor patches a field a kind does not have.
func TestSuspendableIsEveryKindWithSpecSuspend(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) != len(v1alpha1.Kinds()) {
		t.Fatalf("want a CRD file for each of %v, got %v (%v): run make manifests", v1alpha1.Kinds(), files, err)
	}
	var suspendable, not []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatal(err)
		}
		kind := crd.Spec.Names.Kind
		_, hasSuspend := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["suspend"]
		obj, err := scheme.New(v1alpha1.GroupVersion.WithKind(kind))
		if err != nil {
			t.Fatal(err)
		}
		_, isSuspendable := obj.(v1alpha1.Suspendable)
		if hasSuspend != isSuspendable {
			t.Errorf("%s: spec.suspend in the CRD is %v, v1alpha1.Suspendable is %v", kind, hasSuspend, isSuspendable)
		}
		if isSuspendable {
			suspendable = append(suspendable, kind)
		} else {
			not = append(not, kind)
		}
	}
	// Both sides hold a kind: a schema read wrong (no spec.suspend found
	// anywhere) or a Suspendable lost from every kind fails here.
	if len(suspendable) == 0 || len(not) == 0 {
		t.Errorf("Suspendable kinds %v, others %v: want the kinds with spec.suspend (NotionIntegration, CalendarWatch, SheetConnection, SlideStock) on one side, the children and the rest on the other", suspendable, not)
	}
}

// NewObjects makes one empty object of each kind Kinds names, in its
// order, fresh at each call: a caller may keep or change them.
func TestNewObjectsAreTheKinds(t *testing.T) {
	first, second := v1alpha1.NewObjects(), v1alpha1.NewObjects()
	kinds := v1alpha1.Kinds()
	if len(first) != len(kinds) {
		t.Fatalf("%d objects for %d kinds", len(first), len(kinds))
	}
	for i, obj := range first {
		if got := v1alpha1.KindOf(obj); got != kinds[i] {
			t.Errorf("object %d is a %s, want %s", i, got, kinds[i])
		}
		if obj == second[i] {
			t.Errorf("the %s object is the same at both calls", kinds[i])
		}
	}
}
