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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// promtool runs the pinned promtool (testenv.PinnedTool) with args.
func promtool(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := testenv.PinnedTool("promtool", "PROMTOOL")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...) //nolint:gosec // the pinned tool, on files of this test
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

// The chart's alerts are valid rules (promtool check rules), each fires
// when it should and stays quiet when it should not (promtool test rules,
// alerts.test.yaml), and every alert has its tests.
func TestTheAlertsPassPromtoolsChecksAndTheirUnitTests(t *testing.T) {
	objs := render(t, "switchboard-system", alertValues)
	rules := ofKind(objs, "PrometheusRule")
	if len(rules) != 1 {
		t.Fatalf("%d PrometheusRules rendered, want 1", len(rules))
	}
	groups, _, err := unstructured.NestedSlice(rules[0].Object, "spec", "groups")
	if err != nil || len(groups) == 0 {
		t.Fatalf("the PrometheusRule has no groups: %v", err)
	}
	b, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := readFile(t, "alerts.test.yaml")
	if err := os.WriteFile(filepath.Join(dir, "alerts.test.yaml"), []byte(tests), 0o600); err != nil {
		t.Fatal(err)
	}
	out := promtool(t, "check", "rules", filepath.Join(dir, "rules.yaml"))
	t.Logf("promtool check rules:\n%s", out)
	out = promtool(t, "test", "rules", filepath.Join(dir, "alerts.test.yaml"))
	t.Logf("promtool test rules:\n%s", out)

	// Every alert is tested, firing (its name is expected with alerts) and
	// quiet (an evaluation of it expects none, or only other objects).
	var alerts []string
	for _, g := range groups {
		rs, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rs {
			if name, _ := r.(map[string]any)["alert"].(string); name != "" {
				alerts = append(alerts, name)
			}
		}
	}
	tested := regexp.MustCompile(`alertname: (\w+)`).FindAllStringSubmatch(tests, -1)
	for _, name := range alerts {
		if !slices.ContainsFunc(tested, func(m []string) bool { return m[1] == name }) {
			t.Errorf("alert %s has no unit test in alerts.test.yaml", name)
		}
	}
	if len(alerts) < 7 {
		t.Errorf("%d alerts rendered, want the 7 of docs/install.md: %v", len(alerts), alerts)
	}
}

// The dashboard ships as a ConfigMap for Grafana's sidecar only when asked
// for, in the namespace asked for, holding the repository's dashboard; and
// every panel's query is PromQL promtool accepts (checked as a recording
// rule). test/binaries checks that each metric it selects is served.
func TestTheDashboardShipsOnlyWhenAskedAndEachQueryParses(t *testing.T) {
	if n := len(ofKind(render(t, "switchboard-system", nil), "ConfigMap")); n != 0 {
		t.Fatalf("%d ConfigMaps rendered by default, want none", n)
	}
	objs := render(t, "switchboard-system", dashboardValues)
	cms := ofKind(objs, "ConfigMap")
	if len(cms) != 1 {
		t.Fatalf("%d ConfigMaps rendered, want the dashboard's", len(cms))
	}
	cm := cms[0]
	if cm.GetNamespace() != "monitoring" || cm.GetLabels()["grafana_dashboard"] != "1" || cm.GetAnnotations()["grafana_folder"] != "Switchboard" {
		t.Errorf("dashboard ConfigMap in %q, labels %v, annotations %v", cm.GetNamespace(), cm.GetLabels(), cm.GetAnnotations())
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	if got, want := data["switchboard.json"], strings.TrimSpace(readFile(t, "../../charts/switchboard/dashboards/switchboard.json")); got != want {
		t.Fatalf("the ConfigMap's dashboard differs from charts/switchboard/dashboards/switchboard.json")
	}
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(data["switchboard.json"]), &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	var rules []map[string]any
	rows := 0
	for _, p := range dash.Panels {
		if p.Type == "row" {
			rows++
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for i, q := range p.Targets {
			// Grafana's variable, as Grafana substitutes it.
			expr := strings.ReplaceAll(q.Expr, "$job", ".*switchboard.*")
			rules = append(rules, map[string]any{"record": fmt.Sprintf("dashboard:panel%d:query%d", len(rules), i), "expr": expr})
		}
	}
	if dash.UID == "" || rows < 7 || len(rules) < 20 {
		t.Fatalf("the dashboard has uid %q, %d rows and %d queries: want a uid and a row per integration", dash.UID, rows, len(rules))
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dashboard-queries.yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	promtool(t, "check", "rules", file)
}
