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

// Package sheetsync appends finished time-tracker sessions to Google
// Sheets (seed 004 §4 sync flow): the pending SheetSyncs of a connection
// become rows of one values.append, in session order, paced under Sheets'
// quota of 60 writes a minute per user; each session that Google throttled
// or failed is tried again on its own schedule; each SheetSync records its
// row number, or why it failed. A session is never appended twice: an
// append is recorded as in flight before Google is called, and a sync
// found in flight later is looked up in the sheet (recover.go) before it
// is appended again. A renamed tab is followed by its id. Succeeded
// SheetSyncs are deleted after the connection's syncRetention.
package sheetsync

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/gsheets"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/runner"
	"github.com/switchboard-dev/switchboard/internal/status"
	"github.com/switchboard-dev/switchboard/internal/timesheet"
)

// +kubebuilder:rbac:groups=switchboard.dev,resources=sheetsyncs,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=switchboard.dev,resources=sheetsyncs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=sheetconnections,verbs=get;list;watch
// +kubebuilder:rbac:groups=switchboard.dev,resources=sheetconnections/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Sheets is what the controller calls of the Google Sheets API;
// *gsheets.Client is the implementation.
type Sheets interface {
	Append(ctx context.Context, token, spreadsheetID, sheetTitle string, rows [][]any) (gsheets.AppendResult, error)
	Column(ctx context.Context, token, spreadsheetID, sheetTitle, column string) ([]string, error)
	Table(ctx context.Context, token, spreadsheetID, sheetTitle, lastColumn string) ([][]any, error)
	Spreadsheet(ctx context.Context, token, spreadsheetID string) (gsheets.Spreadsheet, error)
}

const (
	// DependencyRecheck looks again at a sync whose connection does not
	// take sessions. The connection's watch wakes it as soon as it does;
	// this is only a safety net.
	DependencyRecheck = 10 * time.Minute
	// BatchBusy is the wait of a sync whose connection's batch is in
	// flight: that batch may take it, or the next one will.
	BatchBusy = time.Second
	// Pace is the least time between two appends of one connection:
	// Sheets allows 60 write requests a minute per user
	// (https://developers.google.com/sheets/api/limits).
	Pace = time.Second
	// MaxRows is the most rows one append carries; Google advises
	// requests of at most 2 MB (limits page), and 500 rows of ten
	// 256-character cells stay under it.
	MaxRows = 500
	// DefaultConcurrency is how many connections' batches run at once.
	DefaultConcurrency = 4
	// statusWriters is how many status writes of one batch run at once.
	statusWriters = 16
	// counterFlush is how often the connections' counters are written.
	counterFlush = 5 * time.Second
)

// Reconciler reconciles SheetSyncs.
type Reconciler struct {
	client.Client
	OAuth    oauth.TokenSource
	Sheets   Sheets
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Retries spaces the attempts of an append Google throttled or failed
	// (outbound.SheetsRetries when Base is 0): each session on its own
	// schedule, counted from its own attempts.
	Retries outbound.Schedule
	// Recheck spaces the attempts of a session whose Retries are spent
	// (outbound.Recheck when Base is 0).
	Recheck outbound.Schedule
	// Concurrency is MaxConcurrentReconciles (DefaultConcurrency when 0).
	Concurrency int

	conns    sync.Map // connection key → *connState: one batch at a time, its pace
	finished sync.Map // SheetSync UID → time finished, until the cache shows it
	counts   *status.Counters[*v1alpha1.SheetConnection]
	wake     chan event.TypedGenericEvent[*v1alpha1.SheetSync]
}

// connState is what the leader remembers of a connection between batches.
type connState struct {
	mu sync.Mutex
	// next is the earliest time of the next append (Pace, or a backoff).
	next time.Time
}

func (r *Reconciler) conn(key types.NamespacedName) *connState {
	v, _ := r.conns.LoadOrStore(key, &connState{})
	return v.(*connState)
}

