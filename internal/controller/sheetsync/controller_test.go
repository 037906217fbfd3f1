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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetsync"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

func TestAConnectionBecomesActiveWithItsColumnsResolved(t *testing.T) {
	f := newFixture(t, "Log", nil)
	res := f.reconcileConn(t)
	c := f.connection(t)
	st := c.Status
	if st.Phase != v1alpha1.ConnectionActive || condition(st.Conditions, v1alpha1.ReadyCondition).Status != metav1.ConditionTrue {
		t.Fatalf("status %+v", st)
	}
	want := map[string]string{"title": "A", "startedAt": "B", "endedAt": "C", "durationSeconds": "D", "id": "E", "project": "F", "tags": "G"}
	if st.SheetID == nil || *st.SheetID != 7001 || st.SheetTitle != "Log" || st.TimeZone != "Asia/Tokyo" || len(st.MissingHeaders) != 0 ||
		!mapsEqual(st.ResolvedColumns, want) {
		t.Fatalf("sheet %+v / %v", st, st.ResolvedColumns)
	}
	if st.GoogleUserID != googleEm.DefaultSubject {
		t.Fatalf("googleUserID %q, want the id_token's sub %q", st.GoogleUserID, googleEm.DefaultSubject)
	}
	if st.IngestPath != timesheet.IngestPath("ingest-token-0123456789abcdef", f.ns, "timesheet") || st.ConnectSecretName == "" {
		t.Fatalf("ingest path %q, connect Secret %q", st.IngestPath, st.ConnectSecretName)
	}
	// The next look: the token refresh 5 minutes before expiry or the
	// header recheck, whichever is sooner (±10 %).
	if res.RequeueAfter <= 0 || res.RequeueAfter > 11*time.Minute {
		t.Fatalf("requeue after %s", res.RequeueAfter)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestAMissingHeaderIsNamedAndRecheckedOnASlowTimer(t *testing.T) {
	f := newFixture(t, "Log", func(c *v1alpha1.SheetConnection) { c.Spec.ColumnMapping["notes"] = "Notes" })
	res := f.reconcileConn(t)
	c := f.connection(t)
	if c.Status.Phase != v1alpha1.ConnectionActive || !slices.Equal(c.Status.MissingHeaders, []string{"Notes"}) ||
		condition(c.Status.Conditions, v1alpha1.ReadyCondition).Status != metav1.ConditionFalse ||
		condition(c.Status.Conditions, v1alpha1.HeaderValidCondition).Reason != sheetconnection.HeadersMissingReason ||
		!strings.Contains(condition(c.Status.Conditions, v1alpha1.ReadyCondition).Message, `"Notes"`) {
		t.Fatalf("status %+v", c.Status)
	}
	if ok, why := timesheet.Accepting(c); ok || !strings.Contains(why, "Notes") {
		t.Fatalf("a connection missing a header takes sessions (%v, %q)", ok, why)
	}
	if res.RequeueAfter < 9*time.Minute || res.RequeueAfter > 11*time.Minute {
		t.Fatalf("recheck after %s, want about %s", res.RequeueAfter, sheetconnection.HeaderRecheck)
	}
	// A person adds the header: the recheck finds it.
	f.settled(t)
	if err := sheetsEm.SetRow(f.spreadsheet, "Log", 1, append(slices.Clone(headerRow), "Notes")...); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(sheetconnection.HeaderRecheck)
	f.reconcileConn(t)
	if c := f.connection(t); len(c.Status.MissingHeaders) != 0 || c.Status.ResolvedColumns["notes"] != "H" ||
		condition(c.Status.Conditions, v1alpha1.ReadyCondition).Status != metav1.ConditionTrue {
		t.Fatalf("after the header was added: %+v", c.Status)
	}
}

var headerRow = []string{"Title", "Started", "Ended", "Seconds", "Session ID", "Project", "Tags"}

func TestWithoutAGrantTheConnectionIsRevokedAndOffersTheConnectLink(t *testing.T) {
	f := newFixture(t, "Log", nil)
	deleteSecret(t, f.ns, "google-token")
	f.reconcileConn(t)
	c := f.connection(t)
	if c.Status.Phase != v1alpha1.ConnectionRevoked || c.Status.ConnectSecretName == "" ||
		condition(c.Status.Conditions, v1alpha1.ReadyCondition).Status == metav1.ConditionTrue {
		t.Fatalf("status %+v", c.Status)
	}
}

func TestGoogleRefusingTheGrantIsErrorUntilANewGrantIsStored(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	// The sheet is unshared; the header recheck finds it (an append would
	// too: TestAnAppendRefusedWith403TurnsTheConnectionToError).
	sheetsEm.SetAccess(f.spreadsheet, "none")
	f.clock.Step(sheetconnection.HeaderRecheck)
	f.reconcileConn(t)
	c := f.connection(t)
	if c.Status.Phase != v1alpha1.ConnectionError || c.Status.RefusedGrant == nil ||
		condition(c.Status.Conditions, v1alpha1.AuthenticatedCondition).Reason != v1alpha1.ReauthRequiredReason ||
		condition(c.Status.Conditions, v1alpha1.StalledCondition).Status != metav1.ConditionTrue {
		t.Fatalf("status %+v", c.Status)
	}
	// Sharing the sheet again does not leave Error by itself: the same
	// grant was refused, a person must connect again (seed 004 §4).
	sheetsEm.SetAccess(f.spreadsheet, "writer")
	f.clock.Step(time.Minute)
	f.reconcileConn(t)
	if c := f.connection(t); c.Status.Phase != v1alpha1.ConnectionError {
		t.Fatalf("left Error without a new grant: %+v", c.Status)
	}
	// The OAuth callback stores a new grant.
	store := &oauth.Store{Reader: env.Client, Writer: env.Client}
	tok := oauth.Token{RefreshToken: googleEm.IssueRefreshToken("sheet-client", grantScope),
		Extra: map[string]string{oauth.KeyGrantedAt: f.clock.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)}}
	if err := store.SaveConnected(context.Background(), types2(f.ns, "google-token"), tok, ""); err != nil {
		t.Fatal(err)
	}
	f.reconcileConn(t)
	if c := f.connection(t); c.Status.Phase != v1alpha1.ConnectionActive || c.Status.RefusedGrant != nil {
		t.Fatalf("a new grant did not make it Active: %+v", c.Status)
	}
}

// The token is refreshed 5 minutes before it expires (seed 004 §5), begun
// the refresh lead (grant.RefreshLead: a minute for 5 minutes) earlier, so
// that connections falling due together each keep their 5 minutes.
func TestTheTokenIsRefreshedFiveMinutesBeforeItExpires(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	exp := f.connection(t).Status.TokenExpiresAt.Time
	begin := exp.Add(-5*time.Minute - grant.RefreshLead(5*time.Minute))
	calls := box.Calls(sandbox.GoogleOAuthToken)
	f.clock.SetTime(begin.Add(-time.Second))
	f.reconcileConn(t)
	if box.Calls(sandbox.GoogleOAuthToken) != calls {
		t.Fatal("refreshed more than 5 minutes and the lead before expiry")
	}
	f.clock.SetTime(begin)
	f.reconcileConn(t)
	if box.Calls(sandbox.GoogleOAuthToken) != calls+1 || !f.connection(t).Status.TokenExpiresAt.After(exp) {
		t.Fatal("not refreshed 5 minutes and the lead before expiry")
	}
}

// The sheet and its row 1 are read again only when the last read may no
// longer stand: the header recheck is due, the spec changed, a person
// requested a reconcile, or a new grant was stored. Any other reconcile
// (a token refresh, an append's tally) costs Google no call, and a
// recheck that finds the sheet as it was writes nothing.
func TestTheSheetIsReadAgainOnlyWhenTheLastReadMayNoLongerStand(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	lastRead := f.clock.Now()
	reads := func() int { return box.Calls(sandbox.SheetsGet) + box.Calls(sandbox.SheetsValuesGet) }
	ctx := context.Background()
	step := func(name string, change func(), wantReads int) *v1alpha1.SheetConnection {
		t.Helper()
		before := reads()
		change()
		res := f.reconcileConn(t)
		c := f.connection(t)
		if got := reads() - before; got != wantReads {
			t.Fatalf("%s: %d Google reads, want %d", name, got, wantReads)
		}
		if wantReads > 0 {
			lastRead = f.clock.Now()
		}
		if c.Status.Phase != v1alpha1.ConnectionActive || condition(c.Status.Conditions, v1alpha1.ReadyCondition).Status != metav1.ConditionTrue {
			t.Fatalf("%s: not Active: %+v", name, c.Status)
		}
		// The next look is the header recheck at the latest (the runner
		// adds up to a second to spread objects due together).
		if next, due := f.clock.Now().Add(res.RequeueAfter), lastRead.Add(sheetconnection.HeaderRecheck); next.After(due.Add(time.Second)) {
			t.Fatalf("%s: next reconcile at %s, the header recheck is due at %s", name, next, due)
		}
		return c
	}
	step("a reconcile a minute later", func() { f.clock.Step(time.Minute) }, 0)
	step("the token refreshed", func() {
		exp := f.connection(t).Status.TokenExpiresAt.Time
		f.clock.SetTime(exp.Add(-5*time.Minute - grant.RefreshLead(5*time.Minute)))
	}, 2)
	tokens := box.Calls(sandbox.GoogleOAuthToken)
	before := step("a reconcile within the recheck after it", func() { f.clock.Step(sheetconnection.HeaderRecheck - time.Minute) }, 0)
	if box.Calls(sandbox.GoogleOAuthToken) != tokens {
		t.Fatal("the grant was refreshed again")
	}
	if after := step("the header recheck due", func() { f.clock.Step(time.Minute) }, 2); after.ResourceVersion != before.ResourceVersion {
		t.Fatalf("a recheck that found the sheet as it was wrote status: %+v", after.Status)
	}
	step("the spec changed", func() {
		c := f.connection(t)
		c.Spec.ColumnMapping["title"] = "A"
		if err := env.Client.Update(ctx, c); err != nil {
			t.Fatal(err)
		}
		f.cachedSees(t, &v1alpha1.SheetConnection{}, "timesheet", func(o client.Object) bool { return o.GetGeneration() == c.Generation })
	}, 2)
	step("the same spec again", func() { f.clock.Step(time.Second) }, 0)
	step("a reconcile requested", func() {
		c := f.connection(t)
		c.Annotations = map[string]string{v1alpha1.RequestedAtAnnotation: "now-1"}
		if err := env.Client.Update(ctx, c); err != nil {
			t.Fatal(err)
		}
		f.cachedSees(t, &v1alpha1.SheetConnection{}, "timesheet", func(o client.Object) bool { return o.GetResourceVersion() == c.ResourceVersion })
	}, 2)
	step("a new grant stored", func() {
		store := &oauth.Store{Reader: env.Client, Writer: env.Client}
		tok := oauth.Token{RefreshToken: googleEm.IssueRefreshToken("sheet-client", grantScope),
			Extra: map[string]string{oauth.KeyGrantedAt: f.clock.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)}}
		if err := store.SaveConnected(ctx, types2(f.ns, "google-token"), tok, ""); err != nil {
			t.Fatal(err)
		}
	}, 2)
	step("nothing changed", func() { f.clock.Step(time.Second) }, 0)
}

