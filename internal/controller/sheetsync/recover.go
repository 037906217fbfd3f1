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

package sheetsync

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/upstream/gsheets"
)

// Exactly once. An append is not idempotent at Google: when its answer is
// lost (the manager killed, a timeout, a reset, a 5xx after the write) the
// rows may be in the sheet or not; and a SheetSync a restore or a GitOps
// re-apply created again has lost the status that said it was written.
// So unless the ledger knows a session is not in the sheet (ledger.go),
// the sheet is searched for it before it is appended:
//
//   - with an id column mapped, for its session id in that column;
//   - without one, for a row holding its title, startedAt, endedAt and
//     durationSeconds — the four columns every mapping has. The sessions
//     of one person do not overlap (the tracker runs one session at a
//     time: seed 004 §1 RunningSessionState), and start and end are
//     written to the second, so two sessions can only share that key if
//     both began and ended within the same second under the same title.
//
// Each row found is claimed by one sync only. Found, the sync is Recovered
// with that row; not found, it is appended. A search that fails appends
// nothing.

// errSheetGone marks a call refused because the spreadsheet or the sheet
// of spec.sheet is no longer there.
var errSheetGone = errors.New("the sheet is gone")

// recover looks up the members an earlier append may have written (all
// but those the ledger knows are absent). Found ones succeed with the row
// they have; the rest are returned to be appended.
func (b *batchRun) recover(ctx context.Context, members []*v1alpha1.SheetSync) []*v1alpha1.SheetSync {
	var unsure []*v1alpha1.SheetSync
	for _, m := range members {
		if b.r.ledger.mayBeWritten(m) {
			unsure = append(unsure, m)
		}
	}
	if len(unsure) == 0 {
		return members
	}
	rows, how, err := b.lookUp(ctx)
	if err != nil {
		b.lookUpFailed(ctx, unsure, how, err)
		return without(members, unsure)
	}
	idCol := b.conn.Status.ResolvedColumns["id"]
	width, _ := gsheets.ColumnIndex(maxColumn(b.conn.Status.ResolvedColumns))
	var found []*v1alpha1.SheetSync
	for _, m := range unsure {
		k := m.Spec.Session.ID
		if idCol == "" {
			k = b.sessionKey(m.Spec.Session)
		}
		if len(rows[k]) == 0 {
			continue
		}
		row := rows[k][0]
		rows[k] = rows[k][1:]
		b.succeed(m, row, rowRange(b.title, row, width), RecoveredReason, fmt.Sprintf("found as row %d %s: already in the sheet, not appended again", row, how))
		found = append(found, m)
	}
	return without(members, found)
}

// lookUp reads the sheet's rows by session: the id column when one is
// mapped, else the table keyed by keyFields. rows maps a key to the rows
// holding it, top down; how says which.
func (b *batchRun) lookUp(ctx context.Context) (rows map[string][]int64, how string, err error) {
	idCol := b.conn.Status.ResolvedColumns["id"]
	how = "by its title, start, end and duration"
	if idCol != "" {
		how = "in the id column"
	}
	err = b.onSheet(ctx, func(title string) error {
		var err error
		if idCol != "" {
			rows, err = b.idRows(ctx, title, idCol)
		} else {
			rows, err = b.keyRows(ctx, title)
		}
		return err
	})
	return rows, how, err
}

// lookUpFailed sorts a failed look-up as appendFailed sorts a failed
// append, but nothing was counted yet.
func (b *batchRun) lookUpFailed(ctx context.Context, unsure []*v1alpha1.SheetSync, how string, err error) {
	switch {
	case errors.Is(err, errSheetGone):
		b.sheetGone(ctx, unsure, err, false)
	case errors.Is(err, gsheets.ErrUnauthorized):
		b.refuse(ctx, unsure, err, false)
	default:
		// Not knowing is not appending. The search is the sync's
		// attempt: it counts, and the next one waits for the sync's
		// own schedule, as after a failed append.
		now := metav1.NewTime(b.now)
		for _, m := range unsure {
			m.Status.Attempts++
			m.Status.AttemptedAt = &now
			b.transient(ctx, m, fmt.Errorf("look up session %s %s before appending it again: %w", m.Spec.Session.ID, how, err))
		}
	}
}

// idRows reads the id column: each session id and its rows.
func (b *batchRun) idRows(ctx context.Context, title, col string) (map[string][]int64, error) {
	ids, err := b.r.Sheets.Column(ctx, b.token, b.conn.Spec.SpreadsheetID, title, col)
	if err != nil {
		return nil, err
	}
	rows := make(map[string][]int64, len(ids))
	for i, id := range ids {
		if id != "" {
			rows[id] = append(rows[id], int64(i)+1)
		}
	}
	return rows, nil
}

// keyFields identify a session in a sheet without an id column.
var keyFields = [...]string{"title", "startedAt", "endedAt", "durationSeconds"}

