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
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
)

// The platform operations (docs/e2e.md): each runs while the load posts
// Notion Automation events and Sheets sessions through the node port, and
// each ends with every accepted event landed exactly once.
const (
	// upgradeTag is the tag the upgrade moves both images to: the same
	// images tagged anew in containerd, so both pod templates change and
	// both Deployments roll.
	upgradeTag = "e2e-upgrade"
	// leaseName is the manager's leader election Lease (cmd/manager).
	leaseName = "manager.switchboard.dev"
	// leaseDuration is the chart's manager.leaderElection.leaseDuration.
	leaseDuration = 15 * time.Second
)

// helm runs the pinned helm against the node as its administrator.
func (e *e2e) helm(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(e.bin, "helm"), append(args, "--kubeconfig", e.p.kubeconfig("admin"), "--namespace", releaseNamespace)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// loadGen is the load every operation runs under, made once the walk has
// connected the integration and the connection it drives.
func (e *e2e) loadGen(ctx context.Context) (*load, error) {
	if e.load == nil {
		l, err := newLoad(ctx, e.c, e.sandboxURL)
		if err != nil {
			return nil, err
		}
		e.load = l
	}
	return e.load, nil
}

// underLoad runs op under the load and checks what was accepted landed.
func (e *e2e) underLoad(ctx context.Context, name string, op func(context.Context) error) error {
	l, err := e.loadGen(ctx)
	if err != nil {
		return err
	}
	ph, err := l.during(ctx, name, op)
	if err != nil {
		return err
	}
	return l.landed(ctx, e.c, ph)
}

// upgrade moves a running release to a new image tag with helm upgrade
// while the load runs: the rollout completes, every pod runs the new tag.
func (e *e2e) upgrade(ctx context.Context) error {
	version, err := appVersion()
	if err != nil {
		return err
	}
	for _, component := range []string{"manager", "webhook"} {
		ref := imageRepository + "/" + component
		if _, err := e.ctr("-n", "k8s.io", "images", "tag", ref+":"+version, ref+":"+upgradeTag); err != nil {
			return err
		}
	}
	return e.underLoad(ctx, "helm upgrade", func(ctx context.Context) error {
		out, err := e.helm(ctx, "upgrade", releaseName, filepath.Join("charts", "switchboard"), "--reuse-values",
			"--set", "image.tag="+upgradeTag, "--wait", "--timeout", "5m")
		if err != nil {
			return err
		}
		fmt.Printf("    helm upgrade: %s\n", firstLine(out, "STATUS:"))
		return e.rolledOut(ctx, ":"+upgradeTag)
	})
}

// rolledOut waits until both Deployments have every replica updated and
// available and no pod of an older template is left, and checks every pod
// runs an image ending in suffix.
func (e *e2e) rolledOut(ctx context.Context, suffix string) error {
	for _, component := range []string{"manager", "webhook"} {
		key := client.ObjectKey{Namespace: releaseNamespace, Name: releaseName + "-" + component}
		if err := waitFor(ctx, 3*time.Minute, component+" rolled out", func() (bool, error) {
			var d appsv1.Deployment
			if err := e.c.Get(ctx, key, &d); err != nil {
				return false, err
			}
			want := *d.Spec.Replicas
			st := d.Status
			if d.Status.ObservedGeneration != d.Generation || st.UpdatedReplicas != want || st.AvailableReplicas != want || st.Replicas != want {
				return false, fmt.Errorf("%d/%d updated, %d available, %d in all", st.UpdatedReplicas, want, st.AvailableReplicas, st.Replicas)
			}
			pods, err := e.pods(ctx, component)
			if err != nil {
				return false, err
			}
			if int32(len(pods)) != want { //nolint:gosec // a handful of pods
				return false, fmt.Errorf("%d pods, want %d", len(pods), want)
			}
			for _, p := range pods {
				if img := p.Spec.Containers[0].Image; !strings.HasSuffix(img, suffix) {
					return false, fmt.Errorf("pod %s runs %s", p.Name, img)
				}
			}
			return true, nil
		}); err != nil {
			return err
		}
	}
	fmt.Printf("    both Deployments rolled out: every pod runs *%s\n", suffix)
	return nil
}

// pods lists the release's pods of one component, terminating ones too.
func (e *e2e) pods(ctx context.Context, component string) ([]corev1.Pod, error) {
	var list corev1.PodList
	err := e.c.List(ctx, &list, client.InNamespace(releaseNamespace), client.MatchingLabels{
		"app.kubernetes.io/instance": releaseName, "app.kubernetes.io/component": component,
	})
	return list.Items, err
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil
		}
	}
	return false
}

