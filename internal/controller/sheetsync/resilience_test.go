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

package sheetsync_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetsync"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/gsheets"
)

// withSchedule rebuilds the fixture's SheetSync controller with the
// production retry schedule (1, 2, 4 … 64 s, seven retries, ±10 %).
func (f *fixture) withSchedule(t *testing.T) {
	t.Helper()
	f.syncs = (&sheetsync.Reconciler{Client: cached, OAuth: f.engine, Sheets: sheets, Recorder: f.rec, Clock: f.clock,
		Retries: sheetsync.DefaultRetries, Connections: f.reports}).Runner()
}

// queue reconciles objects as the controllers' work queues would, on the
// fake clock: each object when the RequeueAfter of its last reconcile has
// passed. An object that asks for nothing is not reconciled again. Every
// unfinished sync is also reconciled whenever the clock moves, which a
// correct controller must shrug off (the batch wakes its members, watches
// fire): an early reconcile may not spend an attempt.
type queue struct {
	f     *fixture
	syncs map[string]time.Time // name → when due
	conn  time.Time            // zero: not queued
}

func (f *fixture) queue() *queue { return &queue{f: f, syncs: map[string]time.Time{}} }

func (q *queue) add(name string) { q.syncs[name] = q.f.clock.Now() }

// run steps the clock from due time to due time until stop says so or
// the clock passes until, and calls check after every step.
func (q *queue) run(t *testing.T, until time.Time, stop func() bool, check func()) {
	t.Helper()
	for !stop() {
		now := q.f.clock.Now()
		if !q.conn.IsZero() && !q.conn.After(now) {
			q.conn = q.at(q.f.reconcileConn(t))
		}
		for name := range q.syncs {
			s := q.f.sync(t, name)
			if s.Status.Phase == v1alpha1.SyncSucceeded || s.Status.Phase == v1alpha1.SyncFailed {
				delete(q.syncs, name)
				continue
			}
			if q.syncs[name].After(now) {
				// Not asked for yet: the early reconcile a watch could bring.
				q.f.reconcileSync(t, name)
				continue
			}
			q.syncs[name] = q.at(q.f.reconcileSync(t, name))
		}
		check()
		next := time.Time{}
		for _, d := range q.syncs {
			if d.After(now) && (next.IsZero() || d.Before(next)) {
				next = d
			}
		}
		if q.conn.After(now) && (next.IsZero() || q.conn.Before(next)) {
			next = q.conn
		}
		if next.IsZero() || next.After(until) {
			return
		}
		q.f.clock.SetTime(next)
	}
}

// at is when a reconcile's result asks to be looked at again (zero: never).
func (q *queue) at(res ctrl.Result) time.Time {
	if res.RequeueAfter <= 0 {
		return time.Time{}
	}
	return q.f.clock.Now().Add(res.RequeueAfter)
}

// Issue 18 item 10: another program of the same Google account holds its
// 60 writes a minute for 90 s. Every session keeps its own schedule of
// 1, 2, 4 … 64 s (about 127 s in all) however often its batch mates are
// tried, so none runs out of retries, and all are written once the quota
// is free.
func TestEachSessionKeepsItsOwnRetryScheduleWhileTheQuotaIsHeld(t *testing.T) {
	const sub = "110169484474386270010"
	f := newFixtureOf(t, sub, "Log", nil)
	f.withSchedule(t)
	f.active(t)
	start := f.clock.Now()
	// https://developers.google.com/sheets/api/limits: 60 write requests a
	// minute per user per project, 429 RESOURCE_EXHAUSTED beyond.
	sheetsEm.SpendWriteQuota(sub, start.Add(90*time.Second))
	q := f.queue()
	q.add(f.post(t, session("early", 0)))
	late := ""
	check := func() {
		for _, s := range f.syncsOf(t) {
			if s.Status.Phase == v1alpha1.SyncFailed {
				t.Fatalf("session %s Failed at +%s: %s", s.Spec.Session.ID, f.clock.Now().Sub(start), s.Status.LastError)
			}
		}
	}
	// The first 30 s: only "early" is there.
	q.run(t, start.Add(30*time.Second), func() bool { return false }, check)
	f.clock.SetTime(start.Add(30 * time.Second))
	late = f.post(t, session("late", 5))
	q.add(late)
	done := func() bool {
		for _, s := range f.syncsOf(t) {
			if s.Status.Phase != v1alpha1.SyncSucceeded {
				return false
			}
		}
		return true
	}
	q.run(t, start.Add(5*time.Minute), done, check)
	if !done() {
		t.Fatalf("not all written after 5 minutes: %+v", f.syncsOf(t))
	}
	for _, s := range f.syncsOf(t) {
		// One attempt and at most seven retries each: its own schedule.
		if s.Status.Attempts > 8 {
			t.Errorf("session %s took %d attempts, more than 1 + %d retries", s.Spec.Session.ID, s.Status.Attempts, sheetsync.DefaultRetries.Retries)
		}
	}
	if got := len(f.data()); got != 2 {
		t.Fatalf("%d rows, want 2: %v", got, f.data())
	}
	if at := f.sync(t, timesheet.SyncName("timesheet", "early")).Status.CompletedAt.Sub(start); at < 90*time.Second {
		t.Fatalf("written at +%s, while the quota was held", at)
	}
}

