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
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// restricted is the level a namespace labelled
// pod-security.kubernetes.io/enforce=restricted enforces, at the newest
// version of the checks this library knows.
var restricted = psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}

// podTemplatePaths says where each pod-bearing kind keeps its pod template.
var podTemplatePaths = map[string][]string{
	"Deployment":            {"spec", "template"},
	"StatefulSet":           {"spec", "template"},
	"DaemonSet":             {"spec", "template"},
	"ReplicaSet":            {"spec", "template"},
	"ReplicationController": {"spec", "template"},
	"Job":                   {"spec", "template"},
	"CronJob":               {"spec", "jobTemplate", "spec", "template"},
	"Pod":                   nil, // the object itself
}

// podTemplate is the pod of one rendered object.
type podTemplate struct {
	owner string // kind/name of the object
	spec  corev1.PodTemplateSpec
}

// podTemplates returns the pod of every pod-bearing object rendered. An
// object of another kind that holds containers is an error: the check
// would otherwise pass it unseen.
func podTemplates(t testing.TB, objs []*unstructured.Unstructured) []podTemplate {
	t.Helper()
	var pods []podTemplate
	for _, o := range objs {
		owner := o.GetKind() + "/" + o.GetName()
		path, ok := podTemplatePaths[o.GetKind()]
		if !ok {
			if holdsContainers(o.Object) {
				t.Errorf("%s holds containers, but the Pod Security check knows no pod template in a %s", owner, o.GetKind())
			}
			continue
		}
		tpl := map[string]any{"metadata": o.Object["metadata"], "spec": o.Object["spec"]}
		if path != nil {
			var found bool
			var err error
			if tpl, found, err = unstructured.NestedMap(o.Object, path...); !found || err != nil {
				t.Fatalf("%s: no pod template at %s: %v", owner, strings.Join(path, "."), err)
			}
		}
		p := podTemplate{owner: owner}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(tpl, &p.spec, true); err != nil {
			t.Fatalf("%s: %v", owner, err)
		}
		pods = append(pods, p)
	}
	return pods
}

func holdsContainers(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if _, isList := sub.([]any); isList && (k == "containers" || k == "initContainers") {
				return true
			}
			if holdsContainers(sub) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(v, holdsContainers)
	}
	return false
}

// forbidden evaluates a pod at restricted and returns why it is refused
// (none when admitted), each reason with its detail.
func forbidden(t testing.TB, p podTemplate) []string {
	t.Helper()
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	results := evaluator.EvaluatePod(restricted, &p.spec.ObjectMeta, &p.spec.Spec)
	if len(results) == 0 {
		t.Fatal("the evaluator ran no check at restricted")
	}
	agg := policy.AggregateCheckResults(results)
	var why []string
	for i, reason := range agg.ForbiddenReasons {
		why = append(why, fmt.Sprintf("%s (%s)", reason, agg.ForbiddenDetails[i]))
	}
	return why
}

// managerAndWebhook fails unless both binaries' pods were found.
func managerAndWebhook(t testing.TB, pods []podTemplate) {
	t.Helper()
	var owners []string
	for _, p := range pods {
		owners = append(owners, p.owner)
	}
	for _, want := range []string{"-manager", "-webhook"} {
		if !slices.ContainsFunc(owners, func(o string) bool { return strings.HasSuffix(o, want) }) {
			t.Fatalf("no pod template of a Deployment named *%s among %v", want, owners)
		}
	}
}

// Every pod the chart renders, from every value set the chart tests use,
// is admitted by the Pod Security Standard `restricted` as the
// pod-security-admission library (the code of the API server's admission
// plugin) evaluates it.
func TestEveryRenderedPodPassesTheRestrictedPodSecurityStandard(t *testing.T) {
	sets := everyValueSet()
	for _, name := range slices.Sorted(maps.Keys(sets)) {
		values := sets[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pods := podTemplates(t, render(t, "switchboard-system", values))
			managerAndWebhook(t, pods)
			for _, p := range pods {
				if why := forbidden(t, p); len(why) > 0 {
					t.Errorf("%s is refused at restricted: %s", p.owner, strings.Join(why, "; "))
				}
			}
		})
	}
}

// The check has teeth: values that loosen a security context make every
// pod fail, each for the rule it breaks.
func TestALoosenedSecurityContextIsRefusedAtRestricted(t *testing.T) {
	for name, c := range map[string]struct {
		values map[string]any
		reason string
	}{
		"a privileged container": {
			values: map[string]any{"containerSecurityContext.privileged": true},
			reason: "privileged",
		},
		"privilege escalation allowed": {
			values: map[string]any{"containerSecurityContext.allowPrivilegeEscalation": true},
			reason: "allowPrivilegeEscalation != false",
		},
		"runAsNonRoot false on the pod": {
			values: map[string]any{"podSecurityContext.runAsNonRoot": false},
			reason: "runAsNonRoot != true",
		},
		"no seccomp profile": {
			values: map[string]any{"podSecurityContext.seccompProfile": nil},
			reason: "seccompProfile",
		},
		"the capabilities kept": {
			values: map[string]any{"containerSecurityContext.capabilities": nil},
			reason: "unrestricted capabilities",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pods := podTemplates(t, render(t, "switchboard-system", c.values))
			managerAndWebhook(t, pods)
			for _, p := range pods {
				why := forbidden(t, p)
				if !slices.ContainsFunc(why, func(w string) bool { return strings.HasPrefix(w, c.reason+" (") }) {
					t.Errorf("%s: refused for %v, want %q among the reasons", p.owner, why, c.reason)
				}
			}
		})
	}
}
