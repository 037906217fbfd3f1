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
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/children"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/gsheets"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// No session is appended twice by this process: the batcher runs one
// batch at a time per connection and remembers what each batch wrote until
// the cache shows it (children). What no status records — a crash before
// the status write, a failed status write, a lost answer, a SheetSync
// restored or applied again without its status — the sheet does: a
// session is looked up there before it is appended unless the ledger
// knows it is not there (ledger.go, recover.go).

// Reasons of SheetSync conditions.
const (
	// AppendFailedReason: Google refused the append for good (a 4xx other
	// than 401/403/429), or the sheet is gone.
	AppendFailedReason = "AppendFailed"
	// RecoveredReason: the sync's session was found in the sheet before
	// it was appended — written before an interruption (a crash, a lost
	// answer), or by the SheetSync a restore or a re-apply replaced — and
	// was not appended again.
	RecoveredReason = "Recovered"
	// sheetNotFoundReason is the connection's reason for a sheet that is
	// gone (sheetconnection.SheetNotFoundReason), for its Warning Event.
	sheetNotFoundReason = "SheetNotFound"
)

// batch is one batch of a connection.
type batch = children.Batch[*v1alpha1.SheetSync, *v1alpha1.SheetConnection]

// work appends the batch's members (obj among them) in one values.append,
// in session order, setting each one's status in memory; the batcher
// writes them.
func (r *Reconciler) work(ctx context.Context, b *batch) runner.Outcome {
	loc, err := time.LoadLocation(b.Parent.Status.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	w := &batchRun{r: r, b: b, now: b.Now, token: b.Grant.Token, grant: b.Grant.ID,
		conn: b.Parent, obj: b.Obj, title: b.Parent.Status.SheetTitle, loc: loc}
	members := slices.Clone(b.Members)
	sort.SliceStable(members, func(i, j int) bool { return sessionLess(members[i], members[j]) })
	w.append(ctx, members)
	b.Tally = children.Tally{Done: int64(w.appended), Failed: int64(w.failed), Last: w.lastAppend}
	switch {
	case w.waiting:
		return runner.Wait(DependencyRecheck)
	case w.objErr != nil:
		return runner.Retry(w.objReason, w.objErr, w.objDelay)
	}
	return runner.Wait(max(b.RetryIn, BatchBusy))
}

// batchRun is one batch's outcome, computed in memory.
type batchRun struct {
	r     *Reconciler
	b     *batch
	now   time.Time
	token string
	grant string
	conn  *v1alpha1.SheetConnection
	obj   *v1alpha1.SheetSync
	// title is the sheet's title: the connection's, or the new one when
	// the batch found the tab renamed.
	title string
	loc   *time.Location
	// resolved is set once the batch has looked the sheet up again.
	resolved         bool
	appended, failed int
	lastAppend       time.Time
	// obj's own failure, its reason and its wait.
	objErr    error
	objReason string
	objDelay  time.Duration
	// waiting: the members wait for the connection (Google refused the
	// grant, or the sheet is gone).
	waiting bool
}

// append writes the batch's rows in one values.append.
func (b *batchRun) append(ctx context.Context, members []*v1alpha1.SheetSync) {
	todo := b.recover(ctx, members)
	if len(todo) == 0 {
		return
	}
	for _, m := range todo {
		b.r.ledger.appending(m)
		markInFlight(m, b.now)
	}
	rows := make([][]any, len(todo))
	for i, m := range todo {
		rows[i] = sessionRow(m.Spec.Session, b.conn.Status.ResolvedColumns, b.loc)
	}
	var (
		res       gsheets.AppendResult
		appendErr error
	)
	err := b.onSheet(ctx, func(title string) error {
		res, appendErr = b.r.Sheets.Append(ctx, b.token, b.conn.Spec.SpreadsheetID, title, rows)
		return appendErr
	})
	if err != nil {
		b.appendFailed(ctx, todo, rows, appendErr, err)
		return
	}
	b.lastAppend = b.now
	for i, m := range todo {
		row := res.FirstRow + int64(i)
		m.Status.Trace = trace(b.title, i, len(todo), rows[i], res.Response)
		b.succeed(m, row, rowRange(b.title, row, len(rows[i])), v1alpha1.SucceededReason, "appended as row "+strconv.FormatInt(row, 10))
		b.appended++
	}
}

// markInFlight shows, in memory, that m's append is starting. It is
// written with the outcome: a lost answer keeps status.inFlightSince, and
// the sync is then looked up before it is appended again.
func markInFlight(m *v1alpha1.SheetSync, now time.Time) {
	at := metav1.NewTime(now)
	m.Status.Phase, m.Status.InFlightSince, m.Status.AttemptedAt = v1alpha1.SyncPending, &at, &at
	m.Status.Attempts++
}

// appendFailed sorts a failed append: a sheet that is gone, or 401/403,
// make the syncs wait for the connection (without counting the attempt);
// throttling and outages are retried on each sync's schedule; anything
// else fails the syncs. Whether Google may have written the rows (the
// last append's answer, appendErr) decides whether they stay in flight.
func (b *batchRun) appendFailed(ctx context.Context, todo []*v1alpha1.SheetSync, rows [][]any, appendErr, err error) {
	oe, _ := outbound.Classify(appendErr)
	// Google answered 4xx: nothing was written. A 5xx or no answer at all
	// (a timeout, a reset) may have come after the write.
	definite := oe != nil && oe.Status >= 400 && oe.Status < 500
	for i, m := range todo {
		m.Status.Trace = trace(b.title, i, len(todo), rows[i], errorJSON(err))
		if definite {
			m.Status.InFlightSince = nil
			b.r.ledger.refused(m)
		}
	}
	switch {
	case errors.Is(err, errSheetGone):
		b.sheetGone(ctx, todo, err, true)
	case errors.Is(err, gsheets.ErrUnauthorized):
		b.refuse(ctx, todo, err, true)
	case outbound.IsTransient(err):
		for _, m := range todo {
			b.transient(ctx, m, fmt.Errorf("append: %w", err))
		}
	default:
		for _, m := range todo {
			b.fail(ctx, m, AppendFailedReason, fmt.Errorf("append: %w", err))
		}
	}
}

// refuse tells the connection's controller that Google refused the
// grant: the connection goes to Error (seed 004 §4 active → error) and
// the syncs wait for a person to connect again.
func (b *batchRun) refuse(_ context.Context, todo []*v1alpha1.SheetSync, err error, counted bool) {
	b.waitForConnection(todo, err, counted, "Google refused the connection's grant; the sync waits for it to be connected again")
	b.r.Connections.Refused(b.b.Key, b.grant, b.now, err)
	if b.r.Recorder != nil {
		b.r.Recorder.Eventf(b.conn, nil, corev1.EventTypeWarning, v1alpha1.ReauthRequiredReason, "Append", "connect again: %s", err.Error())
	}
}

// waitForConnection makes the syncs wait for their connection, not
// counting the attempt (counted: it was counted when it began); the
// connection's watch wakes them when it takes sessions again.
func (b *batchRun) waitForConnection(todo []*v1alpha1.SheetSync, err error, counted bool, why string) {
	b.waiting = true
	for _, m := range todo {
		if counted {
			m.Status.Attempts--
		}
		m.Status.Phase, m.Status.LastError = v1alpha1.SyncPending, err.Error()
		status.MarkRetrying(m, v1alpha1.DependencyNotReadyReason, why)
	}
}

// transient schedules the next try of a sync whose attempt (already
// counted in status.attempts) may succeed later, on the sync's own
// schedule: Retries (1, 2, 4 … 64 s, never sooner than Retry-After) while
// it lasts, then Recheck (1 h doubling to 24 h), as SlideStock rechecks
// its exhausted stocks. A sync is never Failed for an upstream in
// trouble: the first recheck sends the RetriesExhausted Warning Event (a
// person may look), and the sync keeps going by itself.
func (b *batchRun) transient(ctx context.Context, m *v1alpha1.SheetSync, err error) {
	n := int(m.Status.Attempts)
	retries := b.r.Retries
	reason, msg := v1alpha1.UpstreamUnavailableReason, err.Error()
	var delay time.Duration
	if retries.Exhausted(n) {
		k := n - retries.Retries // 1 for the first recheck
		delay = b.r.Recheck.After(k, err)
		reason = v1alpha1.RetriesExhaustedReason
		msg = fmt.Sprintf("%d retries spent; rechecked at %s, then less and less often: %v",
			retries.Retries, b.now.Add(delay).UTC().Format(time.RFC3339), err)
		if k == 1 {
			log.FromContext(ctx).Error(err, "sheet sync retries spent; rechecking on a long backoff", "sheetSync", klog.KObj(m))
			if b.r.Recorder != nil {
				b.r.Recorder.Eventf(m, nil, corev1.EventTypeWarning, v1alpha1.RetriesExhaustedReason, "Append", "session %s: %s", m.Spec.Session.ID, msg)
			}
		}
	} else {
		delay = retries.After(max(n, 1), err)
	}
	// Whole seconds: status keeps no less, and the deadline read back
	// must be the one kept in memory (the connection's next append).
	at := b.now.Add(delay)
	if t := at.Truncate(time.Second); !t.Equal(at) {
		at = t.Add(time.Second)
	}
	delay = at.Sub(b.now)
	next := metav1.NewTime(at)
	m.Status.Phase, m.Status.LastError, m.Status.NextAttemptAt = v1alpha1.SyncPending, err.Error(), &next
	status.MarkRetrying(m, reason, msg)
	b.b.Later(m, delay)
	if m == b.obj {
		b.objErr, b.objReason, b.objDelay = errors.New(msg), reason, delay
	}
}

// succeed finishes a sync whose session is in the sheet at row, with
// the reason and message of its Ready condition.
func (b *batchRun) succeed(m *v1alpha1.SheetSync, row int64, rng, reason, msg string) {
	st := &m.Status
	st.InFlightSince, st.RowNumber, st.UpdatedRange = nil, row, rng
	b.b.Succeeded(m, reason, msg)
}

// fail finishes a sync as Failed: a Warning Event and one log line, with
// the sync's key and the reason.
func (b *batchRun) fail(ctx context.Context, m *v1alpha1.SheetSync, reason string, err error) {
	b.b.Failed(m, reason, err)
	log.FromContext(ctx).Error(err, "sheet sync failed", "sheetSync", klog.KObj(m), "reason", reason)
	if b.r.Recorder != nil {
		b.r.Recorder.Eventf(m, nil, corev1.EventTypeWarning, reason, "Append", "session %s: %s", m.Spec.Session.ID, err.Error())
	}
	b.failed++
}

// without is all but drop, in order.
func without(all, drop []*v1alpha1.SheetSync) []*v1alpha1.SheetSync {
	if len(drop) == 0 {
		return all
	}
	out := make([]*v1alpha1.SheetSync, 0, len(all))
	for _, m := range all {
		if !slices.Contains(drop, m) {
			out = append(out, m)
		}
	}
	return out
}

// rowRange is a row's range in Google's A1 form, 'Title'!A7:F7.
func rowRange(title string, row int64, width int) string {
	r := strconv.FormatInt(row, 10)
	return gsheets.Range(title, "A"+r+":"+gsheets.ColumnLetters(max(width, 1))+r)
}

func maxColumn(cols map[string]string) string {
	best, bestIdx := "A", 1
	for _, c := range cols {
		if i, err := gsheets.ColumnIndex(c); err == nil && i > bestIdx {
			best, bestIdx = c, i
		}
	}
	return best
}

// traceLimit keeps a trace under the CRD's 4096-character bound.
const traceLimit = 4000

// trace is a member's part of an append, and Google's answer, bounded; the
// access token is in neither.
func trace(title string, i, n int, row []any, response string) *v1alpha1.AppendTrace {
	req, _ := json.Marshal(map[string]any{
		"range": gsheets.Range(title, "A1"), "valueInputOption": "RAW", "insertDataOption": "INSERT_ROWS",
		"values": [][]any{row}, "rowInBatch": fmt.Sprintf("%d of %d", i+1, n),
	})
	return &v1alpha1.AppendTrace{Request: cut(string(req)), Response: cut(response)}
}

func errorJSON(err error) string {
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	return string(b)
}

// cut bounds s to traceLimit characters.
func cut(s string) string {
	if utf8.RuneCountInString(s) <= traceLimit {
		return s
	}
	r := []rune(s)
	return string(r[:traceLimit-1]) + "…"
}
