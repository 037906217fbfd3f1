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
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// A value set of the matrix, with what the rendered chart must show.
type valueSet struct {
	values map[string]any
	// replicas of the manager and the webhook the values ask for.
	managerReplicas, webhookReplicas int
	// tag every image must carry ("" = the chart's appVersion).
	tag string
}

var tlsIngress = map[string]any{
	"enabled": true, "className": "nginx", "host": "hooks.example.com",
	"tls": []any{map[string]any{"secretName": "hooks-tls"}},
}

// sinkPeers are cluster-local HTTP sinks the manager's NetworkPolicy lets
// it reach: the pods behind a Service in another namespace.
var sinkPeers = map[string]any{
	"to": []any{map[string]any{
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "booking"}},
		"podSelector":       map[string]any{"matchLabels": map[string]any{"app": "appointments"}},
	}},
	"ports": []any{8080, 8443},
}

// matrix is every value set linted, rendered, dry-run applied and checked.
var matrix = map[string]valueSet{
	"the defaults": {managerReplicas: 1, webhookReplicas: 2},
	"the Ingress on, with TLS": {
		values:          map[string]any{"webhook.ingress": tlsIngress},
		managerReplicas: 1, webhookReplicas: 2,
	},
	"the ServiceMonitor and PrometheusRule on": {
		values:          map[string]any{"serviceMonitor.enabled": true, "serviceMonitor.interval": "30s", "prometheusRule.enabled": true},
		managerReplicas: 1, webhookReplicas: 2,
	},
	"the ServiceMonitor off and the PrometheusRule off": {
		values:          map[string]any{"serviceMonitor.enabled": false, "prometheusRule.enabled": false},
		managerReplicas: 1, webhookReplicas: 2,
	},
	"the NetworkPolicy on, with an upstream on its own port and cluster-local sinks": {
		values: map[string]any{
			"networkPolicy.enabled":            true,
			"networkPolicy.sinks":              sinkPeers,
			"manager.sink":                     map[string]any{"denyPrivateNetworks": false},
			"networkPolicy.apiServer.cidrs":    []any{"10.0.0.1/32"},
			"networkPolicy.metricsFrom":        []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}}},
			"upstreams":                        map[string]any{"s3": "http://minio.storage:9000", "notion": "https://api.notion.com"},
			"webhook.s3PublicEndpoint":         "https://files.example.com",
			"webhook.discordClientSecret":      "switchboard-system/discord",
			"webhook.trustForwardedFor":        true,
			"manager.leaderElection.namespace": "",
		},
		managerReplicas: 1, webhookReplicas: 2,
	},
	"one replica of each": {
		values:          map[string]any{"manager.replicas": 1, "webhook.replicas": 1},
		managerReplicas: 1, webhookReplicas: 1,
	},
	"three replicas of each, spread over nodes": {
		values: map[string]any{
			"manager.replicas": 3, "webhook.replicas": 3,
			"webhook.topologySpreadConstraints": []any{map[string]any{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}},
			"manager.topologySpreadConstraints": []any{map[string]any{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}},
		},
		managerReplicas: 3, webhookReplicas: 3,
	},
	"the webhook Service a NodePort on a chosen port": {
		values:          map[string]any{"webhook.service": map[string]any{"type": "NodePort", "port": 80, "nodePort": 30080}},
		managerReplicas: 1, webhookReplicas: 2,
	},
	"the CRDs off": {
		values:          map[string]any{"crds.enabled": false},
		managerReplicas: 1, webhookReplicas: 2,
	},
	"everything on, at a pinned version": {
		values: map[string]any{
			"image.repository": "registry.example.com/switchboard", "image.tag": "1.2.3",
			"webhook.ingress": tlsIngress, "serviceMonitor.enabled": true, "prometheusRule.enabled": true,
			"networkPolicy.enabled": true, "manager.replicas": 2, "crds.keep": false,
			"log.level": "debug", "imagePullSecrets": []any{map[string]any{"name": "pull"}},
			"manager.sink": map[string]any{"denyPrivateNetworks": true}, "networkPolicy.sinks": map[string]any{"to": []any{}}, // no peers: no rule
			"manager.workers": map[string]any{"calendarwatch": 4, "sheetsync": 8},
			"manager.kubeAPI": map[string]any{"qps": 7.5, "burst": 20}, "webhook.kubeAPI": map[string]any{"qps": 50},
		},
		managerReplicas: 2, webhookReplicas: 2, tag: "1.2.3",
	},
}

