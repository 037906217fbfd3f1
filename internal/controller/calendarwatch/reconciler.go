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

// Package calendarwatch is the CalendarWatch controller (seed 002): a
// Google push channel kept open without a gap, incremental sync with the
// sync token, and the appointments of cancelled events deleted.
package calendarwatch

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/upstream/gcalendar"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// +kubebuilder:rbac:groups=switchboard.dev,resources=calendarwatches,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=calendarwatches/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=calendarwatches/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Calendar is what the controller calls of the Google Calendar API;
// *gcalendar.Client is the implementation.
type Calendar interface {
	Watch(ctx context.Context, token string, r gcalendar.WatchRequest) (gcalendar.Channel, error)
	Stop(ctx context.Context, token, id, resourceID string) error
	List(ctx context.Context, token string, r gcalendar.ListRequest) (gcalendar.Page, error)
}

// Reconciler reconciles CalendarWatches.
type Reconciler struct {
	client.Client
	// APIReader reads what the cache does not hold: a person's Secrets
	// (the HTTP sink's signing key) and the appointment objects, whose
	// kind is the user's choice and gets no informer.
	APIReader client.Reader
	OAuth     oauth.TokenSource
	Calendar  Calendar
	// Out posts to HTTP sinks.
	Out      *outbound.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// PublicURL is the webhook server's public base URL: the connect link,
	// and each channel's address (PublicURL + calendarpush.PushPath). Without it no
	// channel is opened and the backup sync alone keeps appointments true.
	PublicURL string
	// Workers is how many watches are reconciled at once (DefaultWorkers
	// when 0).
	Workers int

	grant *grant.Phases[*v1alpha1.CalendarWatch]
	// opened is the sequence of the channel this manager last opened for
	// a watch, until the cache shows it in status (channelSeen): a
	// reconcile on a copy older than that must not open another.
	opened runner.Written[int64]
	// synced is the last notification this manager synced a watch for,
	// until the cache shows it handled in status (notificationSynced): a
	// reconcile on an older copy (the sync's own cursor write queues one
	// at once) must not sync for it again.
	synced runner.Written[v1alpha1.NotificationStatus]
}

// Runner builds the reconcile runner.
func (r *Reconciler) Runner() *runner.Runner[*v1alpha1.CalendarWatch] {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	r.grant = grant.New[*v1alpha1.CalendarWatch](grant.Deps{Client: r.Client, Tokens: r.OAuth, Recorder: r.Recorder, PublicURL: r.PublicURL}, targets.Calendar)
	return &runner.Runner[*v1alpha1.CalendarWatch]{
		Client: r.Client, Recorder: r.Recorder, Clock: r.Clock,
		New: func() *v1alpha1.CalendarWatch { return &v1alpha1.CalendarWatch{} },
		Normal: []runner.Phase[*v1alpha1.CalendarWatch]{
			r.grant.Connect, r.grant.Grant, r.channelSecret, r.channel,
			r.keepChannelPromise(r.sync), r.keepChannelPromise(r.deliver),
		},
		Ready:   readyMessage,
		Suspend: []runner.Phase[*v1alpha1.CalendarWatch]{r.suspend},
		Delete:  []runner.Phase[*v1alpha1.CalendarWatch]{r.release},
		// Network errors and 5xx: 1, 2, 4, 8, 16 s, never sooner than
		// Retry-After, then the backup sync timer (seed 002 "Sync Errors").
		Transient: Retries,
		// A channel attempt promised sooner (status.nextChannelAttemptAt)
		// is kept.
		Exhausted: func(w *v1alpha1.CalendarWatch) time.Duration {
			if d, ok := r.untilChannelAttempt(w); ok {
				return min(d, w.Spec.BackupSyncInterval.Duration)
			}
			return w.Spec.BackupSyncInterval.Duration
		},
	}
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.CalendarWatch{}, builder.WithPredicates(predicate.Or(status.SpecOrRequest(), status.AnnotationChanged(v1alpha1.CalendarNotificationAnnotation)))).
		// The token Secret the OAuth callback writes reconciles its watches.
		Watches(grant.SecretWatch(r, &v1alpha1.CalendarWatchList{})).
		// The connect Secret and the channel Secret.
		Owns(&corev1.Secret{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: wire.Workers{N: r.Workers}.Or(DefaultWorkers)}).
		Named("calendarwatch").
		Complete(r.Runner())
}

func (r *Reconciler) event(obj *v1alpha1.CalendarWatch, related runtime.Object, typ, reason, action, note string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, related, typ, reason, action, "%s", note)
	}
}

// readyMessage: the grant works and the last sync succeeded. A channel
// that could not be opened leaves the watch Ready (the backup sync keeps
// appointments true) with ChannelReady=False saying why. It does not name
// the channel (ChannelReady does): a renewal then changes Ready not at
// all, and costs one status write.
func readyMessage(obj *v1alpha1.CalendarWatch) string {
	msg := "synced; "
	if obj.Status.Channel != nil && status.IsTrue(obj, v1alpha1.ChannelReadyCondition) {
		msg += "push channel open (see ChannelReady)"
	} else {
		msg += "no push channel (see ChannelReady): the backup sync runs every " + obj.Spec.BackupSyncInterval.Duration.String()
	}
	return msg
}
