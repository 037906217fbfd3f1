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

package binaries_test

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// scrapeText GETs a metrics page.
func scrapeText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url) //nolint:gosec,noctx // a binary of this test, on loopback
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d, %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// served is every sample name the pages can hold: each family a "# TYPE"
// line names, a histogram's with _bucket, _sum and _count.
func served(pages map[string]string) map[string]bool {
	names := map[string]bool{}
	for _, page := range pages {
		for _, line := range strings.Split(page, "\n") {
			f := strings.Fields(line)
			if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
				continue
			}
			names[f[2]] = true
			switch f[3] {
			case "histogram":
				names[f[2]+"_bucket"], names[f[2]+"_sum"], names[f[2]+"_count"] = true, true, true
			case "summary":
				names[f[2]+"_sum"], names[f[2]+"_count"] = true, true
			}
		}
	}
	return names
}

// metricName finds the metrics a query selects: our names, each followed
// by its label matchers.
var metricName = regexp.MustCompile(`\b((?:switchboard|controller_runtime|workqueue)_[a-zA-Z0-9_:]*)\{`)

// queried is every metric the chart's dashboard and alert expressions
// select, with where each is queried.
func queried(t *testing.T) map[string][]string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	add := func(where, expr string) {
		for _, m := range metricName.FindAllStringSubmatch(expr, -1) {
			out[m[1]] = append(out[m[1]], where)
		}
	}
	raw, err := os.ReadFile(filepath.Join(root, "charts", "switchboard", "dashboards", "switchboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	for _, p := range dash.Panels {
		for _, q := range p.Targets {
			add("dashboard panel "+p.Title, q.Expr)
		}
	}
	// The alerts' expressions: each "expr: |" block of the template, its
	// lines indented past the key (annotations name metrics in prose).
	rules, err := os.ReadFile(filepath.Join(root, "charts", "switchboard", "templates", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	indent := -1
	for _, line := range strings.Split(string(rules), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		depth := len(line) - len(trimmed)
		switch {
		case strings.HasPrefix(trimmed, "expr:"):
			indent = depth
		case indent >= 0 && depth > indent:
			add("alert rules", line)
		default:
			indent = -1
		}
	}
	return out
}

// checkDashboardAndAlertsQueryServedMetrics: every metric the dashboard
// and the alerts select is one the running binaries serve.
func checkDashboardAndAlertsQueryServedMetrics(t *testing.T, pages map[string]string) {
	t.Helper()
	have := served(pages)
	want := queried(t)
	if len(want) < 10 || len(have) < 10 {
		t.Fatalf("%d metrics queried, %d served: the scan found too few to judge", len(want), len(have))
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if !have[name] {
			t.Errorf("%s is queried (%s) but neither binary serves it", name, strings.Join(slices.Compact(want[name]), ", "))
		}
	}
}
