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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/switchboard-dev/switchboard/hack/internal/poll"
)

// rolledOut waits until both Deployments have every replica updated and
// available and no pod of an older template is left, and checks every pod
// runs the image want gives for its component.
func (e *e2e) rolledOut(ctx context.Context, want func(component string) string) error {
	for _, component := range []string{"manager", "webhook"} {
		key := client.ObjectKey{Namespace: releaseNamespace, Name: releaseName + "-" + component}
		if err := poll.Until(ctx, component+" rolled out", pollEvery, 3*time.Minute, func() (bool, error) {
			var d appsv1.Deployment
			if err := e.c.Get(ctx, key, &d); err != nil {
				return false, err
			}
			replicas := *d.Spec.Replicas
			st := d.Status
			if d.Status.ObservedGeneration != d.Generation || st.UpdatedReplicas != replicas || st.AvailableReplicas != replicas || st.Replicas != replicas {
				return false, fmt.Errorf("%d/%d updated, %d available, %d in all", st.UpdatedReplicas, replicas, st.AvailableReplicas, st.Replicas)
			}
			pods, err := e.pods(ctx, component)
			if err != nil {
				return false, err
			}
			if int32(len(pods)) != replicas { //nolint:gosec // a handful of pods
				return false, fmt.Errorf("%d pods, want %d", len(pods), replicas)
			}
			for _, p := range pods {
				if img := p.Spec.Containers[0].Image; img != want(component) {
					return false, fmt.Errorf("pod %s runs %s, want %s", p.Name, img, want(component))
				}
			}
			return true, nil
		}); err != nil {
			return err
		}
	}
	fmt.Printf("    both Deployments rolled out: every pod runs %s and %s\n", want("manager"), want("webhook"))
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
