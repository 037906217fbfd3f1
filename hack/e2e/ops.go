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

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The platform operations (docs/e2e.md), a file each: upgrade.go,
// leaderloss.go, webhookloss.go and reinstall.go. Each runs while the load
// (load.go) posts Notion Automation events and Sheets sessions through the
// node port, and each ends with every accepted event landed exactly once.

// loadGen is the load every operation runs under, made once the walk has
// connected the integration and the connection it drives.
func (e *e2e) loadGen(ctx context.Context) (*load, error) {
	if e.load == nil {
		l, err := newLoad(ctx, e.c, e.sandboxURL, e.walkDemo().Integration())
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