// leaderLoss deletes the manager Pod that holds the lease, with two
// replicas: the standby takes the lease and reconciles a new object within
// the lease duration, counted from the deletion.
func (e *e2e) leaderLoss(ctx context.Context) error {
	return e.underLoad(ctx, "the manager leader's loss", func(ctx context.Context) error {
		key := client.ObjectKey{Namespace: releaseNamespace, Name: leaseName}
		var lease coordinationv1.Lease
		if err := e.c.Get(ctx, key, &lease); err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return errors.New("nobody holds the manager's lease")
		}
		holder := *lease.Spec.HolderIdentity
		// controller-runtime's identity is the pod's host name, "_", a uuid.
		leader, _, _ := strings.Cut(holder, "_")
		managers, err := e.pods(ctx, "manager")
		if err != nil {
			return err
		}
		ready := 0
		for i := range managers {
			if podReady(&managers[i]) {
				ready++
			}
		}
		if ready != 2 {
			return fmt.Errorf("%d manager pods ready, want the leader and a standby", ready)
		}
		start := time.Now()
		if err := e.c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: leader}}); err != nil {
			return fmt.Errorf("delete the leader %s: %w", leader, err)
		}
		var next string
		if err := waitFor(ctx, 2*leaseDuration, "a new lease holder", func() (bool, error) {
			if err := e.c.Get(ctx, key, &lease); err != nil {
				return false, err
			}
			if h := lease.Spec.HolderIdentity; h != nil && *h != "" && *h != holder {
				next = *h
				return true, nil
			}
			return false, errors.New("the lease is still the old leader's, or nobody's")
		}); err != nil {
			return err
		}
		tookOver := time.Since(start)
		// Created once the standby leads, so only it can reconcile it.
		if _, err := e.stock(ctx, scenario.Namespace, "after-leader-loss", 2*leaseDuration); err != nil {
			return err
		}
		took := time.Since(start)
		fmt.Printf("    deleted the leader %s; %s took the lease after %.1fs and reconciled a new SlideStock %.1fs after the deletion (lease duration %s)\n",
			leader, strings.SplitN(next, "_", 2)[0], tookOver.Seconds(), took.Seconds(), leaseDuration)
		if took > leaseDuration {
			return fmt.Errorf("the standby reconciled %.1fs after the leader's deletion, more than the lease duration %s", took.Seconds(), leaseDuration)
		}
		return nil
	})
}

// webhookLoss evicts a webhook Pod, as a node drain does, while the load
// runs: the Service keeps answering from the other one, the
// PodDisruptionBudget refuses a second eviction until the replacement is
// ready, and the Deployment is whole again.
func (e *e2e) webhookLoss(ctx context.Context) error {
	return e.underLoad(ctx, "a webhook Pod's eviction", func(ctx context.Context) error {
		pods, err := e.pods(ctx, "webhook")
		if err != nil {
			return err
		}
		if len(pods) != 2 || !podReady(&pods[0]) || !podReady(&pods[1]) {
			return fmt.Errorf("%d webhook pods, want 2 ready", len(pods))
		}
		evict := func(p *corev1.Pod) error {
			return e.c.SubResource("eviction").Create(ctx, p, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}})
		}
		if err := evict(&pods[0]); err != nil {
			return fmt.Errorf("evict %s: %w", pods[0].Name, err)
		}
		second := evict(&pods[1])
		replacementReady := func() (bool, error) {
			now, err := e.pods(ctx, "webhook")
			if err != nil {
				return false, err
			}
			for i := range now {
				if now[i].Name != pods[0].Name && now[i].Name != pods[1].Name && podReady(&now[i]) {
					return true, nil
				}
			}
			return false, nil
		}
		switch {
		case apierrors.IsTooManyRequests(second):
			fmt.Printf("    evicted %s; the PodDisruptionBudget refused %s meanwhile (429)\n", pods[0].Name, pods[1].Name)
		case second == nil:
			// Allowed only if the replacement was ready already.
			if ok, err := replacementReady(); err != nil || !ok {
				return fmt.Errorf("the PodDisruptionBudget let both webhook pods be evicted before a replacement was ready (%w)", err)
			}
			fmt.Printf("    evicted %s, then %s (its replacement was ready first)\n", pods[0].Name, pods[1].Name)
		default:
			return fmt.Errorf("evict %s: %w", pods[1].Name, second)
		}
		return waitFor(ctx, 3*time.Minute, "the webhook Deployment whole again", func() (bool, error) {
			now, err := e.pods(ctx, "webhook")
			if err != nil {
				return false, err
			}
			ready := 0
			for i := range now {
				if now[i].Name == pods[0].Name {
					return false, fmt.Errorf("%s is still terminating", pods[0].Name)
				}
				if podReady(&now[i]) {
					ready++
				}
			}
			return ready == 2, fmt.Errorf("%d webhook pods ready", ready)
		})
	})
}