// Issue 18 item 16: during an outage of Google Sheets every call backs
// off: the appends, the look-up of a session whose append may have been
// written, and the connection's reads of the spreadsheet and row 1.
func TestEveryCallBacksOffDuringAnOutage(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.withSchedule(t)
	f.active(t)
	start := f.clock.Now()
	for _, route := range []string{sandbox.SheetsGet, sandbox.SheetsValuesGet, sandbox.SheetsValuesAppend} {
		box.SetFault(route, sandbox.Fault{Status: http.StatusServiceUnavailable})
		t.Cleanup(func() { box.ClearFault(route) })
	}
	calls := func() int {
		return box.Calls(sandbox.SheetsGet) + box.Calls(sandbox.SheetsValuesGet) + box.Calls(sandbox.SheetsValuesAppend)
	}
	before := calls()
	q := f.queue()
	q.add(f.post(t, session("outage", 0)))
	q.conn = start // a forced reconcile of the connection: row 1 is read again
	q.run(t, start.Add(2*time.Minute), func() bool { return false }, func() {})
	// Two callers (the sync, the connection), each on a schedule of
	// 1, 2, 4, 8 … seconds: seven tries or fewer each in two minutes.
	if n := calls() - before; n > 16 {
		t.Fatalf("%d calls to Sheets in two minutes of 503s (%d values.get), want at most 16", n, box.Calls(sandbox.SheetsValuesGet))
	}
	if s := f.sync(t, timesheet.SyncName("timesheet", "outage")); s.Status.Phase == v1alpha1.SyncFailed {
		t.Fatalf("Failed by an outage: %+v", s.Status)
	}
}

// Issue 18 item 9: a connection that selects its sheet by id follows a
// renamed tab: the append refused for the old title ("Unable to parse
// range") finds the new one and is made again at once, and the session is
// written. Selected by title, the renamed tab is gone: the session waits,
// it is not Failed.
func TestARenamedTab(t *testing.T) {
	t.Run("selected by id, the append follows it", func(t *testing.T) {
		id := int64(7001)
		f := newFixture(t, "Log", func(c *v1alpha1.SheetConnection) { c.Spec.Sheet = v1alpha1.SheetSelector{ID: &id} })
		f.active(t)
		if err := sheetsEm.RenameSheet(f.spreadsheet, id, "Log 2026"); err != nil {
			t.Fatal(err)
		}
		name := f.post(t, session("renamed", 0))
		f.reconcileSync(t, name)
		reads := box.Calls(sandbox.SheetsValuesGet)
		f.reconcileConn(t) // the connection's controller records the rename
		if box.Calls(sandbox.SheetsValuesGet) != reads+1 {
			t.Fatal("row 1 of the renamed tab was not read again")
		}
		s := f.sync(t, name)
		rows := sheetsEm.Rows(f.spreadsheet, "Log 2026")
		if s.Status.Phase != v1alpha1.SyncSucceeded || len(rows) != 2 || s.Status.RowNumber != 2 || !strings.HasPrefix(s.Status.UpdatedRange, "'Log 2026'!") {
			t.Fatalf("not written to the renamed tab: %+v\nrows %v", s.Status, rows)
		}
		c := f.connection(t)
		if c.Status.SheetTitle != "Log 2026" || condition(c.Status.Conditions, v1alpha1.ReadyCondition).Message != "Active: appending to 'Log 2026' of spreadsheet "+f.spreadsheet {
			t.Fatalf("the connection did not follow the rename: %+v", c.Status)
		}
	})
	t.Run("selected by title, the session waits", func(t *testing.T) {
		f := newFixture(t, "Log", nil)
		f.active(t)
		if err := sheetsEm.RenameSheet(f.spreadsheet, 7001, "Log 2026"); err != nil {
			t.Fatal(err)
		}
		name := f.post(t, session("orphan", 0))
		f.reconcileSync(t, name)
		f.reconcileConn(t) // the connection's controller records the sheet gone
		s := f.sync(t, name)
		c := f.connection(t)
		if s.Status.Phase != v1alpha1.SyncPending || s.Status.Attempts != 0 ||
			condition(s.Status.Conditions, v1alpha1.ReadyCondition).Reason != v1alpha1.DependencyNotReadyReason {
			t.Fatalf("sync %+v", s.Status)
		}
		if condition(c.Status.Conditions, v1alpha1.HeaderValidCondition).Reason != sheetconnection.SheetNotFoundReason || !strings.Contains(strings.Join(f.rec.All(), "\n"), "Warning SheetNotFound") {
			t.Fatalf("connection %+v", c.Status)
		}
		// Renamed back, the connection's next read resumes it.
		if err := sheetsEm.RenameSheet(f.spreadsheet, 7001, "Log"); err != nil {
			t.Fatal(err)
		}
		f.clock.Step(sheetconnection.HeaderRecheck)
		f.reconcileConn(t)
		f.cachedSees(t, &v1alpha1.SheetSync{}, name, nil)
		f.reconcileSync(t, name)
		if s := f.sync(t, name); s.Status.Phase != v1alpha1.SyncSucceeded || len(f.data()) != 1 {
			t.Fatalf("not written once the tab was back: %+v", s.Status)
		}
	})
}

