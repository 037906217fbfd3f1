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
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

func TestWrongValuesAreRefusedWithAMessageNamingThem(t *testing.T) {
	_, chartDir := paths(t)
	for name, c := range map[string]struct {
		values map[string]any
		want   []string
		// notLint: the chart's own check (a template fail), which helm
		// install and template refuse but helm lint reports as [INFO].
		notLint bool
	}{
		"a replica count that is not a number": {
			values: map[string]any{"webhook.replicas": "two"},
			want:   []string{"/webhook/replicas", "want integer"},
		},
		"an upstream the binaries do not know": {
			values: map[string]any{"upstreams": map[string]any{"notoin": "https://api.notion.com"}},
			want:   []string{"invalid propertyName 'notoin'", "'notion'"},
		},
		"a log level zap does not take": {
			values: map[string]any{"log.level": "verbose"},
			want:   []string{"/log/level", "does not match pattern"},
		},
		"a duration Go cannot parse": {
			values: map[string]any{"manager.leaderElection.leaseDuration": "15 seconds"},
			want:   []string{"/manager/leaderElection/leaseDuration", "does not match pattern"},
		},
		"a misspelt key": {
			values: map[string]any{"webhook.replica": 2},
			want:   []string{"additional properties 'replica' not allowed"},
		},
		"a sink policy that is not a boolean": {
			values: map[string]any{"manager.sink": map[string]any{"denyPrivateNetworks": "yes"}},
			want:   []string{"/manager/sink/denyPrivateNetworks", "want boolean"},
		},
		"a sink port that is not a port": {
			values: map[string]any{"networkPolicy.sinks": map[string]any{"ports": []any{"http"}}},
			want:   []string{"/networkPolicy/sinks/ports/0", "want integer"},
		},
		"a shard key that is not a label value": {
			values: map[string]any{"manager.shards": []any{"Shard_1"}},
			want:   []string{"/manager/shards/0", "does not match pattern"},
		},
		"a negative API server rate": {
			values: map[string]any{"manager.kubeAPI": map[string]any{"qps": -5}},
			want:   []string{"/manager/kubeAPI/qps", "minimum"},
		},
		"an API server burst without a rate": {
			values: map[string]any{"webhook.kubeAPI": map[string]any{"burst": 30}},
			want:   []string{"/webhook/kubeAPI/burst", "value must be 0"},
		},
		"the image tag latest": {
			values: map[string]any{"image.tag": "latest"},
			want:   []string{"/image/tag"},
		},
		"an Ingress without TLS": {
			values:  map[string]any{"webhook.ingress": map[string]any{"enabled": true, "host": "hooks.example.com"}},
			want:    []string{"TLS is required", "Google sends Calendar push notifications to HTTPS addresses only"},
			notLint: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// helm template runs the same schema check as helm install
			// and helm upgrade.
			cmds := [][]string{{"template", "sb", chartDir}}
			if !c.notLint {
				cmds = append(cmds, []string{"lint", "--strict", chartDir})
			}
			for _, cmd := range cmds {
				out, err := helm(t, append(cmd, setArgs(c.values)...)...)
				if err == nil {
					t.Fatalf("helm %s accepted %v:\n%s", cmd[0], c.values, out)
				}
				for _, w := range c.want {
					if !strings.Contains(out, w) {
						t.Errorf("helm %s refused %v without saying %q:\n%s", cmd[0], c.values, w, out)
					}
				}
			}
		})
	}
}

// flagRE finds a flag's name in an argument.
var flagRE = regexp.MustCompile(`^--([a-z0-9-]+)`)

func flagNames(args []string) []string {
	var names []string
	for _, a := range args {
		if m := flagRE.FindStringSubmatch(a); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

func TestTheChartPassesEveryFlagTheKustomizeInstallPasses(t *testing.T) {
	root, _ := paths(t)
	objs := render(t, "switchboard-system", publicURLValues)
	for _, c := range []struct{ file, deployment string }{
		{"config/manager/manager.yaml", "sb-switchboard-manager"},
		{"config/webhook/webhook.yaml", "sb-switchboard-webhook"},
	} {
		var kustomize *appsv1.Deployment
		for _, u := range decode(t, readFile(t, root+"/"+c.file)) {
			if u.GetKind() == "Deployment" {
				kustomize = typed[appsv1.Deployment](t, u)
			}
		}
		if kustomize == nil {
			t.Fatalf("%s has no Deployment", c.file)
		}
		chart := typed[appsv1.Deployment](t, named(t, objs, "Deployment", c.deployment))
		got := flagNames(chart.Spec.Template.Spec.Containers[0].Args)
		for _, f := range flagNames(kustomize.Spec.Template.Spec.Containers[0].Args) {
			if !slices.Contains(got, f) {
				t.Errorf("%s passes --%s; the chart's %s does not (it passes %v)", c.file, f, c.deployment, got)
			}
		}
		kc, cc := kustomize.Spec.Template.Spec.Containers[0], chart.Spec.Template.Spec.Containers[0]
		for i, p := range kc.Ports {
			if i >= len(cc.Ports) || cc.Ports[i].Name != p.Name || cc.Ports[i].ContainerPort != p.ContainerPort {
				t.Errorf("%s: the chart's ports %v differ from %s's %v", c.deployment, cc.Ports, c.file, kc.Ports)
				break
			}
		}
		if len(cc.Env) == 0 || cc.Env[0].Name != "POD_NAMESPACE" || cc.Env[0].ValueFrom == nil {
			t.Errorf("%s: no POD_NAMESPACE from the downward API", c.deployment)
		}
	}
	// The manager is leader-elected at every replica count.
	if !slices.Contains(args(t, objs, "sb-switchboard-manager"), "--leader-elect") {
		t.Error("the manager runs without --leader-elect")
	}
}