// reinstall uninstalls the release and installs it again: the CRDs and
// every user's object and Secret stay through the uninstall, and the new
// release picks them up (all Ready again, new events land).
func (e *e2e) reinstall(ctx context.Context) error {
	before, err := e.userObjects(ctx)
	if err != nil {
		return err
	}
	out, err := e.helm(ctx, "uninstall", releaseName, "--wait", "--timeout", "3m")
	if err != nil {
		return err
	}
	fmt.Printf("    %s", out)
	if err := waitFor(ctx, 2*time.Minute, "the release's pods gone", func() (bool, error) {
		var pods corev1.PodList
		if err := e.c.List(ctx, &pods, client.InNamespace(releaseNamespace)); err != nil {
			return false, err
		}
		return len(pods.Items) == 0, fmt.Errorf("%d pods left", len(pods.Items))
	}); err != nil {
		return err
	}
	crds := &unstructured.UnstructuredList{}
	crds.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinitionList"})
	if err := e.c.List(ctx, crds); err != nil {
		return err
	}
	kept := 0
	for _, c := range crds.Items {
		if g, _, _ := unstructured.NestedString(c.Object, "spec", "group"); g == v1alpha1.GroupVersion.Group {
			kept++
		}
	}
	after, err := e.userObjects(ctx)
	if err != nil {
		return err
	}
	for k, uid := range before {
		if after[k] != uid {
			return fmt.Errorf("%s did not survive the uninstall (uid %s, now %q)", k, uid, after[k])
		}
	}
	if kept != len(scenario.Kinds) {
		return fmt.Errorf("%d Switchboard CRDs after the uninstall, want %d", kept, len(scenario.Kinds))
	}
	fmt.Printf("    after the uninstall: %d CRDs and all %d of the users' objects and Secrets in %s, with the same uids\n", kept, len(before), scenario.Namespace)

	var watch v1alpha1.CalendarWatch
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: scenario.Namespace, Name: scenario.CalendarWatchName}, &watch); err != nil {
		return err
	}
	if watch.Status.Channel == nil {
		return errors.New("the walk's CalendarWatch has no channel")
	}
	oldChannel := watch.Status.Channel.ID

	if err := e.install(ctx); err != nil {
		return err
	}
	// The objects' statuses outlived the release: show the new one at
	// work. The Calendar channel, which the sandbox grants for seconds,
	// is renewed by the new manager; a new SlideStock is reconciled.
	if err := waitFor(ctx, 2*time.Minute, "the CalendarWatch's channel renewed by the new release", func() (bool, error) {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(&watch), &watch); err != nil {
			return false, err
		}
		ch := watch.Status.Channel
		return ch != nil && ch.ID != oldChannel && meta.IsStatusConditionTrue(watch.Status.Conditions, v1alpha1.ReadyCondition), errors.New("not yet")
	}); err != nil {
		return err
	}
	if _, err := e.stock(ctx, scenario.Namespace, "after-reinstall", time.Minute); err != nil {
		return err
	}
	if err := waitFor(ctx, 2*time.Minute, "every object Ready", func() (bool, error) {
		err := (&scenario.Demo{C: e.c}).CheckTable(ctx, nil)
		return err == nil, err
	}); err != nil {
		return err
	}
	fmt.Printf("    the new release renewed the CalendarWatch's channel (%s → %s) and stocked a new SlideStock\n", oldChannel, watch.Status.Channel.ID)
	// As a load balancer does, send traffic once the node port routes to
	// the new pods: kube-proxy programs the Service a moment after its
	// endpoints are ready.
	if err := e.waitRouted(ctx); err != nil {
		return err
	}
	return e.underLoad(ctx, "the new release", func(context.Context) error { return nil })
}

// waitRouted waits until the node port answers GET / on five new
// connections in a row.
func (e *e2e) waitRouted(ctx context.Context) error {
	fresh := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	ok := 0
	return waitFor(ctx, time.Minute, "the node port routing to the webhook", func() (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, publicURL+"/", nil)
		resp, err := fresh.Do(req)
		if err != nil {
			ok = 0
			return false, err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			ok = 0
			return false, fmt.Errorf("GET / answered %d", resp.StatusCode)
		}
		ok++
		return ok == 5, nil
	})
}

// userObjects are the walk's namespace's Switchboard objects and Secrets,
// by kind/name, with their uids.
func (e *e2e) userObjects(ctx context.Context) (map[string]types.UID, error) {
	out := map[string]types.UID{}
	for _, kind := range append([]string{"Secret"}, scenario.Kinds...) {
		list := &unstructured.UnstructuredList{}
		if kind == "Secret" {
			list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		} else {
			list.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(kind + "List"))
		}
		if err := e.c.List(ctx, list, client.InNamespace(scenario.Namespace)); err != nil {
			return nil, err
		}
		for _, o := range list.Items {
			out[kind+"/"+o.GetName()] = o.GetUID()
		}
	}
	return out, nil
}

// imageRepository is the chart's image.repository (make images names the
// images after it).
const imageRepository = "ghcr.io/switchboard-dev/switchboard"

// appVersion is the chart's appVersion: the tag make images gives.
func appVersion() (string, error) {
	b, err := os.ReadFile(filepath.Join("charts", "switchboard", "Chart.yaml"))
	if err != nil {
		return "", err
	}
	var c struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		return "", fmt.Errorf("charts/switchboard/Chart.yaml: %w", err)
	}
	if c.AppVersion == "" {
		return "", errors.New("charts/switchboard/Chart.yaml has no appVersion")
	}
	return c.AppVersion, nil
}
