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
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
)

const (
	// leaseName is the manager's leader election Lease (cmd/manager).
	leaseName = "manager.switchboard.dev"
	// leaseDuration is the chart's manager.leaderElection.leaseDuration.
	leaseDuration = 15 * time.Second
)

// leaderLoss deletes the manager Pod that holds the lease, with two
// replicas: the standby takes the lease and reconciles a new object within
// the lease duration, counted from the deletion.
func (e *e2e) leaderLoss(ctx context.Context) error {
	return e.underLoad(ctx, "the manager leader's loss", func(ctx context.Context) error {
		holder, err := e.leaseHolder(ctx)
		if err != nil {
			return err
		}
		// controller-runtime's identity is the pod's host name, "_", a uuid.
		leader, _, _ := strings.Cut(holder, "_")
		if err := e.standbyReady(ctx); err != nil {
			return err
		}
		start := time.Now()
		if err := e.c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: leader}}); err != nil {
			return fmt.Errorf("delete the leader %s: %w", leader, err)
		}
		next, err := e.newLeaseHolder(ctx, holder)
		if err != nil {
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

// leaseHolder is the identity that holds the manager's lease.
func (e *e2e) leaseHolder(ctx context.Context) (string, error) {
	var lease coordinationv1.Lease
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: leaseName}, &lease); err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return "", errors.New("nobody holds the manager's lease")
	}
	return *lease.Spec.HolderIdentity, nil
}

// standbyReady checks that both manager pods, the leader and a standby,
// are ready.
func (e *e2e) standbyReady(ctx context.Context) error {
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
	return nil
}

// newLeaseHolder waits until someone other than holder holds the lease,
// and returns who.
func (e *e2e) newLeaseHolder(ctx context.Context, holder string) (string, error) {
	key := client.ObjectKey{Namespace: releaseNamespace, Name: leaseName}
	var next string
	err := poll.Until(ctx, "a new lease holder", pollEvery, 2*leaseDuration, func() (bool, error) {
		var lease coordinationv1.Lease
		if err := e.c.Get(ctx, key, &lease); err != nil {
			return false, err
		}
		if h := lease.Spec.HolderIdentity; h != nil && *h != "" && *h != holder {
			next = *h
			return true, nil
		}
		return false, errors.New("the lease is still the old leader's, or nobody's")
	})
	return next, err
}