func TestSuspendRevokesTheGrantAtGoogleAndPendingSyncsWait(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	name := f.post(t, session("s1", 0))
	revokes := box.Calls(sandbox.GoogleOAuthRevoke)
	c := f.connection(t)
	patch := client.MergeFrom(c.DeepCopy())
	c.Spec.Suspend = true
	if err := env.Client.Patch(context.Background(), c, patch); err != nil {
		t.Fatal(err)
	}
	f.cachedSees(t, &v1alpha1.SheetConnection{}, "timesheet", func(o client.Object) bool { return o.(*v1alpha1.SheetConnection).Spec.Suspend })
	f.reconcileConn(t)
	c = f.connection(t)
	if c.Status.Phase != v1alpha1.ConnectionRevoked || box.Calls(sandbox.GoogleOAuthRevoke) != revokes+1 || secretExists(t, f.ns, "google-token") {
		t.Fatalf("suspend did not disconnect: %+v, revokes %d", c.Status, box.Calls(sandbox.GoogleOAuthRevoke)-revokes)
	}
	if _, err := f.engine.Ensure(context.Background(), gsheetsProvider(), types2(f.ns, "google-client"), types2(f.ns, "google-token"), time.Minute, true); err == nil {
		t.Fatal("the grant still refreshes after a disconnect")
	}
	f.settled(t)
	appends := box.Calls(sandbox.SheetsValuesAppend)
	f.reconcileSync(t, name)
	if s := f.sync(t, name); s.Status.Phase != v1alpha1.SyncPending || box.Calls(sandbox.SheetsValuesAppend) != appends ||
		condition(s.Status.Conditions, v1alpha1.ReadyCondition).Reason != v1alpha1.DependencyNotReadyReason {
		t.Fatalf("a sync of a Revoked connection was appended: %+v", s.Status)
	}
}

