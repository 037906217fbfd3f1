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

package sheetconnection

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/children"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// Report is what the SheetSync controller found about a connection since
// the connection's last reconcile.
type Report struct {
	// Tally is the appends': rows appended, syncs failed, the last append.
	Tally children.Tally
	// Refused is Google's refusal of the grant, at an append.
	Refused *Refusal
	// Title is the sheet's new title, when an append found the tab of
	// spec.sheet.id renamed.
	Title string
	// Gone is why the spreadsheet or the sheet is gone, when an append
	// found it so.
	Gone error
}

// Refusal is Google's 401 or 403 to a call made with the grant granted at
// GrantedAt.
type Refusal struct {
	GrantedAt string
	At        time.Time
	Err       error
}

// TallyDelay is how long the appends' tallies wait for the connection's
// reconcile. Each reconcile reads the spreadsheet and row 1 from Google,
// two of the 60 reads a minute Sheets allows a user: a minute of appends
// is one reconcile, and the counters lag by a minute at most.
const TallyDelay = time.Minute

// Reports is the connection controller's mailbox: the SheetSync
// controller posts there (sheetsync.Connections), and the connection's
// reconcile records it in the connection's status, which this controller
// alone writes. A refusal, a rename or a sheet gone reconciles the
// connection at once; tallies wait TallyDelay.
type Reports struct {
	children.Mailbox[Report]
}

// Tally adds a batch's tally.
func (m *Reports) Tally(conn types.NamespacedName, t children.Tally) {
	m.Post(conn, TallyDelay, func(r *Report) { r.Tally = r.Tally.Plus(t) })
}

// Refused reports that Google refused the grant granted at grantedAt.
func (m *Reports) Refused(conn types.NamespacedName, grantedAt string, at time.Time, err error) {
	m.Post(conn, 0, func(r *Report) { r.Refused = &Refusal{GrantedAt: grantedAt, At: at, Err: err} })
}

// Renamed reports the sheet's new title.
func (m *Reports) Renamed(conn types.NamespacedName, title string) {
	m.Post(conn, 0, func(r *Report) { r.Title = title })
}

// SheetGone reports that the spreadsheet or the sheet is gone.
func (m *Reports) SheetGone(conn types.NamespacedName, err error) {
	m.Post(conn, 0, func(r *Report) { r.Gone = err })
}

// mailbox is the controller's mailbox (made when the wiring gave none).
func (r *Reconciler) mailbox() *Reports {
	if r.Reports == nil {
		r.Reports = &Reports{}
	}
	return r.Reports
}

// reports, the first phase, records what the appends found: the counters,
// a renamed tab, a sheet gone, a refused grant. The phases after it read
// the sheet and the grant again, as they would have after the appends.
func (r *Reconciler) reports(_ context.Context, obj *v1alpha1.SheetConnection, _ *runner.Run) runner.Outcome {
	if r.Reports == nil {
		return runner.Continue()
	}
	st := &obj.Status
	shown := children.Tally{Done: st.RowsAppended, Failed: st.SyncFailures}
	if st.LastAppendAt != nil {
		shown.Last = st.LastAppendAt.Time
	}
	rep, n := r.Reports.Receive(client.ObjectKeyFromObject(obj), shown, func(rep Report) children.Tally { return rep.Tally })
	st.RowsAppended, st.SyncFailures = n.Done, n.Failed
	if !n.Last.IsZero() && (st.LastAppendAt == nil || n.Last.After(st.LastAppendAt.Time)) {
		last := metav1.NewTime(n.Last)
		st.LastAppendAt = &last
	}
	if rep.Title != "" {
		r.renamed(obj, rep.Title)
	}
	if rep.Gone != nil {
		sheetGone(obj, rep.Gone)
	}
	if rf := rep.Refused; rf != nil {
		Refuse(obj, rf.GrantedAt, rf.At, rf.Err)
	}
	return runner.Continue()
}

// sheetGone records what an append found: the spreadsheet or the sheet
// of spec.sheet is gone (deleted, unshared, or renamed while selected by
// title). The connection stops taking sessions, as its own read would
// have stopped it, and pending syncs wait for a person to fix the sheet
// or the spec; the connection's next read resumes it.
func sheetGone(obj *v1alpha1.SheetConnection, err error) {
	notFound(obj, err)
	status.MarkStalled(obj, SheetNotFoundReason, err.Error())
}

// renamed records that the sheet of spec.sheet.id is now titled title: a
// person renamed the tab; the id, and with it the connection, stays the
// same. The sheet is read again at once, as a person who renamed the tab
// may have changed its headers too.
func (r *Reconciler) renamed(obj *v1alpha1.SheetConnection, title string) {
	obj.Status.SheetTitle = title
	r.reads.forget(obj.UID)
	if status.IsTrue(obj, v1alpha1.ReadyCondition) {
		status.MarkReady(obj, v1alpha1.SucceededReason, readyMessage(obj))
	}
}