func TestEveryValueSetLintsRendersAndIsAcceptedByTheAPIServer(t *testing.T) {
	_, chartDir := paths(t)
	appVersion := chartAppVersion(t, chartDir)
	for name, set := range matrix {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, err := helm(t, append([]string{"lint", "--strict", chartDir}, setArgs(set.values)...)...)
			if err != nil {
				t.Fatalf("helm lint --strict: %v\n%s", err, out)
			}
			ns, err := env.Namespace("chart")
			if err != nil {
				t.Fatal(err)
			}
			objs := render(t, ns, set.values)
			dryRunApply(t, objs)

			tag := set.tag
			if tag == "" {
				tag = appVersion
			}
			checkPods(t, objs, tag)
			checkServiceAccounts(t, objs)
			checkPDBs(t, objs, set.managerReplicas, set.webhookReplicas)
			checkCRDs(t, objs, set.values)
			checkRBAC(t, objs, nil)
			checkOptional(t, objs, set.values)
			checkKubeAPI(t, objs, set.values)
		})
	}
}

func chartAppVersion(t *testing.T, chartDir string) string {
	raw, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml")) //nolint:gosec // the chart under test
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil || c.AppVersion == "" {
		t.Fatalf("Chart.yaml has no appVersion (%v)", err)
	}
	return c.AppVersion
}

// checkPods: both Deployments, every container locked down, tagged
// images, probes on the probe port.
func checkPods(t *testing.T, objs []*unstructured.Unstructured, tag string) {
	deps := ofKind(objs, "Deployment")
	if len(deps) != 2 {
		t.Fatalf("%d Deployments rendered, want the manager and the webhook", len(deps))
	}
	for _, u := range deps {
		d := typed[appsv1.Deployment](t, u)
		pod := d.Spec.Template.Spec
		psc := pod.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
			t.Errorf("%s: pod securityContext.runAsNonRoot is not true", d.Name)
		}
		if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: pod seccompProfile is not RuntimeDefault", d.Name)
		}
		if pod.AutomountServiceAccountToken == nil || !*pod.AutomountServiceAccountToken {
			t.Errorf("%s: the pod does not mount its token, but it talks to the API server", d.Name)
		}
		for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
			sc := c.SecurityContext
			switch {
			case sc == nil:
				t.Errorf("%s/%s: no securityContext", d.Name, c.Name)
				continue
			case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
				t.Errorf("%s/%s: allowPrivilegeEscalation is not false", d.Name, c.Name)
			case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
				t.Errorf("%s/%s: readOnlyRootFilesystem is not true", d.Name, c.Name)
			case sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
				t.Errorf("%s/%s: capabilities are %+v, want drop [ALL] and nothing added", d.Name, c.Name, sc.Capabilities)
			case sc.Privileged != nil && *sc.Privileged:
				t.Errorf("%s/%s: privileged", d.Name, c.Name)
			}
			if strings.HasSuffix(c.Image, ":latest") || !strings.HasSuffix(c.Image, ":"+tag) {
				t.Errorf("%s/%s: image %s, want the tag %s", d.Name, c.Name, c.Image, tag)
			}
			for probe, want := range map[*corev1.Probe]string{c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz"} {
				if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want || probe.HTTPGet.Port.String() != "probes" {
					t.Errorf("%s/%s: no %s probe on the probes port", d.Name, c.Name, want)
				}
			}
			if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
				t.Errorf("%s/%s: no memory request and limit", d.Name, c.Name)
			}
		}
	}
}

// checkServiceAccounts: no token is mounted through the accounts; the pods
// that need one opt in.
func checkServiceAccounts(t *testing.T, objs []*unstructured.Unstructured) {
	sas := ofKind(objs, "ServiceAccount")
	if len(sas) != 2 {
		t.Errorf("%d ServiceAccounts rendered, want 2", len(sas))
	}
	for _, u := range sas {
		sa := typed[corev1.ServiceAccount](t, u)
		if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
			t.Errorf("ServiceAccount %s mounts its token into every pod using it", sa.Name)
		}
	}
}

