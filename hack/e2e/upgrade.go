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
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/switchboard-dev/switchboard/hack/internal/poll"
)

// upgradeTag is the tag the upgrade moves both images to: the same images
// tagged anew in containerd, so both pod templates change and both
// Deployments roll.
const upgradeTag = "e2e-upgrade"

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
		if err := poll.Until(ctx, component+" rolled out", pollEvery, 3*time.Minute, func() (bool, error) {
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