func TestDeletingAConnectionRevokesItsGrant(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	revokes := box.Calls(sandbox.GoogleOAuthRevoke)
	if err := env.Client.Delete(context.Background(), f.connection(t)); err != nil {
		t.Fatal(err)
	}
	f.cachedSees(t, &v1alpha1.SheetConnection{}, "timesheet", func(o client.Object) bool { return !o.GetDeletionTimestamp().IsZero() })
	f.reconcileConn(t)
	if !apierrors.IsNotFound(env.Client.Get(context.Background(), f.key, &v1alpha1.SheetConnection{})) || box.Calls(sandbox.GoogleOAuthRevoke) != revokes+1 {
		t.Fatal("deletion did not revoke the grant before the finalizer went")
	}
}

func TestPendingSyncsAreOneAppendInSessionOrder(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	names := []string{f.post(t, session("late", 30)), f.post(t, session("early", 0)), f.post(t, session("middle", 10))}
	appends := box.Calls(sandbox.SheetsValuesAppend)
	f.reconcileSync(t, names[0])
	if got := box.Calls(sandbox.SheetsValuesAppend) - appends; got != 1 {
		t.Fatalf("%d appends for three pending syncs, want 1", got)
	}
	rows := f.data()
	if len(rows) != 3 || rows[0][0] != "work early" || rows[1][0] != "work middle" || rows[2][0] != "work late" {
		t.Fatalf("rows %v", rows)
	}
	for i, name := range []string{names[1], names[2], names[0]} {
		s := f.sync(t, name)
		if s.Status.Phase != v1alpha1.SyncSucceeded || s.Status.RowNumber != int64(i+2) || s.Status.InFlightSince != nil ||
			s.Status.LastError != "" || s.Status.Attempts != 1 || s.Status.Trace == nil || !strings.Contains(s.Status.UpdatedRange, "'Log'!A") {
			t.Fatalf("sync %s: %+v", name, s.Status)
		}
	}
	// The connection's controller counts them.
	f.reconcileConn(t)
	if c := f.connection(t); c.Status.RowsAppended != 3 || c.Status.SyncFailures != 0 || c.Status.LastAppendAt == nil {
		t.Fatalf("counters: %d appended, %d failed, last %v", c.Status.RowsAppended, c.Status.SyncFailures, c.Status.LastAppendAt)
	}
	// The row as mapped: session id in E, tags joined in G, a serial
	// date-time in B (2026-11-22 10:00 in Tokyo is 46348 + 10/24).
	r := rows[0]
	if r[4] != "early" || r[5] != "p" || r[6] != "a, b" || r[3] != "1500" || !strings.HasPrefix(r[1], "46348.41") {
		t.Fatalf("row %q", r)
	}
}

