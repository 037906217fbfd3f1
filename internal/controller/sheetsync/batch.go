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
	"sort"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/gsheets"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/runner"
	"github.com/switchboard-dev/switchboard/internal/status"
	"github.com/switchboard-dev/switchboard/internal/timesheet"
)

// No session is appended twice by this process: batches read SheetSyncs
// from the informer cache, which may lag the writes of the batch before,
// so one batch runs at a time per connection (a lock), and the UIDs a
// batch finished are remembered until the cache shows them finished (the
// expectations a ReplicaSet controller keeps). Only the leader runs
// controllers, so the memory is the only writer's. Across processes, the
// in-flight mark written before Google is called is what tells a new
// leader that a row may already be there.

// Reasons of SheetSync conditions.
const (
	// AppendFailedReason: Google refused the append for good (a 4xx other
	// than 401/403/429), or the sheet is gone.
	AppendFailedReason = "AppendFailed"
	// RecoveredReason: a sync found in flight after a restart was found in
	// the id column: its row was written before the crash.
	RecoveredReason = "Recovered"
)

// finish is what the memory keeps of a sync a batch finished.
type finish struct {
	at     time.Time
	failed bool
}

// defaultRetention applies when the connection is gone.
const defaultRetention = 24 * time.Hour

// retry starts a Failed sync again when a person asks (seed 004 §4: a
// failed log can be re-synced from the UI), with the requested-at
// annotation; a Pending one waiting for its next try is tried at once,
// with its schedule started over.
func (r *Reconciler) retry(_ context.Context, obj *v1alpha1.SheetSync, run *runner.Run) runner.Outcome {
	waiting := obj.Status.Phase == v1alpha1.SyncPending && obj.Status.NextAttemptAt != nil
	if !run.Requested || (obj.Status.Phase != v1alpha1.SyncFailed && !waiting) {
		return runner.Continue()
	}
	r.finished.Delete(obj.UID)
	st := &obj.Status
	st.Phase, st.Attempts, st.CompletedAt, st.NextAttemptAt = v1alpha1.SyncPending, 0, nil, nil
	status.MarkReconciling(obj, "RetryRequested", "a person asked for another try; last failure: "+st.LastError)
	return runner.Continue()
}

// collect deletes a Succeeded sync once its retention has passed; a
// Failed one stays until a person retries or deletes it.
func (r *Reconciler) collect(ctx context.Context, obj *v1alpha1.SheetSync, run *runner.Run) runner.Outcome {
	var done finish
	switch obj.Status.Phase {
	case v1alpha1.SyncSucceeded:
		done = finish{at: obj.Status.CompletedAt.Time}
		r.finished.Delete(obj.UID) // the cache has caught up
	case v1alpha1.SyncFailed:
		r.finished.Delete(obj.UID)
		return runner.Done()
	default:
		v, ok := r.finished.Load(obj.UID)
		if !ok {
			return runner.Continue()
		}
		done = v.(finish) // finished by a batch; the cache lags
		if done.failed {
			return runner.Done()
		}
	}
	retention := defaultRetention
	c := &v1alpha1.SheetConnection{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.ConnectionRef.Name}, c); err == nil {
		retention = c.Spec.SyncRetention.Duration
	}
	out := runner.DeleteAfter(ctx, r.Client, obj, done.at, retention, run.Now)
	if out.IsDone() {
		r.finished.Delete(obj.UID)
	}
	return out
}

// waitFor shows why the sync cannot proceed; the connection's watch wakes
// it when that changes.
func waitFor(obj *v1alpha1.SheetSync, why string) runner.Outcome {
	obj.Status.Phase = v1alpha1.SyncPending
	status.MarkRetrying(obj, v1alpha1.DependencyNotReadyReason, why)
	return runner.Wait(DependencyRecheck)
}

// due reports whether m may be tried now: a session waiting out its own
// retry schedule (status.nextAttemptAt) is not, whatever its batch mates
// are doing.
func due(m *v1alpha1.SheetSync, now time.Time) bool {
	return m.Status.NextAttemptAt == nil || !now.Before(m.Status.NextAttemptAt.Time)
}