// keyRows reads the table as stored (numbers as numbers) and keys each
// row by its keyFields.
func (b *batchRun) keyRows(ctx context.Context, title string) (map[string][]int64, error) {
	table, err := b.r.Sheets.Table(ctx, b.token, b.conn.Spec.SpreadsheetID, title, maxColumn(b.conn.Status.ResolvedColumns))
	if err != nil {
		return nil, err
	}
	rows := make(map[string][]int64, len(table))
	for i, cells := range table {
		k := b.rowKey(cells)
		rows[k] = append(rows[k], int64(i)+1)
	}
	return rows, nil
}

// sessionKey is the key of the row the session becomes.
func (b *batchRun) sessionKey(s v1alpha1.TimeTrackerSession) string {
	return b.rowKey(sessionRow(s, b.conn.Status.ResolvedColumns, b.loc))
}

// rowKey joins a row's keyFields, normalised so that the row as written
// and as read back compare equal: date-time serials to the second (a day
// is 86,400 of them), numbers to the unit, text as it is.
func (b *batchRun) rowKey(cells []any) string {
	parts := make([]string, len(keyFields))
	for i, f := range keyFields {
		c, err := gsheets.ColumnIndex(b.conn.Status.ResolvedColumns[f])
		if err != nil || c > len(cells) {
			continue
		}
		scale := 1.0
		if f == "startedAt" || f == "endedAt" {
			scale = 86400
		}
		switch v := cells[c-1].(type) {
		case float64:
			parts[i] = "n" + strconv.FormatFloat(math.Round(v*scale), 'f', 0, 64)
		case int64:
			parts[i] = "n" + strconv.FormatFloat(math.Round(float64(v)*scale), 'f', 0, 64)
		case string:
			parts[i] = "s" + v
		case nil:
		default:
			parts[i] = "s" + fmt.Sprint(v)
		}
	}
	return strings.Join(parts, "\x00")
}

// onSheet runs call on the connection's sheet. A call refused for its
// range (400 "Unable to parse range") or its spreadsheet (404) may only
// mean that a person renamed the tab: the sheet is looked up again, by
// spec.sheet's id (or title), once per batch. Renamed, the connection's
// controller is told the new title and call runs again at once with it;
// gone, the error wraps errSheetGone.
func (b *batchRun) onSheet(ctx context.Context, call func(title string) error) error {
	err := call(b.title)
	if !errors.Is(err, gsheets.ErrNotFound) || b.resolved {
		return err
	}
	b.resolved = true
	ss, lerr := b.r.Sheets.Spreadsheet(ctx, b.token, b.conn.Spec.SpreadsheetID)
	switch {
	case errors.Is(lerr, gsheets.ErrNotFound):
		return fmt.Errorf("%w: spreadsheet %s: %w", errSheetGone, b.conn.Spec.SpreadsheetID, lerr)
	case lerr != nil:
		// Only the look-up's failure is wrapped: it decides whether to retry.
		return fmt.Errorf("look up the sheet again after %v: %w", err, lerr) //nolint:errorlint // see above
	}
	sh, serr := selected(b.conn.Spec.Sheet, ss)
	switch {
	case serr != nil:
		return fmt.Errorf("%w: %w (%w)", errSheetGone, serr, err)
	case sh.Title == b.title:
		return err // there under the same title: the refusal stands
	}
	b.renamed(ctx, sh.Title)
	return call(sh.Title)
}

// selected is the sheet sel names in ss: the one with its id when it has
// one, else the one with its title. The error says which is missing.
func selected(sel v1alpha1.SheetSelector, ss gsheets.Spreadsheet) (gsheets.Sheet, error) {
	if sel.ID == nil {
		if sh, ok := ss.Sheet(sel.Title); ok {
			return sh, nil
		}
		return gsheets.Sheet{}, fmt.Errorf("spreadsheet %s has no sheet %q", ss.ID, sel.Title)
	}
	for _, sh := range ss.Sheets {
		if sh.ID == *sel.ID {
			return sh, nil
		}
	}
	return gsheets.Sheet{}, fmt.Errorf("spreadsheet %s has no sheet with id %d", ss.ID, *sel.ID)
}

// renamed follows the sheet under its new title, and tells the
// connection's controller.
func (b *batchRun) renamed(ctx context.Context, title string) {
	log.FromContext(ctx).Info("the sheet was renamed; following it by its id", "sheetConnection", klog.KObj(b.conn), "from", b.title, "to", title)
	b.title = title
	b.r.Connections.Renamed(b.b.Key, title)
}

// sheetGone tells the connection's controller that its sheet is gone (it
// stops taking sessions: SheetNotFound) and makes the syncs wait for it:
// a person fixes the sheet or the spec, and nothing is lost meanwhile.
func (b *batchRun) sheetGone(_ context.Context, todo []*v1alpha1.SheetSync, err error, counted bool) {
	b.waitForConnection(todo, err, counted, "the connection's sheet is gone; the sync waits for it: "+err.Error())
	b.r.Connections.SheetGone(b.b.Key, err)
	if b.r.Recorder != nil {
		b.r.Recorder.Eventf(b.conn, nil, corev1.EventTypeWarning, sheetNotFoundReason, "Append", "%s", err.Error())
	}
}