func TestAFormulaTitleIsStoredAsText(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	s := session("f1", 0)
	s.Title = `=HYPERLINK("http://evil.example","click")`
	name := f.post(t, s)
	f.reconcileSync(t, name)
	cell, ok := sheetsEm.Cell(f.spreadsheet, "Log", "A2")
	if !ok || cell.Formula != "" || cell.Value != s.Title {
		t.Fatalf("cell %+v", cell)
	}
}

func TestSheetTitlesThatNeedQuoting(t *testing.T) {
	for _, title := range []string{"Time log", "Jon's log", "勤怠 ログ"} {
		t.Run(title, func(t *testing.T) {
			f := newFixture(t, title, nil)
			f.active(t)
			name := f.post(t, session("q", 0))
			f.reconcileSync(t, name)
			if s := f.sync(t, name); s.Status.Phase != v1alpha1.SyncSucceeded || len(f.data()) != 1 {
				t.Fatalf("%+v, rows %v", s.Status, f.data())
			}
		})
	}
}

func TestAppendsOfAConnectionArePaced(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	f.reconcileSync(t, f.post(t, session("one", 0)))
	second := f.post(t, session("two", 1))
	appends := box.Calls(sandbox.SheetsValuesAppend)
	res := f.reconcileSync(t, second)
	// Waiting out the pace writes nothing: one write per session is the
	// outcome's.
	if s := f.sync(t, second); box.Calls(sandbox.SheetsValuesAppend) != appends || s.Status.Phase != "" || s.Status.Attempts != 0 ||
		res.RequeueAfter <= 0 || res.RequeueAfter > 2*sheetsync.Pace {
		t.Fatalf("a second append within %s: %+v (requeue %s)", sheetsync.Pace, s.Status, res.RequeueAfter)
	}
	f.clock.Step(sheetsync.Pace)
	f.reconcileSync(t, second)
	if s := f.sync(t, second); s.Status.Phase != v1alpha1.SyncSucceeded {
		t.Fatalf("%+v", s.Status)
	}
}