// checkPDBs: a PodDisruptionBudget exactly for the components with more
// than one replica.
func checkPDBs(t *testing.T, objs []*unstructured.Unstructured, manager, webhook int) {
	got := map[string]bool{}
	for _, u := range ofKind(objs, "PodDisruptionBudget") {
		pdb := typed[policyv1.PodDisruptionBudget](t, u)
		got[pdb.Spec.Selector.MatchLabels["app.kubernetes.io/component"]] = true
	}
	for component, replicas := range map[string]int{"manager": manager, "webhook": webhook} {
		if got[component] != (replicas > 1) {
			t.Errorf("%s with %d replicas: PodDisruptionBudget rendered = %v, want %v", component, replicas, got[component], replicas > 1)
		}
	}
}

// checkCRDs: every CRD of config/crd/bases while crds.enabled, kept on
// uninstall while crds.keep.
func checkCRDs(t *testing.T, objs []*unstructured.Unstructured, values map[string]any) {
	root, _ := paths(t)
	bases, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(bases) == 0 {
		t.Fatalf("no CRDs in config/crd/bases (%v)", err)
	}
	crds := ofKind(objs, "CustomResourceDefinition")
	want := len(bases)
	if values["crds.enabled"] == false {
		want = 0
	}
	if len(crds) != want {
		t.Fatalf("%d CRDs rendered, want %d", len(crds), want)
	}
	keep := values["crds.keep"] != false
	specs := map[string]any{}
	for _, f := range bases {
		for _, u := range decode(t, readFile(t, f)) {
			specs[u.GetName()] = u.Object["spec"]
		}
	}
	for _, c := range crds {
		if !reflect.DeepEqual(c.Object["spec"], specs[c.GetName()]) {
			t.Errorf("CRD %s differs from config/crd/bases (run make chart)", c.GetName())
		}
		if got := c.GetAnnotations()["helm.sh/resource-policy"] == "keep"; got != keep {
			t.Errorf("CRD %s: helm.sh/resource-policy keep = %v, want %v", c.GetName(), got, keep)
		}
	}
}

// checkRBAC: the chart grants exactly what config/rbac grants: as
// ClusterRoles cluster-wide, as Roles in each watched namespace (and the
// manager's in the release namespace too) when watch is set, with no
// ClusterRole at all. Either way the webhook's only Secrets rights are
// the Role in the release (state) namespace.
func checkRBAC(t *testing.T, objs []*unstructured.Unstructured, watch []string) {
	root, _ := paths(t)
	rules := func(file, kind string) []rbacv1.PolicyRule {
		return rulesIn(t, filepath.Join(root, "config", "rbac", file), kind)
	}
	check := func(kind, name, namespace string, want []rbacv1.PolicyRule) {
		t.Helper()
		var found *unstructured.Unstructured
		for _, o := range ofKind(objs, kind) {
			if o.GetName() == name && o.GetNamespace() == namespace {
				found = o
			}
		}
		if found == nil {
			t.Errorf("no %s %s in %q", kind, name, namespace)
			return
		}
		if got := typed[rbacv1.ClusterRole](t, found).Rules; !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s/%s differs from config/rbac (run make chart):\n got %+v\nwant %+v", kind, namespace, name, got, want)
		}
	}
	release := named(t, objs, "Role", "sb-switchboard-leader-election").GetNamespace()
	if len(watch) == 0 {
		check("ClusterRole", "sb-switchboard-manager", "", rules("role.yaml", "ClusterRole"))
		check("ClusterRole", "sb-switchboard-webhook", "", rules("webhook_role.yaml", "ClusterRole"))
	} else {
		if n := len(ofKind(objs, "ClusterRole")) + len(ofKind(objs, "ClusterRoleBinding")); n != 0 {
			t.Errorf("a namespaced install renders %d ClusterRoles and bindings", n)
		}
		for _, ns := range append(append([]string{}, watch...), release) {
			check("Role", "sb-switchboard-manager", ns, rules("role.yaml", "ClusterRole"))
		}
		for _, ns := range watch {
			check("Role", "sb-switchboard-webhook", ns, rules("webhook_role.yaml", "ClusterRole"))
		}
	}
	check("Role", "sb-switchboard-webhook-secrets", release, rules("webhook_role.yaml", "Role"))
	check("Role", "sb-switchboard-leader-election", release, rules("leader_election_role.yaml", "Role"))
	// The webhook faces the internet: no rule anywhere else names Secrets.
	for _, kind := range []string{"ClusterRole", "Role"} {
		for _, o := range ofKind(objs, kind) {
			if !strings.Contains(o.GetName(), "webhook") || o.GetName() == "sb-switchboard-webhook-secrets" {
				continue
			}
			if o.GetName() == "sb-switchboard-webhook-links" {
				// The link namespace, when it is another: read only.
				for _, r := range typed[rbacv1.ClusterRole](t, o).Rules {
					if !reflect.DeepEqual(r.Verbs, []string{"get", "list", "watch"}) {
						t.Errorf("the webhook may %v in the link namespace", r.Verbs)
					}
				}
				continue
			}
			for _, r := range typed[rbacv1.ClusterRole](t, o).Rules {
				if slices.Contains(r.Resources, "secrets") || slices.Contains(r.Resources, "*") {
					t.Errorf("%s %s/%s grants the webhook %v on Secrets", kind, o.GetNamespace(), o.GetName(), r.Verbs)
				}
			}
		}
	}
}