// batch appends obj and, in the same values.append, the connection's other
// pending syncs that are due.
func (r *Reconciler) batch(ctx context.Context, obj *v1alpha1.SheetSync, run *runner.Run) runner.Outcome {
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.ConnectionRef.Name}
	conn := &v1alpha1.SheetConnection{}
	if err := r.Get(ctx, key, conn); err != nil {
		if apierrors.IsNotFound(err) {
			return waitFor(obj, "connection "+key.Name+" not found")
		}
		return runner.Transient(v1alpha1.DependencyNotReadyReason, fmt.Errorf("read connection %s: %w", key.Name, err))
	}
	if ok, why := timesheet.Accepting(conn); !ok {
		return waitFor(obj, why)
	}
	if !due(obj, run.Now) {
		// Its own schedule; the Ready condition keeps the last failure.
		obj.Status.Phase = v1alpha1.SyncPending
		return runner.Wait(obj.Status.NextAttemptAt.Sub(run.Now))
	}
	cs := r.conn(key)
	if !cs.mu.TryLock() {
		return runner.Wait(BatchBusy)
	}
	defer cs.mu.Unlock()
	if wait := cs.next.Sub(run.Now); wait > 0 {
		obj.Status.Phase = v1alpha1.SyncPending
		return runner.Wait(wait)
	}

	clientKey, tokenKey := oauth.Keys(conn.Namespace, conn.Spec.OAuth)
	tok, err := r.OAuth.Ensure(ctx, gsheets.OAuthProvider, clientKey, tokenKey, conn.Spec.TokenRefreshBefore.Duration, false)
	if err != nil {
		return waitFor(obj, "the connection's grant: "+err.Error())
	}
	members, err := r.pending(ctx, obj, run.Now)
	if err != nil {
		return runner.Transient(v1alpha1.DependencyNotReadyReason, err)
	}
	loc, err := time.LoadLocation(conn.Status.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	b := &batchRun{r: r, now: run.Now, token: tok.AccessToken, grant: tok.Extra[oauth.KeyGrantedAt], conn: conn, obj: obj, run: run,
		title: conn.Status.SheetTitle, loc: loc, patchers: map[types.UID]*status.Patcher{}}
	for _, m := range members {
		if m != obj {
			b.patchers[m.UID] = status.NewPatcher(r.Client, m)
		}
	}
	b.append(ctx, members)
	cs.next = b.now.Add(max(Pace, b.retryIn))
	b.write(ctx, members)
	r.Counters().Add(key, status.Tally{Done: int64(b.appended), Failed: int64(b.failed), Last: b.lastAppend})
	for _, l := range b.later {
		// Members left pending by a throttled or failed call come back
		// when their own schedule says, as obj does.
		if l.m != obj {
			m := l.m
			time.AfterFunc(l.after, func() { r.wakeLater(m) })
		}
	}
	switch {
	case obj.Status.CompletedAt != nil && obj.Status.Phase == v1alpha1.SyncSucceeded:
		return runner.Wait(max(conn.Spec.SyncRetention.Duration, time.Second)) // then collect
	case obj.Status.CompletedAt != nil:
		return runner.Done()
	case b.waiting:
		return runner.Wait(DependencyRecheck)
	case b.objErr != nil:
		return runner.Retry(b.objReason, b.objErr, b.objDelay)
	}
	return runner.Wait(max(b.retryIn, BatchBusy))
}

