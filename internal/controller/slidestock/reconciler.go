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

// Package slidestock keeps SlideStocks true: provider detection, the
// oEmbed fetch, and the pending → ready / failed lifecycle with the retry
// policy of seed 001 §7, on the controller work queue instead of
// Cloudflare Queues.
package slidestock

import (
	"context"
	"errors"
	"time"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oembed"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/status"
)

// Retry policy (seed 001 §7.1: max_retries 3, so four attempts in all).
const (
	// MaxAttempts is the most fetches made for one URL before it is Failed.
	MaxAttempts = 4
	// RetryBase is the delay before the first retry; each retry doubles it.
	RetryBase = 2 * time.Second
	// RetryMax caps a retry delay, Retry-After included.
	RetryMax = 5 * time.Minute
	// DefaultConcurrency is how many stocks are fetched at once.
	DefaultConcurrency = 8
)

// Reconciler reconciles SlideStocks.
type Reconciler struct {
	client.Client
	Fetcher  oembed.Fetcher
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Backoff spaces retries of transient failures.
	Backoff outbound.Backoff
	// Concurrency is MaxConcurrentReconciles (DefaultConcurrency when 0).
	Concurrency int
}

// SetupWithManager registers the controller. It reacts to spec changes and
// reconcile requests, not to its own status writes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Backoff.Base == 0 {
		r.Backoff = outbound.Backoff{Base: RetryBase, Max: RetryMax, Jitter: 0.2}
	}
	if r.Concurrency <= 0 {
		r.Concurrency = DefaultConcurrency
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.SlideStock{}, builder.WithPredicates(status.SpecOrRequest())).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Concurrency}).
		Named("slidestock").
		Complete(r)
}

// Reconcile computes the stock's status in memory and writes it once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	obj := &v1alpha1.SlideStock{}
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	patcher := status.NewPatcher(r.Client, obj)
	defer func() {
		// A failed status write is transient: returning it requeues the
		// stock with the work queue's backoff (seed 001 §7.2, "DB update
		// failure: retry").
		retErr = errors.Join(retErr, patcher.Patch(ctx, obj))
	}()

	if !obj.DeletionTimestamp.IsZero() {
		// Nothing outside the cluster to release.
		return ctrl.Result{}, nil
	}
	if obj.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	return r.reconcileNormal(ctx, obj)
}