// Issue 18 item 11: without an id column, an append Google wrote but
// answered 503 is found in the sheet by the session's title, start, end
// and duration, and not written twice.
func TestAnAppendWrittenButAnswered503IsNotWrittenTwiceWithoutAnIDColumn(t *testing.T) {
	f := newFixture(t, "Log", func(c *v1alpha1.SheetConnection) { delete(c.Spec.ColumnMapping, "id") })
	f.active(t)
	sheetsEm.FailAppendsAfterWrite(1)
	t.Cleanup(func() { sheetsEm.FailAppendsAfterWrite(0) })
	// Another session with the same title in the sheet, and one written
	// before with the same start and end under another title: neither is
	// this session.
	same := session("lost", 0)
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	serial := func(ms int64) string {
		return strconv.FormatFloat(gsheets.Serial(time.UnixMilli(ms), tokyo), 'f', -1, 64)
	}
	for i, r := range [][]string{
		{same.Title, "1", "2", "1500"},
		{"another title", serial(same.StartedAt), serial(same.EndedAt), "1500"},
	} {
		if err := sheetsEm.SetRow(f.spreadsheet, "Log", 2+i, r...); err != nil {
			t.Fatal(err)
		}
	}
	name := f.post(t, same)
	res := f.reconcileSync(t, name)
	if s := f.sync(t, name); s.Status.Phase != v1alpha1.SyncPending || s.Status.InFlightSince == nil || len(f.data()) != 3 {
		t.Fatalf("after the 503: %+v, rows %v", s.Status, f.data())
	}
	f.clock.Step(res.RequeueAfter)
	f.cachedSees(t, &v1alpha1.SheetSync{}, name, func(o client.Object) bool { return o.(*v1alpha1.SheetSync).Status.LastError != "" })
	f.reconcileSync(t, name)
	s := f.sync(t, name)
	if len(f.data()) != 3 || s.Status.Phase != v1alpha1.SyncSucceeded || s.Status.RowNumber != 4 ||
		condition(s.Status.Conditions, v1alpha1.ReadyCondition).Reason != sheetsync.RecoveredReason {
		t.Fatalf("written twice or not recovered: rows %v\n%+v", f.data(), s.Status)
	}
	// A session whose lost append Google did not write is appended.
	other := f.post(t, session("never-written", 30))
	s = f.sync(t, other)
	at := s.CreationTimestamp
	s.Status.InFlightSince, s.Status.Attempts = &at, 1
	if err := env.Client.Status().Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	f.cachedSees(t, &v1alpha1.SheetSync{}, other, func(o client.Object) bool { return o.(*v1alpha1.SheetSync).Status.InFlightSince != nil })
	f.clock.Step(sheetsync.Pace)
	f.reconcileSync(t, other)
	if s := f.sync(t, other); s.Status.Phase != v1alpha1.SyncSucceeded || s.Status.RowNumber != 5 || len(f.data()) != 4 {
		t.Fatalf("%+v rows %v", s.Status, f.data())
	}
}

