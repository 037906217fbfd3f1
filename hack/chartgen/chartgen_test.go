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
	"strings"
	"testing"
)

func TestValuesTable(t *testing.T) {
	for name, c := range map[string]struct {
		values  string
		want    []string
		wantErr string
	}{
		"documents leaves and commented maps, walks into documented maps": {
			values: "# file header\n\n# -- The name.\nname: \"\"\nimage:\n  # -- The tag.\n  # Empty means appVersion.\n  tag: v1\n# -- Labels | of pods.\nlabels: {a: b}\n",
			want: []string{
				"| `name` | string | `\"\"` | The name. |",
				"| `image.tag` | string | `\"v1\"` | The tag. Empty means appVersion. |",
				"| `labels` | object | `{\"a\":\"b\"}` | Labels \\| of pods. |",
			},
		},
		"refuses a value nobody documented": {
			values:  "# -- Documented.\na: 1\nb: 2\n",
			wantErr: "b has no \"# --\" comment",
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			values, readme := filepath.Join(dir, "values.yaml"), filepath.Join(dir, "README.md")
			if err := os.WriteFile(values, []byte(c.values), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(readme, []byte("# x\n\n"+tableBegin+"\nstale\n"+tableEnd+"\n\nafter\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			err := valuesTable(values, readme)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(readme) //nolint:gosec // the test's own file
			if err != nil {
				t.Fatal(err)
			}
			got := string(raw)
			for _, w := range append(c.want, "after\n") {
				if !strings.Contains(got, w) {
					t.Errorf("README lacks %q:\n%s", w, got)
				}
			}
			if strings.Contains(got, "stale") {
				t.Errorf("the old table survived:\n%s", got)
			}
		})
	}
}

func TestCRDTemplateGatesAndAnnotates(t *testing.T) {
	crd := "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  annotations:\n    controller-gen.kubebuilder.io/version: v0.23.0\n  name: xs.switchboard.dev\nspec: {}\n"
	got, err := crdTemplate(crd, "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"{{- if .Values.crds.enabled }}\napiVersion",
		"  annotations:\n    {{- include \"switchboard.crdAnnotations\" . | nindent 4 }}\n    controller-gen.kubebuilder.io/version: v0.23.0\n  labels:\n",
		"spec: {}\n{{- end }}\n",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("template lacks %q:\n%s", w, got)
		}
	}
	if _, err := crdTemplate(strings.Replace(crd, "spec: {}", "spec: {description: \"{{x}}\"}", 1), "x.yaml"); err == nil {
		t.Error("a CRD holding {{ was accepted; Helm would evaluate it")
	}
}
