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
// row number, or why it failed. A session is never appended twice: unless
// this process knows it is not in the sheet, it is looked up there
// (recover.go) before it is appended, so a crash, a lost answer, a
// restore and a GitOps re-apply (a SheetSync created again without its
// status) each find the row already written. A renamed tab is
// followed by its id. Succeeded SheetSyncs are deleted after the
// connection's syncRetention. The child-object machinery (the
// connection's watch and gate, the batch, the memory of this manager's
// writes, the retention) is internal/reconcile/children's; what an
// append finds about the connection (Google refused its grant, its sheet
// was renamed or is gone) goes to the connection's controller, which
// alone writes the connection's status.
package sheetsync

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/children"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/gsheets"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// +kubebuilder:rbac:groups=switchboard.dev,resources=sheetsyncs,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=switchboard.dev,resources=sheetsyncs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=sheetconnections,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Sheets is what the controller calls of the Google Sheets API;
// *gsheets.Client is the implementation.
type Sheets interface {
	Append(ctx context.Context, token, spreadsheetID, sheetTitle string, rows [][]any) (gsheets.AppendResult, error)
	Column(ctx context.Context, token, spreadsheetID, sheetTitle, column string) ([]string, error)
	Table(ctx context.Context, token, spreadsheetID, sheetTitle, lastColumn string) ([][]any, error)
	Spreadsheet(ctx context.Context, token, spreadsheetID string) (gsheets.Spreadsheet, error)
}

// Connections is the SheetConnection controller's mailbox: each batch's
// tally (rowsAppended, syncFailures, lastAppendAt), and what an append
// found about its connection. *sheetconnection.Reports is the
// implementation.
type Connections interface {
	children.Tallies
	// Refused: Google answered 401 or 403 to a call made with the grant
	// granted at grantedAt.
	Refused(conn types.NamespacedName, grantedAt string, at time.Time, err error)
	// Renamed: the sheet of spec.sheet.id is now titled title.
	Renamed(conn types.NamespacedName, title string)
	// SheetGone: the spreadsheet, or the sheet of spec.sheet, is gone.
	SheetGone(conn types.NamespacedName, err error)
}

const (
	// DependencyRecheck looks again at a sync whose connection does not
	// take sessions. The connection's watch wakes it as soon as it does;
	// this is only a safety net.
	DependencyRecheck = children.DependencyRecheck
	// BatchBusy is the wait of a sync whose connection's batch is in
	// flight: that batch may take it, or the next one will.
	BatchBusy = children.BatchBusy
	// Pace is the least time between two appends of one connection:
	// Sheets allows 60 write requests a minute per user
	// (https://developers.google.com/sheets/api/limits).
	Pace = time.Second
	// MaxRows is the most rows one append carries; Google advises
	// requests of at most 2 MB (limits page), and 500 rows of ten
	// 256-character cells stay under it.
	MaxRows = 500
	// DefaultWorkers is how many connections' batches run at once.
	DefaultWorkers = children.DefaultWorkers
)

// DefaultRetries: an append Google throttled (429, its quota of 60 writes
// a minute per user) or failed (5xx, timeout) is tried again after 1, 2,
// 4 … 64 seconds ±10 %, never sooner than Retry-After: seven retries span
// two minutes, more than a quota minute.
var DefaultRetries = outbound.Schedule{Base: time.Second, Retries: 7, Max: outbound.MaxRetryAfter}

// Reconciler reconciles SheetSyncs.
type Reconciler struct {
	client.Client
	OAuth    oauth.TokenSource
	Sheets   Sheets
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Retries spaces the attempts of an append Google throttled or failed
	// (DefaultRetries when Base is 0): each session on its own
	// schedule, counted from its own attempts.
	Retries outbound.Schedule
	// Recheck spaces the attempts of a session whose Retries are spent
	// (outbound.Recheck when Base is 0).
	Recheck outbound.Schedule
	// Workers is how many batches run at once (DefaultWorkers when 0).
	Workers int
	// Connections is the SheetConnection controller's mailbox.
	Connections Connections
	// LedgerNamespace holds the connections' ledgers (the webhook's
	// namespace, where its session reads find them); "" keeps none.
	LedgerNamespace string

	batcher *children.Batcher[*v1alpha1.SheetSync, *v1alpha1.SheetConnection]
	ledger  ledger
}