// Runner is the reconcile skeleton with SheetSync's phases.
func (r *Reconciler) Runner() *runner.Runner[*v1alpha1.SheetSync] {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Retries.Base == 0 {
		r.Retries = outbound.SheetsRetries
	}
	if r.Recheck.Base == 0 {
		r.Recheck = outbound.Recheck
	}
	if r.wake == nil {
		r.wake = make(chan event.TypedGenericEvent[*v1alpha1.SheetSync], 4*MaxRows)
	}
	return &runner.Runner[*v1alpha1.SheetSync]{
		Client: r.Client, Recorder: r.Recorder, Clock: r.Clock,
		New:    func() *v1alpha1.SheetSync { return &v1alpha1.SheetSync{} },
		Normal: []runner.Phase[*v1alpha1.SheetSync]{r.retry, r.collect, r.batch},
	}
}

// Counters is the flusher of the connections' rowsAppended, syncFailures
// and lastAppendAt.
func (r *Reconciler) Counters() *status.Counters[*v1alpha1.SheetConnection] {
	if r.counts == nil {
		r.counts = &status.Counters[*v1alpha1.SheetConnection]{
			Client: r.Client, Every: counterFlush,
			New: func() *v1alpha1.SheetConnection { return &v1alpha1.SheetConnection{} },
			Apply: func(c *v1alpha1.SheetConnection, t status.Tally) {
				c.Status.RowsAppended += t.Done
				c.Status.SyncFailures += t.Failed
				if !t.Last.IsZero() && (c.Status.LastAppendAt == nil || t.Last.After(c.Status.LastAppendAt.Time)) {
					last := metav1.NewTime(t.Last)
					c.Status.LastAppendAt = &last
				}
			},
		}
	}
	return r.counts
}

// SetupWithManager registers the controller, its wake-ups and the counter
// flusher.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Concurrency <= 0 {
		r.Concurrency = DefaultConcurrency
	}
	run := r.Runner()
	if err := mgr.Add(r.Counters()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.SheetSync{}, builder.WithPredicates(status.SpecOrRequest())).
		// A connection that starts taking sessions (Active, headers found)
		// wakes its waiting syncs: no polling.
		Watches(&v1alpha1.SheetConnection{}, handler.EnqueueRequestsFromMapFunc(r.pendingOf),
			builder.WithPredicates(acceptingChanged())).
		// The members of a batch are woken to be collected after their
		// retention, or retried.
		WatchesRawSource(source.Channel(r.wake, &handler.TypedEnqueueRequestForObject[*v1alpha1.SheetSync]{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Concurrency}).
		Named("sheetsync").
		Complete(run)
}

// pendingOf lists a connection's unfinished syncs from the cache.
func (r *Reconciler) pendingOf(ctx context.Context, o client.Object) []reconcile.Request {
	c, ok := o.(*v1alpha1.SheetConnection)
	if !ok {
		return nil
	}
	if accepting, _ := timesheet.Accepting(c); !accepting {
		return nil
	}
	return index.Requests(ctx, r, &v1alpha1.SheetSyncList{}, c.Namespace, index.PendingSheetSyncs, c.Name)
}

// acceptingChanged lets through connections created, or whose taking of
// sessions changed — not every status write (their counters).
func acceptingChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, okOld := e.ObjectOld.(*v1alpha1.SheetConnection)
			n, okNew := e.ObjectNew.(*v1alpha1.SheetConnection)
			if !okOld || !okNew {
				return false
			}
			a, _ := timesheet.Accepting(o)
			b, _ := timesheet.Accepting(n)
			return a != b
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// wakeLater enqueues a SheetSync without blocking; when the channel is
// full the periodic resync finds it.
func (r *Reconciler) wakeLater(s *v1alpha1.SheetSync) {
	select {
	case r.wake <- event.TypedGenericEvent[*v1alpha1.SheetSync]{Object: s}:
	default:
	}
}
