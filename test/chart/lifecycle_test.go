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
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// TestInstallUpgradeUninstallKeepsTheCRDsAndUsersResources runs the real
// helm install, upgrade and uninstall against the API server (no kubelet:
// the pods never start, the objects are real). The CRDs testenv installed
// are adopted first, as docs/install.md tells people moving from
// `kubectl apply -k config/default` to do.
func TestInstallUpgradeUninstallKeepsTheCRDsAndUsersResources(t *testing.T) {
	ctx := context.Background()
	_, chartDir := paths(t)
	ns, err := env.Namespace("release")
	if err != nil {
		t.Fatal(err)
	}
	kc := testenv.Kubeconfig(t, env.Config)
	helmIn := func(args ...string) {
		t.Helper()
		out, err := helm(t, append(args, "--kubeconfig", kc, "--namespace", ns)...)
		if err != nil {
			t.Fatalf("helm %v: %v\n%s", args, err, out)
		}
	}
	crd := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apiextensions.k8s.io/v1")
		u.SetKind("CustomResourceDefinition")
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			t.Fatalf("CRD %s: %v", name, err)
		}
		return u
	}

	// Adopt the CRDs into the release.
	for _, name := range env.CRDNames() {
		u := crd(name)
		patch := client.MergeFrom(u.DeepCopy())
		labels, annotations := u.GetLabels(), u.GetAnnotations()
		if labels == nil {
			labels = map[string]string{}
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		labels["app.kubernetes.io/managed-by"] = "Helm"
		annotations["meta.helm.sh/release-name"], annotations["meta.helm.sh/release-namespace"] = "sb", ns
		u.SetLabels(labels)
		u.SetAnnotations(annotations)
		if err := env.Client.Patch(ctx, u, patch); err != nil {
			t.Fatalf("adopt CRD %s: %v", name, err)
		}
	}

	helmIn("install", "sb", chartDir)
	webhook := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sb-switchboard-webhook"}, webhook); err != nil {
		t.Fatalf("helm install created no webhook Deployment: %v", err)
	}
	if *webhook.Spec.Replicas != 2 {
		t.Errorf("webhook replicas %d, want the default 2", *webhook.Spec.Replicas)
	}
	const stocks = "slidestocks.switchboard.dev"
	if crd(stocks).GetAnnotations()["helm.sh/resource-policy"] != "keep" {
		t.Fatalf("installed CRD %s is not kept on uninstall", stocks)
	}

	// A user's resource, which uninstall must not take away.
	stock := &unstructured.Unstructured{}
	stock.SetAPIVersion("switchboard.dev/v1alpha1")
	stock.SetKind("SlideStock")
	stock.SetNamespace(ns)
	stock.SetName("atom")
	stock.Object["spec"] = map[string]any{"url": "https://speakerdeck.com/jnunemaker/atom"}
	if err := env.Client.Create(ctx, stock); err != nil {
		t.Fatal(err)
	}

	// helm upgrade changes the CRDs too (they are templates, not crds/).
	helmIn(append([]string{"upgrade", "sb", chartDir}, setArgs(upgradeValues)...)...)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(webhook), webhook); err != nil {
		t.Fatal(err)
	}
	if *webhook.Spec.Replicas != 3 {
		t.Errorf("after helm upgrade webhook replicas %d, want 3", *webhook.Spec.Replicas)
	}
	if _, ok := crd(stocks).GetAnnotations()["helm.sh/resource-policy"]; ok {
		t.Errorf("helm upgrade with crds.keep=false left the keep annotation on %s: the upgrade did not update the CRD", stocks)
	}
	helmIn("upgrade", "sb", chartDir, "--reuse-values", "--set", "crds.keep=true")
	if crd(stocks).GetAnnotations()["helm.sh/resource-policy"] != "keep" {
		t.Fatalf("helm upgrade with crds.keep=true did not put the keep annotation back on %s", stocks)
	}

	helmIn("uninstall", "sb")
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(webhook), &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("after helm uninstall the webhook Deployment: %v, want NotFound", err)
	}
	for _, name := range env.CRDNames() {
		if u := crd(name); u.GetDeletionTimestamp() != nil {
			t.Errorf("helm uninstall is deleting CRD %s", name)
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(stock), stock); err != nil {
		t.Errorf("after helm uninstall the user's SlideStock: %v, want it kept", err)
	}
}

// TestHelmTemplateAppliesWithKubectlDryRun is the acceptance
// command as a user types it: helm template piped to
// `kubectl apply --dry-run=server`.
func TestHelmTemplateAppliesWithKubectlDryRun(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Fatal("kubectl not found: the README's quick start needs it")
	}
	_, chartDir := paths(t)
	ns, err := env.Namespace("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := helm(t, "template", "switchboard", chartDir, "--namespace", ns)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, manifests)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", testenv.Kubeconfig(t, env.Config), "apply", "--dry-run=server", "-f", "-")
	cmd.Stdin = strings.NewReader(manifests)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply --dry-run=server: %v\n%s", err, out)
	}
	if got := strings.Count(string(out), "(server dry run)"); got != len(decode(t, manifests)) {
		t.Errorf("kubectl applied %d objects, helm rendered %d:\n%s", got, len(decode(t, manifests)), out)
	}
}
