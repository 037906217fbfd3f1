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

// Package chart tests charts/switchboard: helm lint --strict and helm
// template over a matrix of values, every rendered object applied to a real
// API server with a server-side dry run, and assertions on the objects
// (security contexts, images, PDBs, NetworkPolicy ports, RBAC equal to
// config/rbac). Helm comes from $HELM (the Makefile sets it) or ./bin/helm.
package chart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/switchboard-dev/switchboard/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env, installMonitoringCRDs) }

// root is the repository; chartDir the chart under test.
func paths(t testing.TB) (root, chartDir string) {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root, filepath.Join(root, "charts", "switchboard")
}

// helm runs helm and returns its combined output.
func helm(t testing.TB, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := testenv.Helm(ctx, &out, &out, args...)
	return out.String(), err
}

// setArgs turns values into --set-json flags, one per top-level path.
func setArgs(values map[string]any) []string {
	var args []string
	for path, v := range values {
		b, err := jsonOf(v)
		if err != nil {
			panic(err)
		}
		args = append(args, "--set-json", path+"="+b)
	}
	return args
}

func jsonOf(v any) (string, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	j, err := yaml.YAMLToJSON(b)
	return string(j), err
}

// The value sets the single tests render, beside the matrix
// (chart_test.go). A check that must hold for every rendering
// (psa_test.go) ranges over everyValueSet. The refusal tests' sets are not
// among them: the chart refuses to render those.
var (
	// shardValues: TestShardsRenderOneManagerEachAndPartitionTheObjects.
	shardValues = map[string]any{"manager.shards": []any{"shard1", "shard2"}, "networkPolicy.enabled": true, "manager.replicas": 2}
	// alertValues: TestTheAlertsPassPromtoolsChecksAndTheirUnitTests.
	alertValues = map[string]any{"prometheusRule.enabled": true}
	// dashboardValues: TestTheDashboardShipsOnlyWhenAskedAndEachQueryParses.
	dashboardValues = map[string]any{"grafanaDashboard.enabled": true, "grafanaDashboard.namespace": "monitoring",
		"grafanaDashboard.annotations": map[string]any{"grafana_folder": "Switchboard"}}
	// publicURLValues: TestTheChartPassesEveryFlagTheKustomizeInstallPasses.
	publicURLValues = map[string]any{"publicURL": "https://hooks.example.com"}
	// upgradeValues: the first helm upgrade of
	// TestInstallUpgradeUninstallKeepsTheCRDsAndUsersResources.
	upgradeValues = map[string]any{"webhook.replicas": 3, "crds.keep": false}
)

// everyValueSet is every set of values a chart test renders or installs,
// by name: the matrix's and the single tests'.
func everyValueSet() map[string]map[string]any {
	sets := map[string]map[string]any{
		"shards":    shardValues,
		"alerts":    alertValues,
		"dashboard": dashboardValues,
		"publicURL": publicURLValues,
		"upgrade":   upgradeValues,
		// The lifecycle test's second upgrade: --reuse-values with crds.keep back on.
		"upgrade, reusing its values": {"webhook.replicas": 3, "crds.keep": true},
	}
	for name, set := range matrix {
		sets["matrix: "+name] = set.values
	}
	return sets
}

// render runs helm template and decodes every object.
func render(t testing.TB, namespace string, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	_, chartDir := paths(t)
	args := append([]string{"template", "sb", chartDir, "--namespace", namespace}, setArgs(values)...)
	out, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	return decode(t, out)
}

func decode(t testing.TB, manifests string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatalf("decode rendered manifests: %v", err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// typed converts a rendered object into its Go type.
func typed[T any](t testing.TB, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

// ofKind returns the rendered objects of one kind.
func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// named returns the one rendered object of a kind and name.
func named(t testing.TB, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range ofKind(objs, kind) {
		if o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}

// dryRunApply sends every object to the API server as a server-side apply
// with dryRun=All: the server validates it (schema, CEL, RBAC escalation)
// and stores nothing.
func dryRunApply(t testing.TB, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	for _, u := range objs {
		err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()),
			client.DryRunAll, client.ForceOwnership, client.FieldOwner("chart-test"))
		if err != nil {
			t.Errorf("%s %s/%s refused by the API server: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
}

// installMonitoringCRDs installs minimal ServiceMonitor and PrometheusRule
// CRDs (the Prometheus Operator's group and kinds, any spec), which envtest
// does not have, so their objects go through the dry run too: the server
// checks apiVersion, kind, metadata and that the spec is an object.
func installMonitoringCRDs(e *testenv.Env) (func(), error) {
	ctx := context.Background()
	for _, k := range []struct{ kind, plural string }{{"ServiceMonitor", "servicemonitors"}, {"PrometheusRule", "prometheusrules"}} {
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata":   map[string]any{"name": k.plural + ".monitoring.coreos.com"},
			"spec": map[string]any{
				"group": "monitoring.coreos.com",
				"scope": "Namespaced",
				"names": map[string]any{"kind": k.kind, "plural": k.plural, "singular": strings.ToLower(k.kind), "listKind": k.kind + "List"},
				"versions": []any{map[string]any{
					"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{
						"type": "object",
						"properties": map[string]any{
							"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
						},
					}},
				}},
			},
		}}
		if err := e.Client.Create(ctx, crd); err != nil {
			return nil, fmt.Errorf("install %s CRD: %w", k.kind, err)
		}
		if err := waitEstablished(ctx, e, k.plural+".monitoring.coreos.com"); err != nil {
			return nil, err
		}
	}
	return func() {}, nil
}

func waitEstablished(ctx context.Context, e *testenv.Env, name string) error {
	var err error
	if _, ok := testenv.Poll(30*time.Second, 50*time.Millisecond, func() (bool, string) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apiextensions.k8s.io/v1")
		u.SetKind("CustomResourceDefinition")
		if err = e.Client.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return true, "" // stop: the error is the answer
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == string(metav1.ConditionTrue) {
				return true, ""
			}
		}
		return false, ""
	}); !ok {
		return fmt.Errorf("CRD %s not established after 30s", name)
	}
	return err
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path) //nolint:gosec // a file of this repository
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