// pending lists, from the cache, the connection's unfinished syncs that
// are due, with obj among them, in session order, at most MaxRows.
func (r *Reconciler) pending(ctx context.Context, obj *v1alpha1.SheetSync, now time.Time) ([]*v1alpha1.SheetSync, error) {
	var list v1alpha1.SheetSyncList
	if err := r.List(ctx, &list, client.InNamespace(obj.Namespace), client.MatchingFields{index.PendingSheetSyncs: obj.Spec.ConnectionRef.Name}); err != nil {
		return nil, fmt.Errorf("list syncs of %s: %w", obj.Spec.ConnectionRef.Name, err)
	}
	members := []*v1alpha1.SheetSync{obj}
	for i := range list.Items {
		s := &list.Items[i]
		if _, done := r.finished.Load(s.UID); done || s.UID == obj.UID || s.Status.CompletedAt != nil || !s.DeletionTimestamp.IsZero() || !due(s, now) {
			continue
		}
		members = append(members, s) // the cache's List already copied it
	}
	sort.SliceStable(members, func(i, j int) bool { return sessionLess(members[i], members[j]) })
	if len(members) > MaxRows {
		at := 0
		for i, m := range members {
			if m == obj {
				at = i
			}
		}
		if at >= MaxRows {
			members[MaxRows-1] = obj // obj rides in this batch; the rest wait for the next
		}
		members = members[:MaxRows]
	}
	return members, nil
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

// batchRun is one batch's outcome, computed in memory and then written.
type batchRun struct {
	r     *Reconciler
	now   time.Time
	token string
	grant string
	conn  *v1alpha1.SheetConnection
	obj   *v1alpha1.SheetSync
	run   *runner.Run
	// title is the sheet's title: the connection's, or the new one when
	// the batch found the tab renamed.
	title string
	loc   *time.Location
	// resolved is set once the batch has looked the sheet up again.
	resolved bool
	// patchers hold each other member's status as read, for one write.
	patchers         map[types.UID]*status.Patcher
	appended, failed int
	lastAppend       time.Time
	// retryIn is the shortest wait of the members left pending: the
	// connection's next append waits at least that long.
	retryIn time.Duration
	// later are the members left pending and when each is due.
	later []wakeUp
	// obj's own failure, its reason and its wait.
	objErr    error
	objReason string
	objDelay  time.Duration
	// waiting: the members wait for the connection (Google refused the
	// grant, or the sheet is gone).
	waiting bool
}

type wakeUp struct {
	m     *v1alpha1.SheetSync
	after time.Duration
}

// append writes the batch's rows in one values.append.
func (b *batchRun) append(ctx context.Context, members []*v1alpha1.SheetSync) {
	todo := b.recover(ctx, members)
	if len(todo) == 0 {
		return
	}
	todo = b.markInFlight(ctx, todo)
	if len(todo) == 0 {
		return
	}
	rows := make([][]any, len(todo))
	for i, m := range todo {
		rows[i] = timesheet.Row(m.Spec.Session, b.conn.Status.ResolvedColumns, b.loc)
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
		b.succeed(m, row, rowRange(b.title, row, len(rows[i])), "appended as row "+strconv.FormatInt(row, 10))
		b.appended++
	}
}

// markInFlight records, before Google is called, that each member's append
// is starting. A member whose mark could not be written is left out of
// this append, with its status as it was; if obj's cannot be written the
// batch does not go on.
func (b *batchRun) markInFlight(ctx context.Context, todo []*v1alpha1.SheetSync) []*v1alpha1.SheetSync {
	now := metav1.NewTime(b.now)
	mark := func(m *v1alpha1.SheetSync, write func() error) bool {
		prev := m.Status.DeepCopy()
		m.Status.Phase, m.Status.InFlightSince, m.Status.AttemptedAt = v1alpha1.SyncPending, &now, &now
		m.Status.Attempts++
		status.MarkReconciling(m, "Appending", "appending to the sheet")
		if err := write(); err != nil {
			m.Status = *prev
			return false
		}
		return true
	}
	for _, m := range todo {
		if m == b.obj && !mark(m, func() error { return b.run.Patcher.Patch(ctx, m) }) {
			b.objErr = errors.New("could not record the append in flight; it was not sent")
			b.retryIn = BatchBusy
			return nil
		}
	}
	var (
		mu      sync.Mutex
		dropped []*v1alpha1.SheetSync
	)
	status.Each(statusWriters, todo, func(m *v1alpha1.SheetSync) {
		if m != b.obj && !mark(m, func() error { return b.patchers[m.UID].Patch(ctx, m) }) {
			mu.Lock()
			dropped = append(dropped, m)
			mu.Unlock()
		}
	})
	return without(todo, dropped)
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

// refuse records on the connection that Google refused its grant: it goes
// to Error (seed 004 §4 active → error) and the syncs wait, not counting
// the attempt (counted: it was counted when it began), for a person to
// connect again.
func (b *batchRun) refuse(ctx context.Context, todo []*v1alpha1.SheetSync, err error, counted bool) {
	b.waiting = true
	for _, m := range todo {
		if counted {
			m.Status.Attempts--
		}
		m.Status.Phase, m.Status.LastError = v1alpha1.SyncPending, err.Error()
		status.MarkRetrying(m, v1alpha1.DependencyNotReadyReason, "Google refused the connection's grant; the sync waits for it to be connected again")
	}
	c := b.conn.DeepCopy()
	sheetconnection.Refuse(c, b.grant, b.now, err)
	if perr := b.r.Status().Patch(ctx, c, client.MergeFromWithOptions(b.conn, client.MergeFromWithOptimisticLock{})); perr != nil {
		// The connection controller meets the same refusal at its next
		// call; the syncs wait either way.
		log.FromContext(ctx).Error(perr, "could not mark the connection Error", "sheetConnection", klog.KObj(b.conn))
	}
	if b.r.Recorder != nil {
		b.r.Recorder.Eventf(b.conn, nil, corev1.EventTypeWarning, v1alpha1.ReauthRequiredReason, "Append", "connect again: %s", err.Error())
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
	if b.retryIn == 0 || delay < b.retryIn {
		b.retryIn = delay
	}
	b.later = append(b.later, wakeUp{m: m, after: delay})
	if m == b.obj {
		b.objErr, b.objReason, b.objDelay = errors.New(msg), reason, delay
	}
}

func (b *batchRun) succeed(m *v1alpha1.SheetSync, row int64, rng, msg string) {
	now := metav1.NewTime(b.now)
	st := &m.Status
	st.Phase, st.LastError, st.CompletedAt, st.InFlightSince, st.NextAttemptAt = v1alpha1.SyncSucceeded, "", &now, nil, nil
	st.RowNumber, st.UpdatedRange = row, rng
	status.MarkReady(m, v1alpha1.SucceededReason, msg)
	b.r.finished.Store(m.UID, finish{at: b.now})
}

// fail finishes a sync as Failed: a Warning Event and one log line, with
// the sync's key and the reason.
func (b *batchRun) fail(ctx context.Context, m *v1alpha1.SheetSync, reason string, err error) {
	now := metav1.NewTime(b.now)
	st := &m.Status
	st.Phase, st.LastError, st.CompletedAt, st.NextAttemptAt = v1alpha1.SyncFailed, err.Error(), &now, nil
	status.MarkStalled(m, reason, err.Error())
	log.FromContext(ctx).Error(err, "sheet sync failed", "sheetSync", klog.KObj(m), "reason", reason)
	if b.r.Recorder != nil {
		b.r.Recorder.Eventf(m, nil, corev1.EventTypeWarning, reason, "Append", "session %s: %s", m.Spec.Session.ID, err.Error())
	}
	b.r.finished.Store(m.UID, finish{at: b.now, failed: true})
	b.failed++
}

// write patches the other members' statuses (obj's is the runner's),
// several at once, then wakes the finished ones to be collected after
// their retention. A write that fails forgets the sync: it is looked at
// again, and if it was appended its in-flight mark sends it to the id
// column first.
func (b *batchRun) write(ctx context.Context, members []*v1alpha1.SheetSync) {
	status.Each(statusWriters, members, func(m *v1alpha1.SheetSync) {
		if m == b.obj {
			return
		}
		if err := b.patchers[m.UID].Patch(ctx, m); err != nil {
			if !apierrors.IsNotFound(err) {
				log.FromContext(ctx).Error(err, "sheet sync status not written; it will be looked at again", "sheetSync", klog.KObj(m))
			}
			b.r.finished.Delete(m.UID)
		}
		if m.Status.CompletedAt != nil {
			b.r.wakeLater(m)
		}
	})
}

func without(all, drop []*v1alpha1.SheetSync) []*v1alpha1.SheetSync {
	if len(drop) == 0 {
		return all
	}
	out := make([]*v1alpha1.SheetSync, 0, len(all))
	for _, m := range all {
		keep := true
		for _, d := range drop {
			if m == d {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, m)
		}
	}
	return out
}

func setReason(m *v1alpha1.SheetSync, reason string) {
	if c := status.Get(m, v1alpha1.ReadyCondition); c != nil {
		status.MarkReady(m, reason, c.Message)
	}
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
