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
	"time"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/upstream/oembed"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// +kubebuilder:rbac:groups=switchboard.dev,resources=slidestocks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=slidestocks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Retry policy (seed 001 §7.1: max_retries 3, so four attempts in all).
const (
	// MaxAttempts is the most fetches made for one URL before it is Failed.
	MaxAttempts = 4
	// DefaultWorkers is how many stocks are fetched at once.
	DefaultWorkers = 8
)

// Reconciler reconciles SlideStocks.
type Reconciler struct {
	client.Client
	Fetcher  oembed.Fetcher
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Retries spaces the attempts of one fetch (DefaultRetries when its
	// Base is 0).
	Retries outbound.Schedule
	// Recheck spaces the single fetches that look again at a stock whose
	// retries ran out (outbound.Recheck when its Base is 0).
	Recheck outbound.Schedule
	// Workers is how many stocks are reconciled at once (DefaultWorkers
	// when 0).
	Workers int
}

// DefaultRetries spaces the attempts of one fetch: 2, 4 and 8 seconds
// ±20 %, four attempts in all (seed 001 §7.2; the seed leaves Cloudflare
// Queues' spacing open).
var DefaultRetries = outbound.Schedule{Base: 2 * time.Second, Retries: MaxAttempts - 1, Max: outbound.MaxRetryAfter, Jitter: 0.2}

// Runner is the reconcile skeleton with SlideStock's phases.
func (r *Reconciler) Runner() *runner.Runner[*v1alpha1.SlideStock] {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Retries.Base == 0 {
		r.Retries = DefaultRetries
	}
	if r.Recheck.Base == 0 {
		r.Recheck = outbound.Recheck
	}
	return &runner.Runner[*v1alpha1.SlideStock]{
		Client: r.Client, Recorder: r.Recorder, Clock: r.Clock,
		New:    func() *v1alpha1.SlideStock { return &v1alpha1.SlideStock{} },
		Normal: []runner.Phase[*v1alpha1.SlideStock]{r.startOver, r.settled, r.fetch},
		Ready:  readyMessage,
	}
}

// SetupWithManager registers the controller. It reacts to spec changes and
// requests only, not to its own status writes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.SlideStock{}, builder.WithPredicates(status.SpecOrRequest())).
		WithOptions(controller.Options{MaxConcurrentReconciles: wire.Workers{N: r.Workers}.Or(DefaultWorkers)}).
		Named("slidestock").
		Complete(r.Runner())
}
