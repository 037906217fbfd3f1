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
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
)

// previousRepository is the repository hack/e2e/previous-release.sh names
// the previous release's images under, so that containerd holds them
// beside the current ones, which carry the same appVersion.
const previousRepository = "ghcr.io/switchboard-dev/switchboard-previous"

// previousCommit is the commit the previous release was built from.
func (e *e2e) previousCommit() string {
	b, err := os.ReadFile(filepath.Join(e.previous, "commit"))
	if err != nil {
		return "(unknown)"
	}
	return strings.TrimSpace(string(b))[:12]
}

// restricted creates the release's namespace enforcing Pod Security's
// restricted level, as a platform team hardening its cluster does, before
// anything is installed there. Two server-side dry runs show the
// enforcement has teeth: a pod running as root with the default
// capabilities and no seccomp profile (what an image's defaults give) is
// refused by PodSecurity, and the same pod made compliant is accepted.
// (Privileged pods are refused by this API server before Pod Security
// sees them: it runs without --allow-privileged.)
func (e *e2e) restricted(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: releaseNamespace, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
		"pod-security.kubernetes.io/warn":            "restricted",
		"pod-security.kubernetes.io/audit":           "restricted",
	}}}
	if err := e.c.Create(ctx, ns); err != nil {
		return err
	}
	bad := probePod(false)
	err := e.c.Create(ctx, bad, client.DryRunAll)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity") {
		return fmt.Errorf("a root pod in %s: got %w, want refused by PodSecurity", releaseNamespace, err)
	}
	fmt.Printf("    a root pod is refused: %s\n", firstLine(err.Error(), ""))
	if err := e.c.Create(ctx, probePod(true), client.DryRunAll); err != nil {
		return fmt.Errorf("the same pod made restricted-compliant was refused too, so the refusal proves nothing: %w", err)
	}
	fmt.Println("    the same pod made compliant is accepted (dry run)")
	return nil
}

// probePod is a pod for the restricted check: compliant, or root with
// the defaults.
func probePod(compliant bool) *corev1.Pod {
	sc := &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}
	if compliant {
		sc = &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false), RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
			Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: "pod-security-probe"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "probe", Image: "localhost/switchboard-e2e/pause:1", SecurityContext: sc,
		}}},
	}
}

// installPrevious installs the previous release (hack/e2e/previous-release.sh:
// the chart and images of an earlier commit of main) into the restricted
// namespace, as a person installed the last release.
func (e *e2e) installPrevious(ctx context.Context) error {
	return e.installChart(ctx, filepath.Join(e.previous, "chart"), "--set", "image.repository="+previousRepository)
}

// upgrade moves the previous release to the current signed chart (e.chart,
// from the loopback registry by digest) with helm upgrade while the load
// runs: the rollout completes with every pod on the current images, every
// object the walk made on the previous release is still there with the
// same spec, labels and annotations (no field pruned by the new CRDs),
// every object is Ready, and the load's accepted events landed exactly
// once.
func (e *e2e) upgrade(ctx context.Context) error {
	before, err := e.objects(ctx)
	if err != nil {
		return err
	}
	version, err := appVersion()
	if err != nil {
		return err
	}
	if err := e.underLoad(ctx, "helm upgrade from the previous release", func(ctx context.Context) error {
		out, err := e.helm(ctx, append([]string{"upgrade", releaseName, e.chart.ref, "--values", e.p.at("values.yaml"),
			"--wait", "--timeout", "5m"}, e.chart.args...)...)
		if err != nil {
			return err
		}
		fmt.Printf("    helm upgrade %s: %s\n", e.chart.ref, firstLine(out, "STATUS:"))
		return e.rolledOut(ctx, func(component string) string { return imageRepository + "/" + component + ":" + version })
	}); err != nil {
		return err
	}
	after, err := e.objects(ctx)
	if err != nil {
		return err
	}
	if err := sameObjects(before, after); err != nil {
		return err
	}
	fmt.Printf("    all %d objects of the previous release kept, each with the same spec, labels and annotations\n", len(before))
	return e.allReady(ctx)
}

// allReady waits, for 2 minutes, until every object is Ready but the
// walk's staged ones: a PaperSync of the load marks itself Ready a moment
// after its page is written.
func (e *e2e) allReady(ctx context.Context) error {
	return poll.Until(ctx, "every object Ready", pollEvery, 2*time.Minute, func() (bool, error) {
		err := e.walkDemo().CheckTable(ctx, nil)
		return err == nil, err
	})
}

// objects is every Switchboard object in the cluster, by kind/namespace/
// name, as the JSON of what a user wrote: spec, labels, annotations. A
// kind the cluster does not serve yet (the previous release's) is skipped.
func (e *e2e) objects(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	err := scenario.EachObject(ctx, e.c, true, func(kind string, o *unstructured.Unstructured) error {
		kept, err := json.Marshal(map[string]any{"spec": o.Object["spec"], "labels": o.GetLabels(), "annotations": userAnnotations(o.GetAnnotations())})
		out[kind+"/"+o.GetNamespace()+"/"+o.GetName()] = string(kept)
		return err
	})
	return out, err
}

// userAnnotations leaves out the annotation kubectl and the API server
// keep for themselves.
func userAnnotations(a map[string]string) map[string]string {
	delete(a, "kubectl.kubernetes.io/last-applied-configuration")
	return a
}

// sameObjects says what differs between two objects listings.
func sameObjects(before, after map[string]string) error {
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(before)) {
		switch got, ok := after[k]; {
		case !ok:
			diffs = append(diffs, k+" is gone")
		case got != before[k]:
			diffs = append(diffs, fmt.Sprintf("%s changed:\n      before %s\n      after  %s", k, before[k], got))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("the upgrade lost or changed objects:\n    %s", strings.Join(diffs, "\n    "))
	}
	return nil
}
