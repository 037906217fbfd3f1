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

// Package slidestock keeps SlideStocks: provider detection, oEmbed (or a
// built embed URL), and seed 001's retry policy.
package slidestock

import (
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oembed"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/runner"
	"github.com/switchboard-dev/switchboard/internal/status"
)

// +kubebuilder:rbac:groups=switchboard.dev,resources=slidestocks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=slidestocks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Retry policy (seed 001 §7.1: max_retries 3, so four attempts in all).
const (
	// MaxAttempts is the most fetches made for one URL before it is Failed.
	MaxAttempts = 4
	// DefaultConcurrency is how many stocks are fetched at once.
	DefaultConcurrency = 8
)

// Reconciler reconciles SlideStocks.
type Reconciler struct {
	client.Client
	Fetcher  oembed.Fetcher
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Retries spaces the attempts of one fetch (outbound.SlideRetries when
	// its Base is 0).
	Retries outbound.Schedule
	// Recheck spaces the single fetches that look again at a stock whose
	// retries ran out (outbound.Recheck when its Base is 0).
	Recheck outbound.Schedule
	// Concurrency is MaxConcurrentReconciles (DefaultConcurrency when 0).
	Concurrency int
}

// Runner is the reconcile skeleton with SlideStock's phases.
func (r *Reconciler) Runner() *runner.Runner[*v1alpha1.SlideStock] {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Retries.Base == 0 {
		r.Retries = outbound.SlideRetries
	}
	if r.Recheck.Base == 0 {
		r.Recheck = outbound.Recheck
	}
	return &runner.Runner[*v1alpha1.SlideStock]{
		Client: r.Client, Recorder: r.Recorder, Clock: r.Clock,
		New:       func() *v1alpha1.SlideStock { return &v1alpha1.SlideStock{} },
		Suspended: func(s *v1alpha1.SlideStock) bool { return s.Spec.Suspend },
		Normal:    []runner.Phase[*v1alpha1.SlideStock]{r.startOver, r.settled, r.fetch},
	}
}

// SetupWithManager registers the controller. It reacts to spec changes and
// requests only, not to its own status writes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Concurrency <= 0 {
		r.Concurrency = DefaultConcurrency
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.SlideStock{}, builder.WithPredicates(status.SpecOrRequest())).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Concurrency}).
		Named("slidestock").
		Complete(r.Runner())
}