// Runner is the reconcile skeleton with SheetSync's phases.
func (r *Reconciler) Runner() *runner.Runner[*v1alpha1.SheetSync] {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Retries.Base == 0 {
		r.Retries = DefaultRetries
	}
	if r.Recheck.Base == 0 {
		r.Recheck = outbound.Recheck
	}
	if r.Connections == nil {
		r.Connections = unheard{}
	}
	r.batcher = &children.Batcher[*v1alpha1.SheetSync, *v1alpha1.SheetConnection]{
		Client: r.Client, Parent: "connection",
		Grants:     grant.New[*v1alpha1.SheetConnection](grant.Deps{Client: r.Client, Tokens: r.OAuth}, targets.Sheets),
		Accepting:  timesheet.Accepting,
		Retention:  func(c *v1alpha1.SheetConnection) time.Duration { return c.Spec.SyncRetention.Duration },
		Collecting: r.recordRow,
		Recorded:   recordAppended,
		Max:        MaxRows,
		Less:       sessionLess,
		Work:       r.work,
		Tallies:    r.Connections,
		Pace:       Pace,
		// A Failed sync stays until a person retries or deletes it.
		Kept: func(s *v1alpha1.SheetSync) bool { return s.Status.Phase == v1alpha1.SyncFailed },
	}
	return &runner.Runner[*v1alpha1.SheetSync]{
		Client: r.Client, Recorder: r.Recorder, Clock: r.Clock,
		New: func() *v1alpha1.SheetSync { return &v1alpha1.SheetSync{} },
		Normal: []runner.Phase[*v1alpha1.SheetSync]{
			r.batcher.CatchUp, r.retry, r.batcher.Collect, r.batcher.Batch,
		},
	}
}

// SetupWithManager registers the controller, the connections' watch and
// the batches' wake-ups.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	run := r.Runner()
	return r.batcher.Setup(mgr, "sheetsync", &v1alpha1.SheetSync{}, r.Workers, run)
}

// retry starts a Failed sync again when a person asks (seed 004 §4: a
// failed log can be re-synced from the UI), with the requested-at
// annotation; a Pending one waiting for its next try is tried at once,
// with its schedule started over.
func (r *Reconciler) retry(_ context.Context, obj *v1alpha1.SheetSync, run *runner.Run) runner.Outcome {
	waiting := obj.Status.Phase == v1alpha1.SyncPending && obj.Status.NextAttemptAt != nil
	if !run.Requested || (obj.Status.Phase != v1alpha1.SyncFailed && !waiting) {
		return runner.Continue()
	}
	r.batcher.Forget(obj.UID)
	st := &obj.Status
	st.Phase, st.Attempts, st.CompletedAt, st.NextAttemptAt = v1alpha1.SyncPending, 0, nil, nil
	status.MarkReconciling(obj, "RetryRequested", "a person asked for another try; last failure: "+st.LastError)
	return runner.Continue()
}

// sessionLess orders rows as the sessions happened.
func sessionLess(a, b *v1alpha1.SheetSync) bool {
	x, y := a.Spec.Session, b.Spec.Session
	switch {
	case x.StartedAt != y.StartedAt:
		return x.StartedAt < y.StartedAt
	case x.EndedAt != y.EndedAt:
		return x.EndedAt < y.EndedAt
	}
	return x.ID < y.ID
}

// unheard is the mailbox of a controller built without one: what the
// appends find about a connection is left to its own next read.
type unheard struct{}

func (unheard) Tally(types.NamespacedName, children.Tally)             {}
func (unheard) Refused(types.NamespacedName, string, time.Time, error) {}
func (unheard) Renamed(types.NamespacedName, string)                   {}
func (unheard) SheetGone(types.NamespacedName, error)                  {}