// syncsOf lists the fixture's SheetSyncs from the API server.
func (f *fixture) syncsOf(t *testing.T) []v1alpha1.SheetSync {
	t.Helper()
	var list v1alpha1.SheetSyncList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// staleCache answers for one SheetSync with a copy read earlier, as the
// cache of a manager that has not seen the last writes yet (a new leader,
// a slow informer): pending, in the connection's pending index.
type staleCache struct{ testenv.StaleReads }

func (s staleCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := s.StaleReads.List(ctx, list, opts...); err != nil {
		return err
	}
	if l, ok := list.(*v1alpha1.SheetSyncList); ok {
		stale := s.Stale.(*v1alpha1.SheetSync)
		l.Items = slices.DeleteFunc(l.Items, func(s2 v1alpha1.SheetSync) bool { return s2.UID == stale.UID })
		l.Items = append(l.Items, *stale.DeepCopy())
	}
	return nil
}

// Exactly once across managers: a manager whose cache still shows an
// appended session pending (nothing of it remembered: another process
// appended it) does not append it again. The session was unfinished at
// its first batch, so it is looked up in the sheet first, and found.
func TestAStaleCopyOfAnAppendedSessionIsNotAppendedAgain(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	name := f.post(t, session("once", 0))
	stale := f.sync(t, name)
	f.reconcileSync(t, name)
	if s := f.sync(t, name); s.Status.Phase != v1alpha1.SyncSucceeded || len(f.data()) != 1 {
		t.Fatalf("not appended: %+v", s.Status)
	}
	appends := box.Calls(sandbox.SheetsValuesAppend)
	other := (&sheetsync.Reconciler{Client: staleCache{testenv.StaleReads{Client: cached, Stale: stale}}, OAuth: f.engine, Sheets: sheets, Recorder: f.rec,
		Clock: f.clock, Connections: f.reports}).Runner()
	f.clock.Step(sheetsync.Pace)
	res, err := other.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: f.ns, Name: name}})
	if err != nil {
		t.Fatal(err)
	}
	s := f.sync(t, name)
	if box.Calls(sandbox.SheetsValuesAppend) != appends || len(f.data()) != 1 {
		t.Fatalf("appended again from a stale copy: rows %v", f.data())
	}
	if s.Status.Phase != v1alpha1.SyncSucceeded || s.Status.RowNumber != 2 || s.Status.Attempts != 1 ||
		condition(s.Status.Conditions, v1alpha1.ReadyCondition).Status != metav1.ConditionTrue || res.RequeueAfter <= 0 {
		t.Fatalf("the stale copy changed the sync: %+v (requeue %s)", s.Status, res.RequeueAfter)
	}
}

// refusingStatus refuses every SheetSync status write while refuse is set,
// as an API server that cannot be reached right after an append.
type refusingStatus struct {
	client.Client
	refuse *atomic.Bool
}

func (c refusingStatus) Status() client.SubResourceWriter {
	return refusingWriter{SubResourceWriter: c.Client.Status(), refuse: c.refuse}
}

type refusingWriter struct {
	client.SubResourceWriter
	refuse *atomic.Bool
}

func (w refusingWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if _, ok := obj.(*v1alpha1.SheetSync); ok && w.refuse.Load() {
		return apierrors.NewServiceUnavailable("refused by the test")
	}
	return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// An append costs no status write before Google is called; a session
// whose status could not be written after its append is not one the
// ledger knows to be absent, so it is looked up in the sheet before it
// would be appended again: found, it keeps its row.
func TestASessionWhoseStatusWriteFailedAfterItsAppendIsNotAppendedTwice(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	var refuse atomic.Bool
	run := (&sheetsync.Reconciler{Client: refusingStatus{Client: cached, refuse: &refuse}, OAuth: f.engine, Sheets: sheets,
		Recorder: f.rec, Clock: f.clock, Connections: f.reports}).Runner()
	reconcile := func(name string) {
		_, _ = run.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: f.ns, Name: name}})
	}
	// A first session, written as usual.
	first := f.post(t, session("first", 0))
	reconcile(first)
	if s := f.sync(t, first); s.Status.Phase != v1alpha1.SyncSucceeded {
		t.Fatalf("first: %+v", s.Status)
	}
	second := f.post(t, session("second", 10))
	f.cachedSees(t, &v1alpha1.SheetSync{}, second, nil)
	f.clock.Step(sheetsync.Pace)
	appends := box.Calls(sandbox.SheetsValuesAppend)
	refuse.Store(true)
	reconcile(second)
	refuse.Store(false)
	if box.Calls(sandbox.SheetsValuesAppend) != appends+1 || len(f.data()) != 2 {
		t.Fatalf("second not appended: rows %v", f.data())
	}
	if s := f.sync(t, second); s.Status.Phase == v1alpha1.SyncSucceeded || s.Status.InFlightSince != nil || s.Status.Attempts != 0 {
		t.Fatalf("a status write reached the API server: %+v", s.Status)
	}
	f.clock.Step(sheetsync.Pace)
	reconcile(second)
	s := f.sync(t, second)
	if box.Calls(sandbox.SheetsValuesAppend) != appends+1 || len(f.data()) != 2 {
		t.Fatalf("appended twice: rows %v", f.data())
	}
	if s.Status.Phase != v1alpha1.SyncSucceeded || s.Status.RowNumber != 3 || condition(s.Status.Conditions, v1alpha1.ReadyCondition).Reason != sheetsync.RecoveredReason {
		t.Fatalf("not recovered with its row: %+v", s.Status)
	}
}