func TestAThrottledAppendBacksOffAndIsRetried(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	box.SetFault(sandbox.SheetsValuesAppend, sandbox.Fault{Status: http.StatusTooManyRequests, Times: 1})
	t.Cleanup(func() { box.ClearFault(sandbox.SheetsValuesAppend) })
	name := f.post(t, session("t", 0))
	res := f.reconcileSync(t, name)
	s := f.sync(t, name)
	if s.Status.Phase != v1alpha1.SyncPending || s.Status.InFlightSince != nil || !strings.Contains(s.Status.LastError, "429") || res.RequeueAfter < 900*time.Millisecond {
		t.Fatalf("after a 429: %+v (requeue %s)", s.Status, res.RequeueAfter)
	}
	f.clock.Step(res.RequeueAfter)
	f.cachedSees(t, &v1alpha1.SheetSync{}, name, func(o client.Object) bool { return o.(*v1alpha1.SheetSync).Status.LastError != "" })
	f.reconcileSync(t, name)
	if s := f.sync(t, name); s.Status.Phase != v1alpha1.SyncSucceeded || s.Status.Attempts != 2 || len(f.data()) != 1 {
		t.Fatalf("not retried: %+v", s.Status)
	}
}

func TestAnAppendRefusedWith403TurnsTheConnectionToError(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	sheetsEm.SetAccess(f.spreadsheet, "reader")
	t.Cleanup(func() { sheetsEm.SetAccess(f.spreadsheet, "writer") })
	name := f.post(t, session("r", 0))
	f.reconcileSync(t, name)
	// The SheetSync controller does not write its connection's status: it
	// reports to the connection's controller, which records the refusal.
	if c := f.connection(t); c.Status.Phase != v1alpha1.ConnectionActive || c.Status.RefusedGrant != nil {
		t.Fatalf("the sync wrote its connection's status: %+v", c.Status)
	}
	f.reconcileConn(t)
	s := f.sync(t, name)
	c := f.connection(t)
	if s.Status.Phase != v1alpha1.SyncPending || s.Status.Attempts != 0 || c.Status.Phase != v1alpha1.ConnectionError || c.Status.RefusedGrant == nil ||
		!strings.Contains(strings.Join(f.rec.All(), "\n"), v1alpha1.ReauthRequiredReason) {
		t.Fatalf("sync %+v\nconnection %+v", s.Status, c.Status)
	}
	// The connection controller keeps it in Error: reads still work, but
	// the grant Google refused is the same.
	f.reconcileConn(t)
	if c := f.connection(t); c.Status.Phase != v1alpha1.ConnectionError {
		t.Fatalf("the connection left Error: %+v", c.Status)
	}
}

