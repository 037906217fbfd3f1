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
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/hack/internal/poll"
)

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
		if err := e.evict(ctx, &pods[0]); err != nil {
			return fmt.Errorf("evict %s: %w", pods[0].Name, err)
		}
		if err := e.evictSecond(ctx, pods[0].Name, &pods[1]); err != nil {
			return err
		}
		return e.webhookWhole(ctx, pods[0].Name)
	})
}

// evict asks for a pod's eviction, as a node drain does.
func (e *e2e) evict(ctx context.Context, p *corev1.Pod) error {
	return e.c.SubResource("eviction").Create(ctx, p, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}})
}

// evictSecond asks for the other webhook pod's eviction right after the
// first's: the PodDisruptionBudget must refuse it, unless the first one's
// replacement is ready already.
func (e *e2e) evictSecond(ctx context.Context, first string, second *corev1.Pod) error {
	err := e.evict(ctx, second)
	switch {
	case apierrors.IsTooManyRequests(err):
		fmt.Printf("    evicted %s; the PodDisruptionBudget refused %s meanwhile (429)\n", first, second.Name)
	case err == nil:
		// Allowed only if the replacement was ready already.
		if ok, err := e.replacementReady(ctx, first, second.Name); err != nil || !ok {
			return fmt.Errorf("the PodDisruptionBudget let both webhook pods be evicted before a replacement was ready (%w)", err)
		}
		fmt.Printf("    evicted %s, then %s (its replacement was ready first)\n", first, second.Name)
	default:
		return fmt.Errorf("evict %s: %w", second.Name, err)
	}
	return nil
}

// replacementReady reports whether a webhook pod other than the two
// evicted is ready.
func (e *e2e) replacementReady(ctx context.Context, evicted ...string) (bool, error) {
	now, err := e.pods(ctx, "webhook")
	if err != nil {
		return false, err
	}
	for i := range now {
		if !slices.Contains(evicted, now[i].Name) && podReady(&now[i]) {
			return true, nil
		}
	}
	return false, nil
}

// webhookWhole waits until the evicted pod is gone and two webhook pods
// are ready.
func (e *e2e) webhookWhole(ctx context.Context, evicted string) error {
	return poll.Until(ctx, "the webhook Deployment whole again", pollEvery, 3*time.Minute, func() (bool, error) {
		now, err := e.pods(ctx, "webhook")
		if err != nil {
			return false, err
		}
		ready := 0
		for i := range now {
			if now[i].Name == evicted {
				return false, fmt.Errorf("%s is still terminating", evicted)
			}
			if podReady(&now[i]) {
				ready++
			}
		}
		return ready == 2, fmt.Errorf("%d webhook pods ready", ready)
	})
}