func rulesIn(t *testing.T, file, kind string) []rbacv1.PolicyRule {
	raw, err := os.ReadFile(file) //nolint:gosec // a file of this repository
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range decode(t, string(raw)) {
		if u.GetKind() == kind {
			return typed[rbacv1.ClusterRole](t, u).Rules
		}
	}
	t.Fatalf("%s has no %s", file, kind)
	return nil
}

// checkResourceMetrics: the ServiceMonitor of the resources' metrics
// scrapes their path on the managers' metrics Services only (the webhook
// serves none: a scrape of it would fail).
func checkResourceMetrics(t *testing.T, objs []*unstructured.Unstructured) {
	var paths []string
	for _, u := range ofKind(objs, "ServiceMonitor") {
		sel, _, _ := unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
		eps, _, _ := unstructured.NestedSlice(u.Object, "spec", "endpoints")
		for _, ep := range eps {
			path, _ := ep.(map[string]any)["path"].(string)
			paths = append(paths, path)
			if path != "/metrics/resources" {
				continue
			}
			if sel["switchboard.dev/resource-metrics"] != "true" {
				t.Errorf("ServiceMonitor %s scrapes /metrics/resources from %v, not only the managers", u.GetName(), sel)
			}
			// The object's namespace label must not give way to the target's.
			if honor, _ := ep.(map[string]any)["honorLabels"].(bool); !honor {
				t.Errorf("ServiceMonitor %s scrapes /metrics/resources without honorLabels", u.GetName())
			}
		}
	}
	if slices.Sort(paths); !slices.Equal(paths, []string{"/metrics", "/metrics/resources"}) {
		t.Errorf("the ServiceMonitors scrape %v, want /metrics and /metrics/resources", paths)
	}
	for _, u := range ofKind(objs, "Service") {
		component := u.GetLabels()["app.kubernetes.io/component"]
		if u.GetLabels()["switchboard.dev/metrics"] != "true" {
			continue
		}
		if got, want := u.GetLabels()["switchboard.dev/resource-metrics"] == "true", component != "webhook"; got != want {
			t.Errorf("metrics Service %s (%s): resource-metrics label %v, want %v", u.GetName(), component, got, want)
		}
	}
}

