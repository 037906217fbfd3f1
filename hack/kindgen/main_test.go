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

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// The kinds kindgen finds in the API package are the ones the scheme
// serves, and the generated file is what it would write now.
func TestAPIPackage(t *testing.T) {
	dir := filepath.Join("..", "..", "api", "v1alpha1")
	kinds, pkg, err := findKinds(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range kinds {
		names = append(names, k.name)
	}
	if !slices.Equal(names, v1alpha1.Kinds()) {
		t.Errorf("kindgen finds %v, the scheme serves %v", names, v1alpha1.Kinds())
	}
	header, err := os.ReadFile(filepath.Join("..", "boilerplate.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := render(header, pkg, kinds)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, Output))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is stale: run make generate", Output)
	}
}

// A kind's accessors follow what its status embeds; a root type without a
// status of this package is refused by name.
func TestKinds(t *testing.T) {
	dir := t.TempDir()
	src := `package api

type Shared struct{}
type OAuthConnectStatus struct{}
type ReconcileStatus struct{}

// +kubebuilder:object:root=true

// Gadget is a kind.
type Gadget struct {
	Status GadgetStatus
}

type GadgetStatus struct {
	ReconcileStatus
	OAuthConnectStatus
	Shared
}

// Plain has no root marker.
type Plain struct {
	Status GadgetStatus
}
`
	if err := os.WriteFile(filepath.Join(dir, "types.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	kinds, _, err := findKinds(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds) != 1 || kinds[0].name != "Gadget" || len(kinds[0].methods) != 2 ||
		kinds[0].methods[0].method != "GetReconcileStatus" || kinds[0].methods[1].method != "GetOAuthConnect" {
		t.Fatalf("kinds = %+v, want Gadget with GetReconcileStatus and GetOAuthConnect", kinds)
	}

	bad := strings.Replace(src, "Status GadgetStatus\n}\n\ntype GadgetStatus", "Spec GadgetStatus\n}\n\ntype GadgetStatus", 1)
	if err := os.WriteFile(filepath.Join(dir, "types.go"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := findKinds(dir); err == nil || !strings.Contains(err.Error(), "Gadget carries +kubebuilder:object:root=true but has no Status field") {
		t.Errorf("a root type without Status: err = %v", err)
	}
}
