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

package gitops_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// healthKeyPrefix is how Argo CD names a custom health check for one kind
// in argocd-cm: resource.customizations.health.<group>_<kind>.
const healthKeyPrefix = "resource.customizations.health." + "switchboard.dev" + "_"

// luaSourceFile is the one copy of the health check that docs/gitops.md
// embeds under every key.
const luaSourceFile = "config/argocd/health.lua"

// argoHealthCodes are the health statuses Argo CD accepts from a script;
// anything else it shows as Unknown.
var argoHealthCodes = map[string]bool{"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true}

// fencedYAML finds the ```yaml blocks of a Markdown file.
var fencedYAML = regexp.MustCompile("(?ms)^```ya?ml\n(.*?)^```")

// argoScripts reads docs/gitops.md and returns the argocd-cm snippet's
// health checks, by kind: the exact text a user pastes into Argo CD.
func argoScripts(t testing.TB) map[string]string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "gitops.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range fencedYAML.FindAllSubmatch(doc, -1) {
		if !bytes.Contains(m[1], []byte("name: argocd-cm")) {
			continue
		}
		var cm corev1.ConfigMap
		if err := yaml.UnmarshalStrict(m[1], &cm); err != nil {
			t.Fatalf("the argocd-cm snippet in docs/gitops.md is not a ConfigMap: %v", err)
		}
		scripts := map[string]string{}
		for key, script := range cm.Data {
			if kind, ok := strings.CutPrefix(key, healthKeyPrefix); ok {
				scripts[kind] = script
			}
		}
		return scripts
	}
	t.Fatal("docs/gitops.md has no ```yaml block with the argocd-cm ConfigMap")
	return nil
}

func TestArgoCDSnippetHasOneCheckPerKindAndIsTheSourceFile(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile(filepath.Join(root, luaSourceFile))
	if err != nil {
		t.Fatal(err)
	}
	scripts := argoScripts(t)
	kinds := v1alpha1.Kinds()
	for _, kind := range kinds {
		script, ok := scripts[kind]
		if !ok {
			t.Errorf("docs/gitops.md has no %s%s key", healthKeyPrefix, kind)
			continue
		}
		if script != string(source) {
			t.Errorf("the %s check in docs/gitops.md differs from %s; paste the file again", kind, luaSourceFile)
		}
		delete(scripts, kind)
	}
	for kind := range scripts {
		t.Errorf("docs/gitops.md has a health check for %s, which is no kind of api/v1alpha1", kind)
	}
}

// argoHealth runs a health script as Argo CD does (argo-cd util/lua): a
// Lua state with only the package, base and table libraries, a one-second
// limit, the object as the global obj (maps and lists as tables, numbers
// as Lua numbers), and the returned table read as {status, message}.
func argoHealth(t testing.TB, script string, u *unstructured.Unstructured) (status, message string) {
	t.Helper()
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for name, open := range map[string]lua.LGFunction{lua.LoadLibName: lua.OpenPackage, lua.BaseLibName: lua.OpenBase, lua.TabLibName: lua.OpenTable} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(open), NRet: 0, Protect: true}, lua.LString(name)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", luaValue(l, u.Object))
	if err := l.DoString(script); err != nil {
		t.Fatalf("the health check failed on %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the health check returned %s, not a table", l.Get(-1).Type())
	}
	status, message = lua.LVAsString(ret.RawGetString("status")), lua.LVAsString(ret.RawGetString("message"))
	if !argoHealthCodes[status] {
		t.Fatalf("the health check returned status %q, which Argo CD shows as Unknown", status)
	}
	return status, message
}

// luaValue converts an unstructured value as Argo CD's decodeValue does.
func luaValue(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := l.CreateTable(0, len(v))
		for k, item := range v {
			t.RawSetString(k, luaValue(l, item))
		}
		return t
	case []any:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(luaValue(l, item))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	}
	return lua.LNil
}