func TestSpentRetriesAreRecheckedAndRequestedAtRetriesAFailedSync(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	box.SetFault(sandbox.SheetsValuesAppend, sandbox.Fault{Status: http.StatusBadRequest, Times: 1})
	t.Cleanup(func() { box.ClearFault(sandbox.SheetsValuesAppend) })
	name := f.post(t, session("x", 0))
	f.reconcileSync(t, name)
	s := f.sync(t, name)
	if s.Status.Phase != v1alpha1.SyncFailed || s.Status.LastError == "" || s.Status.CompletedAt == nil || s.Status.Trace == nil ||
		condition(s.Status.Conditions, v1alpha1.StalledCondition).Reason != sheetsync.AppendFailedReason || !strings.Contains(strings.Join(f.rec.All(), "\n"), "Warning AppendFailed") {
		t.Fatalf("a 400 did not fail the sync: %+v", s.Status)
	}
	// A person asks again (seed 004 §4: re-sync from the UI).
	patch := client.MergeFrom(s.DeepCopy())
	metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1alpha1.RequestedAtAnnotation, "retry-1")
	if err := env.Client.Patch(context.Background(), s, patch); err != nil {
		t.Fatal(err)
	}
	f.cachedSees(t, &v1alpha1.SheetSync{}, name, func(o client.Object) bool { return o.GetAnnotations()[v1alpha1.RequestedAtAnnotation] == "retry-1" })
	f.clock.Step(sheetsync.Pace)
	f.reconcileSync(t, name)
	if s := f.sync(t, name); s.Status.Phase != v1alpha1.SyncSucceeded || s.Status.LastError != "" || len(f.data()) != 1 {
		t.Fatalf("the retry did not append: %+v", s.Status)
	}

	// Throttled until the schedule is spent (two retries here): never
	// Failed (issue 18 item 10). The sync stays Pending with reason
	// RetriesExhausted, a Warning Event is the dead-letter record, and it
	// is looked at again an hour later (the Recheck schedule), when Google
	// has healed.
	box.SetFault(sandbox.SheetsValuesAppend, sandbox.Fault{Status: http.StatusServiceUnavailable})
	other := f.post(t, session("y", 5))
	for range 3 {
		f.clock.Step(time.Minute)
		f.cachedSees(t, &v1alpha1.SheetSync{}, other, nil)
		f.reconcileSync(t, other)
		cur := f.sync(t, other)
		f.cachedSees(t, &v1alpha1.SheetSync{}, other, func(o client.Object) bool { return o.GetResourceVersion() == cur.ResourceVersion })
	}
	s = f.sync(t, other)
	if s.Status.Phase != v1alpha1.SyncPending || condition(s.Status.Conditions, v1alpha1.ReadyCondition).Reason != v1alpha1.RetriesExhaustedReason ||
		s.Status.NextAttemptAt == nil || s.Status.NextAttemptAt.Sub(f.clock.Now()) < 54*time.Minute ||
		!strings.Contains(strings.Join(f.rec.All(), "\n"), "Warning RetriesExhausted") {
		t.Fatalf("retries spent: %+v", s.Status)
	}
	box.ClearFault(sandbox.SheetsValuesAppend)
	f.clock.SetTime(s.Status.NextAttemptAt.Time)
	f.reconcileSync(t, other)
	if s := f.sync(t, other); s.Status.Phase != v1alpha1.SyncSucceeded || s.Status.NextAttemptAt != nil || len(f.data()) != 2 {
		t.Fatalf("not written at the recheck: %+v, rows %v", s.Status, f.data())
	}
}