// checkOptional: the Ingress, ServiceMonitor, PrometheusRule and
// NetworkPolicies appear exactly when asked for, and say what they should.
func checkOptional(t *testing.T, objs []*unstructured.Unstructured, values map[string]any) {
	count := func(kind string) int { return len(ofKind(objs, kind)) }
	ingress := values["webhook.ingress"] != nil
	if (count("Ingress") == 1) != ingress {
		t.Errorf("%d Ingresses rendered, ingress on = %v", count("Ingress"), ingress)
	}
	if ingress {
		ing := typed[networkingv1.Ingress](t, ofKind(objs, "Ingress")[0])
		if len(ing.Spec.TLS) != 1 || ing.Spec.TLS[0].SecretName != "hooks-tls" || !slices.Equal(ing.Spec.TLS[0].Hosts, []string{"hooks.example.com"}) {
			t.Errorf("Ingress TLS is %+v, want hooks-tls for hooks.example.com", ing.Spec.TLS)
		}
		for _, name := range []string{"sb-switchboard-manager", "sb-switchboard-webhook"} {
			if !slices.Contains(args(t, objs, name), "--public-url=https://hooks.example.com") {
				t.Errorf("%s: no --public-url from the Ingress host", name)
			}
		}
	}
	monitor := values["serviceMonitor.enabled"] == true
	if (count("ServiceMonitor") == 2) != monitor {
		t.Errorf("%d ServiceMonitors rendered, serviceMonitor.enabled = %v", count("ServiceMonitor"), monitor)
	}
	if monitor {
		checkResourceMetrics(t, objs)
	}
	wantServices := 1
	if monitor {
		wantServices = 3 // the webhook's, and one metrics Service per component
	}
	if count("Service") != wantServices {
		t.Errorf("%d Services rendered, want %d", count("Service"), wantServices)
	}
	// The webhook's node port only when asked for (kube-proxy's address of
	// choice otherwise).
	var wantNodePort int32
	if svc, ok := values["webhook.service"].(map[string]any); ok {
		wantNodePort = int32(svc["nodePort"].(int)) //nolint:gosec // a test's own small constant
	}
	for _, u := range ofKind(objs, "Service") {
		if svc := typed[corev1.Service](t, u); svc.Name == "sb-switchboard-webhook" && svc.Spec.Ports[0].NodePort != wantNodePort {
			t.Errorf("the webhook Service's nodePort is %d, want %d", svc.Spec.Ports[0].NodePort, wantNodePort)
		}
	}
	if (count("PrometheusRule") == 1) != (values["prometheusRule.enabled"] == true) {
		t.Errorf("%d PrometheusRules rendered, prometheusRule.enabled = %v", count("PrometheusRule"), values["prometheusRule.enabled"])
	}
	if values["networkPolicy.enabled"] == true {
		checkNetworkPolicies(t, objs, values)
	} else if count("NetworkPolicy") != 0 {
		t.Errorf("%d NetworkPolicies rendered, none asked for", count("NetworkPolicy"))
	}
	// The SSRF guard of HTTP sinks: private ranges denied only when asked.
	deny := false
	if s, ok := values["manager.sink"].(map[string]any); ok {
		deny = s["denyPrivateNetworks"] == true
	}
	if workers, ok := values["manager.workers"].(map[string]any); ok {
		for kind, n := range workers {
			if want := fmt.Sprintf("--%s-workers=%d", kind, n); !slices.Contains(args(t, objs, "sb-switchboard-manager"), want) {
				t.Errorf("the manager has no %s among %v", want, args(t, objs, "sb-switchboard-manager"))
			}
		}
	}
	if want := fmt.Sprintf("--sink-deny-private-networks=%t", deny); !slices.Contains(args(t, objs, "sb-switchboard-manager"), want) {
		t.Errorf("the manager has no %s among %v", want, args(t, objs, "sb-switchboard-manager"))
	}
	if ups, ok := values["upstreams"].(map[string]any); ok {
		for _, name := range []string{"sb-switchboard-manager", "sb-switchboard-webhook"} {
			for up, url := range ups {
				if !slices.Contains(args(t, objs, name), fmt.Sprintf("--upstream=%s=%s", up, url)) {
					t.Errorf("%s: no --upstream=%s=%s among %v", name, up, url, args(t, objs, name))
				}
			}
		}
	}
}

type port struct {
	proto corev1.Protocol
	num   int
}

