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
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// TestEveryFieldHasAnExplanation reads the generated CRDs and fails on any
// field without a description, since that is what `kubectl explain` shows.
func TestEveryFieldHasAnExplanation(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	if kinds := v1alpha1.Kinds(); err != nil || len(files) != len(kinds) {
		t.Fatalf("want a CRD file for each of %v, got %d (%v): run make manifests", kinds, len(files), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatal(err)
		}
		for _, v := range crd.Spec.Versions {
			var missing []string
			walk(v.Schema.OpenAPIV3Schema, crd.Spec.Names.Singular, &missing)
			sort.Strings(missing)
			for _, m := range missing {
				t.Errorf("%s has no description (kubectl explain would show nothing)", m)
			}
		}
	}
}

func walk(s *apiextensionsv1.JSONSchemaProps, path string, missing *[]string) {
	if s == nil {
		return
	}
	for name, prop := range s.Properties {
		p := path + "." + name
		// The API server documents metadata (ObjectMeta) itself.
		isMetadata := name == "metadata" && !strings.Contains(path, ".")
		if prop.Description == "" && !isMetadata {
			*missing = append(*missing, p)
		}
		walk(&prop, p, missing)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walk(s.Items.Schema, path+"[]", missing)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walk(s.AdditionalProperties.Schema, path+"{}", missing)
	}
}