// The crash window, by hand: a sync found in flight whose row Google has
// is not appended again when the id column is mapped.
func TestASyncFoundInFlightIsLookedUpInTheIDColumn(t *testing.T) {
	f := newFixture(t, "Log", nil)
	f.active(t)
	name := f.post(t, session("crashed", 0))
	// What a manager killed between Google's write and its status write
	// leaves: the row in the sheet, the sync in flight.
	if err := sheetsEm.SetRow(f.spreadsheet, "Log", 2, "work crashed", "", "", "", "crashed"); err != nil {
		t.Fatal(err)
	}
	s := f.sync(t, name)
	now := metav1.NewTime(f.clock.Now())
	s.Status.InFlightSince, s.Status.Attempts = &now, 1
	if err := env.Client.Status().Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	f.cachedSees(t, &v1alpha1.SheetSync{}, name, func(o client.Object) bool { return o.(*v1alpha1.SheetSync).Status.InFlightSince != nil })
	appends := box.Calls(sandbox.SheetsValuesAppend)
	f.reconcileSync(t, name)
	s = f.sync(t, name)
	if box.Calls(sandbox.SheetsValuesAppend) != appends || len(f.data()) != 1 || s.Status.Phase != v1alpha1.SyncSucceeded || s.Status.RowNumber != 2 ||
		condition(s.Status.Conditions, v1alpha1.ReadyCondition).Reason != sheetsync.RecoveredReason {
		t.Fatalf("appended again or not recovered: %d appends, rows %v, %+v", box.Calls(sandbox.SheetsValuesAppend)-appends, f.data(), s.Status)
	}
	// One in flight that Google does not have is appended.
	lost := f.post(t, session("lost", 1))
	s = f.sync(t, lost)
	s.Status.InFlightSince = &now
	if err := env.Client.Status().Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	f.cachedSees(t, &v1alpha1.SheetSync{}, lost, func(o client.Object) bool { return o.(*v1alpha1.SheetSync).Status.InFlightSince != nil })
	f.clock.Step(sheetsync.Pace)
	f.reconcileSync(t, lost)
	if s := f.sync(t, lost); s.Status.Phase != v1alpha1.SyncSucceeded || s.Status.RowNumber != 3 || len(f.data()) != 2 {
		t.Fatalf("%+v rows %v", s.Status, f.data())
	}
}

func TestSucceededSyncsAreDeletedAfterTheirRetention(t *testing.T) {
	f := newFixture(t, "Log", func(c *v1alpha1.SheetConnection) { c.Spec.SyncRetention = metav1.Duration{Duration: time.Hour} })
	f.active(t)
	name := f.post(t, session("old", 0))
	res := f.reconcileSync(t, name)
	if res.RequeueAfter <= 0 || res.RequeueAfter > 66*time.Minute {
		t.Fatalf("requeue after %s", res.RequeueAfter)
	}
	f.cachedSees(t, &v1alpha1.SheetSync{}, name, func(o client.Object) bool { return o.(*v1alpha1.SheetSync).Status.CompletedAt != nil })
	f.clock.Step(59 * time.Minute)
	f.reconcileSync(t, name)
	if _, err := getSync(f, name); err != nil {
		t.Fatal("deleted before its retention")
	}
	f.clock.Step(time.Minute)
	f.reconcileSync(t, name)
	if _, err := getSync(f, name); !apierrors.IsNotFound(err) {
		t.Fatalf("not deleted after its retention: %v", err)
	}
}

func getSync(f *fixture, name string) (*v1alpha1.SheetSync, error) {
	s := &v1alpha1.SheetSync{}
	return s, env.Client.Get(context.Background(), types2(f.ns, name), s)
}

func types2(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

func gsheetsProvider() oauth.Provider { return targets.Sheets.Provider }

func deleteSecret(t *testing.T, ns, name string) {
	t.Helper()
	if err := env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// A sheet Google does not show, and two fields resolving to one column,
// stall the connection with the reason, and it takes no sessions.
func TestAMissingSheetOrAColumnClashRefusesSessions(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(*v1alpha1.SheetConnection)
		reason string
	}{
		"no such sheet": {func(c *v1alpha1.SheetConnection) { c.Spec.Sheet.Title = "Renamed" }, sheetconnection.SheetNotFoundReason},
		"no clash": {func(c *v1alpha1.SheetConnection) {
			c.Spec.ColumnMapping["notes"] = "Session ID"
			c.Spec.ColumnMapping["id"] = "H"
		}, ""},
		"letter clash": {func(c *v1alpha1.SheetConnection) { c.Spec.ColumnMapping["title"] = "E" }, sheetconnection.ColumnClashReason},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "Log", tc.change)
			f.reconcileConn(t)
			c := f.connection(t)
			ok, why := timesheet.Accepting(c)
			if tc.reason == "" {
				if !ok {
					t.Fatalf("no clash, yet refused: %s", why)
				}
				return
			}
			if ok || condition(c.Status.Conditions, v1alpha1.HeaderValidCondition).Reason != tc.reason ||
				condition(c.Status.Conditions, v1alpha1.StalledCondition).Reason != tc.reason {
				t.Fatalf("accepting=%v (%s), status %+v", ok, why, c.Status)
			}
		})
	}
}