func checkNetworkPolicies(t *testing.T, objs []*unstructured.Unstructured, values map[string]any) {
	np := map[string]*networkingv1.NetworkPolicy{}
	for _, u := range ofKind(objs, "NetworkPolicy") {
		p := typed[networkingv1.NetworkPolicy](t, u)
		np[p.Spec.PodSelector.MatchLabels["app.kubernetes.io/component"]] = p
	}
	if len(np) != 2 || np["manager"] == nil || np["webhook"] == nil {
		t.Fatalf("NetworkPolicies for %v, want the manager and the webhook", slices.Collect(func(yield func(string) bool) {
			for k := range np {
				if !yield(k) {
					return
				}
			}
		}))
	}
	ingressPorts := func(p *networkingv1.NetworkPolicy) (open, restricted []port) {
		for _, r := range p.Spec.Ingress {
			for _, pp := range r.Ports {
				if len(r.From) == 0 {
					open = append(open, port{*pp.Protocol, pp.Port.IntValue()})
				} else {
					restricted = append(restricted, port{*pp.Protocol, pp.Port.IntValue()})
				}
			}
		}
		return open, restricted
	}
	_, metricsFrom := values["networkPolicy.metricsFrom"]
	var sinkTo, sinkPorts []any
	if s, ok := values["networkPolicy.sinks"].(map[string]any); ok {
		sinkTo, _ = s["to"].([]any)
		sinkPorts, _ = s["ports"].([]any)
	}
	sinks := len(sinkTo) > 0
	for component, wantOpen := range map[string][]port{"webhook": {{corev1.ProtocolTCP, 9443}}, "manager": nil} {
		open, restricted := ingressPorts(np[component])
		if !slices.Equal(open, wantOpen) {
			t.Errorf("%s NetworkPolicy lets anyone reach %v, want %v", component, open, wantOpen)
		}
		var wantRestricted []port
		if metricsFrom {
			wantRestricted = []port{{corev1.ProtocolTCP, 8080}}
		}
		if !slices.Equal(restricted, wantRestricted) {
			t.Errorf("%s NetworkPolicy lets chosen peers reach %v, want %v", component, restricted, wantRestricted)
		}
		var egress []port
		for _, r := range np[component].Spec.Egress {
			for _, pp := range r.Ports {
				egress = append(egress, port{*pp.Protocol, pp.Port.IntValue()})
			}
		}
		want := []port{{corev1.ProtocolUDP, 53}, {corev1.ProtocolTCP, 53}, {corev1.ProtocolTCP, 443}, {corev1.ProtocolTCP, 6443}, {corev1.ProtocolTCP, 443}}
		if _, ok := values["upstreams"]; ok {
			want = append(want, port{corev1.ProtocolTCP, 9000}) // http://minio.storage:9000
		}
		if sinks && component == "manager" {
			for _, p := range sinkPorts {
				want = append(want, port{corev1.ProtocolTCP, p.(int)})
			}
		}
		if !slices.Equal(egress, want) {
			t.Errorf("%s NetworkPolicy egress ports %v, want DNS, the API server, the upstreams and (the manager) the sinks: %v", component, egress, want)
		}
		// The sinks' rule is the manager's only, to exactly the peers
		// given; without networkPolicy.sinks.to there is no such rule.
		wantRules := 3
		if sinks && component == "manager" {
			wantRules = 4
		}
		if len(np[component].Spec.Egress) != wantRules {
			t.Fatalf("%s NetworkPolicy has %d egress rules, want %d", component, len(np[component].Spec.Egress), wantRules)
		}
		if wantRules == 4 {
			to := np[component].Spec.Egress[3].To
			if len(to) != 1 || to[0].IPBlock != nil || to[0].NamespaceSelector == nil || to[0].PodSelector == nil ||
				to[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "booking" || to[0].PodSelector.MatchLabels["app"] != "appointments" {
				t.Errorf("manager NetworkPolicy sink rule goes to %+v, want the booking namespace's appointments pods", to)
			}
		}
	}
}

// checkKubeAPI: both binaries get their client's load controls, 0 (no
// client-side limit; twice the qps as burst) unless the values set them.
func checkKubeAPI(t *testing.T, objs []*unstructured.Unstructured, values map[string]any) {
	for path, deployment := range map[string]string{"manager.kubeAPI": "sb-switchboard-manager", "webhook.kubeAPI": "sb-switchboard-webhook"} {
		set, _ := values[path].(map[string]any)
		for key, flag := range map[string]string{"qps": "kube-api-qps", "burst": "kube-api-burst"} {
			v, ok := set[key]
			if !ok {
				v = 0
			}
			if want := fmt.Sprintf("--%s=%v", flag, v); !slices.Contains(args(t, objs, deployment), want) {
				t.Errorf("%s has no %s among %v", deployment, want, args(t, objs, deployment))
			}
		}
	}
}

// args are the container arguments of a Deployment.
func args(t *testing.T, objs []*unstructured.Unstructured, deployment string) []string {
	d := typed[appsv1.Deployment](t, named(t, objs, "Deployment", deployment))
	return d.Spec.Template.Spec.Containers[0].Args
}