// TestArgoCDHealthOfHandWrittenStatuses covers the script's branches on
// statuses no controller is asked to produce here (a Stalled condition of
// an older generation, Reconciling over Ready=True), next to the states
// the end-to-end test drives.
func TestArgoCDHealthOfHandWrittenStatuses(t *testing.T) {
	script := argoScripts(t)["SlideStock"]
	cond := func(typ, status, reason string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": reason + " message"}
	}
	for _, tc := range []struct {
		name   string
		gen    int64
		status map[string]any
		want   string
	}{
		{"no status yet is Progressing", 1, nil, "Progressing"},
		{"Ready=True at the current generation is Healthy", 2,
			map[string]any{"observedGeneration": int64(2), "conditions": []any{cond("Ready", "True", "Succeeded")}}, "Healthy"},
		{"Ready=True of an older generation is Progressing", 3,
			map[string]any{"observedGeneration": int64(2), "conditions": []any{cond("Ready", "True", "Succeeded")}}, "Progressing"},
		{"Ready=True without observedGeneration is Progressing", 1,
			map[string]any{"conditions": []any{cond("Ready", "True", "Succeeded")}}, "Progressing"},
		{"Stalled=True at the current generation is Degraded", 1,
			map[string]any{"observedGeneration": int64(1), "conditions": []any{cond("Ready", "False", "InvalidSpec"), cond("Stalled", "True", "InvalidSpec")}}, "Degraded"},
		{"Stalled=True of an older generation is Progressing (the fix is being looked at)", 2,
			map[string]any{"observedGeneration": int64(1), "conditions": []any{cond("Ready", "False", "InvalidSpec"), cond("Stalled", "True", "InvalidSpec")}}, "Progressing"},
		{"Reconciling=True is Progressing", 1,
			map[string]any{"conditions": []any{cond("Ready", "False", "UpstreamUnavailable"), cond("Reconciling", "True", "UpstreamUnavailable")}}, "Progressing"},
		{"Ready=Unknown is Progressing", 1,
			map[string]any{"observedGeneration": int64(1), "conditions": []any{cond("Ready", "Unknown", "Progressing")}}, "Progressing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "switchboard.dev/v1alpha1", "kind": "SlideStock",
				"metadata": map[string]any{"name": "deck", "generation": tc.gen}, "spec": map[string]any{"url": "https://speakerdeck.com/a/b"}}}
			if tc.status != nil {
				u.Object["status"] = tc.status
			}
			if got, msg := argoHealth(t, script, u); got != tc.want {
				t.Fatalf("health %s (%s), want %s", got, msg, tc.want)
			}
		})
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "switchboard.dev/v1alpha1", "kind": "SlideStock",
		"metadata": map[string]any{"name": "deck", "generation": int64(4)}, "spec": map[string]any{"suspend": true},
		"status": map[string]any{"observedGeneration": int64(3), "conditions": []any{cond("Stalled", "True", "InvalidSpec")}}}}
	if got, _ := argoHealth(t, script, u); got != "Suspended" {
		t.Fatalf("a suspended object is %s, want Suspended whatever its status says", got)
	}
}

// TestGitOpsDocExamplesParse keeps the Flux examples of docs/gitops.md
// well-formed: every YAML block is one or more objects with an apiVersion
// and a kind, the HelmRelease's chart path is this repository's chart,
// and the users' Kustomization waits.
func TestGitOpsDocExamplesParse(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "gitops.md"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, m := range fencedYAML.FindAllSubmatch(doc, -1) {
		for _, part := range strings.Split(string(m[1]), "\n---\n") {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(part), &obj); err != nil {
				t.Fatalf("a YAML block of docs/gitops.md does not parse: %v\n%s", err, part)
			}
			if _, ok := obj["apiVersion"]; !ok {
				// A fragment shown for one field (healthChecks).
				if _, ok := obj["healthChecks"]; !ok {
					t.Fatalf("a YAML block has no apiVersion:\n%s", part)
				}
				continue
			}
			u := &unstructured.Unstructured{Object: obj}
			kinds[u.GetKind()]++
			switch u.GetKind() {
			case "HelmRelease":
				if chart, found, _ := unstructured.NestedString(obj, "spec", "chart", "spec", "chart"); found {
					if _, err := os.Stat(filepath.Join(root, chart, "Chart.yaml")); err != nil {
						t.Errorf("the HelmRelease's chart %s is not this repository's chart: %v", chart, err)
					}
				}
			case "Kustomization":
				if wait, _, _ := unstructured.NestedBool(obj, "spec", "wait"); !wait {
					t.Error("the Kustomization example does not set wait: true")
				}
				if timeout, _, _ := unstructured.NestedString(obj, "spec", "timeout"); timeout == "" {
					t.Error("the Kustomization example sets no timeout")
				}
			}
		}
	}
	for _, kind := range []string{"ConfigMap", "GitRepository", "OCIRepository", "HelmRelease", "Kustomization"} {
		if kinds[kind] == 0 {
			t.Errorf("docs/gitops.md shows no %s", kind)
		}
	}
}
