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
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// repoSources is the repository this test runs in, with the pinned helm.
func repoSources(t *testing.T) sources {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	helm := os.Getenv("HELM")
	if helm == "" {
		helm = filepath.Join(root, "bin", "helm")
	}
	if _, err := os.Stat(helm); err != nil {
		t.Fatalf("helm not found at %s: run `make helm` or set HELM", helm)
	}
	return sources{root: root, helm: helm}
}

// The committed Chart.yaml carries exactly what its sources give.
func TestChartMetadataMatchesItsSources(t *testing.T) {
	if err := checkChartMetadata(repoSources(t)); err != nil {
		t.Fatal(err)
	}
}

// Artifact Hub reads each annotation in the shape its documentation gives.
func TestTheAnnotationsAreInArtifactHubsShape(t *testing.T) {
	s := repoSources(t)
	var chart struct {
		AppVersion  string            `json:"appVersion"`
		KubeVersion string            `json:"kubeVersion"`
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal([]byte(readTestFile(t, chartYAML(s.root))), &chart); err != nil {
		t.Fatal(err)
	}
	a := chart.Annotations
	var imgs []image
	var cards []crdCard
	var changes []change
	var examples []map[string]any
	for key, into := range map[string]any{"images": &imgs, "crds": &cards, "changes": &changes, "crdsExamples": &examples} {
		if err := yaml.UnmarshalStrict([]byte(a["artifacthub.io/"+key]), into); err != nil {
			t.Errorf("artifacthub.io/%s: %v", key, err)
		}
	}
	var names []string
	for _, i := range imgs {
		names = append(names, i.Name)
		if want := "ghcr.io/switchboard-dev/switchboard/" + i.Name + ":" + chart.AppVersion; i.Image != want {
			t.Errorf("image %s, want %s", i.Image, want)
		}
	}
	if !slices.Equal(names, []string{"manager", "webhook"}) {
		t.Errorf("images %v, want the manager and the webhook", names)
	}
	bases, _ := filepath.Glob(filepath.Join(s.root, "config", "crd", "bases", "*.yaml"))
	if len(cards) != len(bases) || len(examples) < len(bases) {
		t.Errorf("%d CRD cards and %d examples for %d CRDs", len(cards), len(examples), len(bases))
	}
	for _, c := range changes {
		if !slices.Contains(slices.Collect(maps.Values(changeKinds)), c.Kind) || c.Description == "" {
			t.Errorf("change %+v: not an Artifact Hub kind, or no description", c)
		}
	}
	if chart.KubeVersion != ">=1.37.0-0" || a["artifacthub.io/license"] != "Apache-2.0" || a["artifacthub.io/operator"] != "true" {
		t.Errorf("kubeVersion %q, license %q, operator %q", chart.KubeVersion, a["artifacthub.io/license"], a["artifacthub.io/operator"])
	}
}

// Each source changed in a copy of the repository makes the check name the
// annotation it feeds; `make chart` then brings Chart.yaml back in step.
func TestTheCheckFailsWhenASourceChanges(t *testing.T) {
	repo := repoSources(t)
	for name, c := range map[string]struct {
		change func(t *testing.T, root string)
		stale  []string
		after  string // in Chart.yaml after make chart
	}{
		"a CRD added, with its sample": {
			change: addWidgetKind,
			stale:  []string{"artifacthub.io/crds", "artifacthub.io/crdsExamples"},
			after:  "displayName: Widget Thing",
		},
		"a sample edited": {
			change: func(t *testing.T, root string) {
				edit(t, filepath.Join(root, "config", "samples", "switchboard_v1alpha1_slidestock.yaml"), "memo: Feed formats", "memo: Other formats")
			},
			stale: []string{"artifacthub.io/crdsExamples"},
			after: "memo: Other formats",
		},
		"a change added to the changelog": {
			change: func(t *testing.T, root string) {
				edit(t, filepath.Join(root, "CHANGELOG.md"), "\n[Unreleased]:", "\n### Fixed\n\n- The [webhook](docs/x.md) no longer\n  drops a header.\n\n[Unreleased]:")
			},
			stale: []string{"artifacthub.io/changes"},
			after: "description: The webhook no longer drops a header.\n      links:\n        - name: webhook\n          url: https://github.com/switchboard-dev/switchboard/blob/main/docs/x.md",
		},
		"the images' repository changed": {
			change: func(t *testing.T, root string) {
				edit(t, filepath.Join(root, "charts", "switchboard", "values.yaml"), "repository: ghcr.io/switchboard-dev/switchboard", "repository: registry.example.com/sb")
			},
			stale: []string{"artifacthub.io/images"},
			after: "image: registry.example.com/sb/manager:",
		},
		"the tested Kubernetes moved": {
			change: func(t *testing.T, root string) {
				edit(t, filepath.Join(root, "Makefile"), "ENVTEST_K8S_VERSION ?= 1.37.1", "ENVTEST_K8S_VERSION ?= 1.38.2")
				edit(t, filepath.Join(root, "docs", "versioning.md"), "kube-apiserver 1.37.1", "kube-apiserver 1.38.2")
			},
			stale: []string{"kubeVersion"},
			after: "kubeVersion: '>=1.38.0-0'",
		},
		"a pre-release version of the chart": {
			change: func(t *testing.T, root string) {
				edit(t, chartYAML(root), "\nversion: 0.1.0\n", "\nversion: 0.2.0-rc.1\n")
			},
			stale: []string{"artifacthub.io/prerelease"},
			after: `artifacthub.io/prerelease: "true"`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := sources{root: copyRepo(t, repo.root), helm: repo.helm}
			if err := checkChartMetadata(s); err != nil {
				t.Fatalf("the unchanged copy: %v", err)
			}
			c.change(t, s.root)
			err := checkChartMetadata(s)
			if err == nil {
				t.Fatal("the check passed after the change")
			}
			for _, key := range c.stale {
				if !strings.Contains(err.Error(), key) {
					t.Errorf("the check's error does not name %s: %v", key, err)
				}
			}
			if err := chartMetadata(s); err != nil {
				t.Fatal(err)
			}
			if err := checkChartMetadata(s); err != nil {
				t.Fatalf("after make chart: %v", err)
			}
			if got := readTestFile(t, chartYAML(s.root)); !strings.Contains(got, c.after) {
				t.Errorf("Chart.yaml after make chart lacks %q", c.after)
			}
		})
	}
}

// A kind nobody wrote an example of fails the generation, naming it.
func TestACRDWithoutASampleIsRefused(t *testing.T) {
	repo := repoSources(t)
	s := sources{root: copyRepo(t, repo.root), helm: repo.helm}
	addWidgetKind(t, s.root)
	edit(t, filepath.Join(s.root, "config", "samples", "kustomization.yaml"), "- widget.yaml\n", "")
	if err := chartMetadata(s); err == nil || !strings.Contains(err.Error(), "no example of switchboard.dev/WidgetThing") {
		t.Fatalf("error %v, want one naming the kind without an example", err)
	}
}

// addWidgetKind adds a CRD (SlideStock's, renamed) and a sample of it.
func addWidgetKind(t *testing.T, root string) {
	t.Helper()
	crd := readTestFile(t, filepath.Join(root, "config", "crd", "bases", "switchboard.dev_slidestocks.yaml"))
	crd = strings.NewReplacer("SlideStock", "WidgetThing", "slidestocks", "widgetthings", "slidestock", "widgetthing").Replace(crd)
	writeTestFile(t, filepath.Join(root, "config", "crd", "bases", "switchboard.dev_widgetthings.yaml"), crd)
	samples := filepath.Join(root, "config", "samples")
	writeTestFile(t, filepath.Join(samples, "widget.yaml"), "# A widget.\napiVersion: switchboard.dev/v1alpha1\nkind: WidgetThing\nmetadata:\n  name: w\nspec:\n  url: https://speakerdeck.com/a/b\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: not-an-example\n")
	edit(t, filepath.Join(samples, "kustomization.yaml"), "resources:\n", "resources:\n- widget.yaml\n")
}

// copyRepo copies the sources of the metadata into a temporary root.
func copyRepo(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	for _, dir := range []string{"charts", filepath.Join("config", "crd", "bases"), filepath.Join("config", "samples")} {
		if err := os.CopyFS(filepath.Join(to, dir), os.DirFS(filepath.Join(from, dir))); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"CHANGELOG.md", "LICENSE", "Makefile", filepath.Join("docs", "versioning.md")} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(to, f)), 0o750); err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, filepath.Join(to, f), readTestFile(t, filepath.Join(from, f)))
	}
	return to
}

// edit replaces old, which must be there, in a file.
func edit(t *testing.T, file, old, replacement string) {
	t.Helper()
	text := readTestFile(t, file)
	if !strings.Contains(text, old) {
		t.Fatalf("%s lacks %q", file, old)
	}
	writeTestFile(t, file, strings.Replace(text, old, replacement, 1))
}

func readTestFile(t *testing.T, file string) string {
	t.Helper()
	raw, err := os.ReadFile(file) //nolint:gosec // the test's own files
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func writeTestFile(t *testing.T, file, text string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
