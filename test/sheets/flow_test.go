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

package sheets_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// otherToken is the ingest token of a second connection.
const otherToken = "other-ingest-token-fedcba9876543210"

func TestIngestRefusesAWrongOrMissingToken(t *testing.T) {
	f := newFixture(t, nil)
	f.ready(t)
	// A second connection, in another namespace, with another ingest token.
	ns := newNamespace(t)
	if err := env.Client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other-ingest", Namespace: ns},
		StringData: map[string]string{timesheet.IngestTokenKey: otherToken}}); err != nil {
		t.Fatal(err)
	}
	g := connect(t, ns, newSpreadsheet("Sessions"), "Sessions", grant(),
		func(c *v1alpha1.SheetConnection) { c.Spec.IngestTokenSecretRef.Name = "other-ingest" })
	g.waitConn(t, "the other connection Ready", func(c *v1alpha1.SheetConnection) bool { return status.IsTrue(c, v1alpha1.ReadyCondition) })

	own, other := f.conn(t).Status.IngestPath, g.conn(t).Status.IngestPath
	// The webhook's cache has the other path once its own token is taken
	// there (an empty session: 400, nothing created).
	testenv.Eventually(t, "the other connection's path served", func() bool {
		code, _ := postTo(t, other, map[string]any{}, "Bearer "+otherToken, true)
		return code == http.StatusBadRequest
	})
	s := session("s-auth", "refused", 0, 30)
	for _, c := range []struct {
		name, path, auth string
		withAuth         bool
	}{
		{"no Authorization", own, "", false},
		{"not a Bearer token", own, "Basic " + testenv.SheetIngestToken, true},
		{"an empty Bearer token", own, "Bearer ", true},
		{"a wrong Bearer token", own, "Bearer " + testenv.SheetIngestToken + "x", true},
		{"another connection's token", own, "Bearer " + otherToken, true},
		{"the right token on another connection's path", other, "Bearer " + testenv.SheetIngestToken, true},
		{"the right token on a path of no connection", timesheet.IngestPrefix + "0123456789abcdef0123456789abcdef", "Bearer " + testenv.SheetIngestToken, true},
		{"the right token on the path of another name", timesheet.IngestPath(testenv.SheetIngestToken, f.ns, "other"), "Bearer " + testenv.SheetIngestToken, true},
	} {
		code, a := postTo(t, c.path, s, c.auth, c.withAuth)
		if code != http.StatusUnauthorized || a.Error == nil || a.Error.Code != webhook.CodeUnauthorized {
			t.Errorf("%s: %d %+v, want 401 %s", c.name, code, a.Error, webhook.CodeUnauthorized)
		}
	}
	for _, x := range []*fixture{f, g} {
		if n := len(x.syncs(t)); n != 0 {
			t.Fatalf("%d SheetSyncs created in %s by refused posts", n, x.ns)
		}
	}
	// The other connection's own token still works on its own path.
	if code, a := postTo(t, other, s, "Bearer "+otherToken, true); code != http.StatusAccepted {
		t.Fatalf("the other connection's own post: %d %+v", code, a)
	}
}

// conflict asserts a 409 CONFLICT answer that created nothing.
func conflict(t *testing.T, f *fixture, s map[string]any) answer {
	t.Helper()
	before := len(f.syncs(t))
	code, a := f.post(t, s, testenv.SheetIngestToken)
	if code != http.StatusConflict || a.Error == nil || a.Error.Code != webhook.CodeConflict {
		t.Fatalf("post: %d %+v, want 409 %s", code, a.Error, webhook.CodeConflict)
	}
	if n := len(f.syncs(t)); n != before {
		t.Fatalf("a refused post created a SheetSync (%d → %d)", before, n)
	}
	return a
}

func TestIngestConflictsWhileRevoked(t *testing.T) {
	// No token Secret: no grant yet.
	f := connect(t, newNamespace(t), newSpreadsheet("Sessions"), "Sessions", "", nil)
	c := f.waitConn(t, "the connection Revoked", func(c *v1alpha1.SheetConnection) bool {
		return c.Status.Phase == v1alpha1.ConnectionRevoked
	})
	if status.IsTrue(c, v1alpha1.ReadyCondition) {
		t.Fatal("Ready without a grant")
	}
	f.waitIngest(t, http.StatusConflict)
	a := conflict(t, f, session("s-revoked", "too early", 0, 30))
	if a.Error.Details["phase"] != string(v1alpha1.ConnectionRevoked) {
		t.Fatalf("details %+v", a.Error.Details)
	}
}

func TestGoogleRefusingTheAppendPutsTheConnectionInError(t *testing.T) {
	f := newFixture(t, nil)
	f.ready(t)
	appends := box.Calls(sandbox.SheetsValuesAppend)
	sheetsEm.SetAccess(f.spreadsheet, "reader") // the account may read, not write: 403
	if code, a := f.post(t, session("s-refused", "refused by Google", 0, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post: %d %+v", code, a)
	}
	c := f.waitConn(t, "the connection in Error", func(c *v1alpha1.SheetConnection) bool {
		return c.Status.Phase == v1alpha1.ConnectionError
	})
	if box.Calls(sandbox.SheetsValuesAppend) == appends {
		t.Fatal("no append was tried")
	}
	if c.Status.RefusedGrant == nil || status.IsTrue(c, v1alpha1.ReadyCondition) ||
		condition(c, v1alpha1.AuthenticatedCondition).Reason != v1alpha1.ReauthRequiredReason {
		t.Fatalf("status %+v", c.Status)
	}
	f.waitIngest(t, http.StatusConflict)
	a := conflict(t, f, session("s-after-error", "after the refusal", 60, 30))
	if a.Error.Details["phase"] != string(v1alpha1.ConnectionError) {
		t.Fatalf("details %+v", a.Error.Details)
	}
	// The refused session waits, neither Failed nor written.
	if s := f.sync(t, "s-refused"); s.Status.Phase != v1alpha1.SyncPending || s.Status.CompletedAt != nil {
		t.Fatalf("refused sync %+v", s.Status)
	}
	if n := len(f.rows()); n != 1 {
		t.Fatalf("%d rows, want the header only", n)
	}
}

func TestIngestConflictsWhileAMappedHeaderIsMissing(t *testing.T) {
	f := newFixture(t, func(c *v1alpha1.SheetConnection) { c.Spec.ColumnMapping["intensity"] = "Mood" })
	c := f.waitConn(t, "the missing header reported", func(c *v1alpha1.SheetConnection) bool {
		return len(c.Status.MissingHeaders) > 0
	})
	if !slices.Equal(c.Status.MissingHeaders, []string{"Mood"}) || status.IsTrue(c, v1alpha1.ReadyCondition) ||
		condition(c, v1alpha1.HeaderValidCondition).Reason != sheetconnection.HeadersMissingReason {
		t.Fatalf("status %+v", c.Status)
	}
	if msg := condition(c, v1alpha1.ReadyCondition).Message; !strings.Contains(msg, `"Mood"`) {
		t.Fatalf("Ready message %q does not name the header", msg)
	}
	f.waitIngest(t, http.StatusConflict)
	a := conflict(t, f, session("s-missing", "no mood column", 0, 30))
	if !strings.Contains(a.Error.Message, "Mood") {
		t.Fatalf("409 message %q does not name the header", a.Error.Message)
	}
}

func TestASessionBecomesOneRowAndARepostIsADuplicate(t *testing.T) {
	f := newFixture(t, nil)
	f.ready(t)
	s := session("s-one", "Write the e2e tests", 0, 25)
	code, a := f.post(t, s, testenv.SheetIngestToken)
	name := timesheet.SyncName(connName, "s-one")
	if code != http.StatusAccepted || a.Status != "accepted" || a.SheetSync != name {
		t.Fatalf("post: %d %+v", code, a)
	}
	// Created before the answer.
	if n := len(f.syncs(t)); n != 1 {
		t.Fatalf("%d SheetSyncs after one post", n)
	}
	sync := f.succeeded(t, "s-one")
	st := sync.Status
	if st.RowNumber != 2 || st.LastError != "" || st.CompletedAt == nil || st.AttemptedAt == nil || st.Attempts != 1 ||
		st.InFlightSince != nil || !strings.Contains(st.UpdatedRange, "!A2:") || st.Trace == nil ||
		!strings.Contains(st.Trace.Request, `"RAW"`) || !status.IsTrue(sync, v1alpha1.ReadyCondition) {
		t.Fatalf("status %+v", st)
	}
	rows := f.rows()
	if len(rows) != 2 {
		t.Fatalf("rows %q", rows)
	}
	row := rows[1]
	if len(row) != len(testenv.SheetHeader) || row[colTitle] != "Write the e2e tests" || row[colSeconds] != "1500" ||
		row[colID] != "s-one" || row[colProject] != "switchboard" || row[colTags] != "deep, e2e" || row[1] == "" || row[2] == "" {
		t.Fatalf("row %q", row)
	}

	code, a = f.post(t, s, testenv.SheetIngestToken)
	if code != http.StatusOK || a.Status != "duplicate" || a.SheetSync != name {
		t.Fatalf("repost: %d %+v", code, a)
	}
	if n := len(f.syncs(t)); n != 1 {
		t.Fatalf("%d SheetSyncs after a repost", n)
	}
	if f.rowsOf("s-one") != 1 || len(f.rows()) != 2 {
		t.Fatalf("rows after a repost %q", f.rows())
	}
}

func TestABatchAnswersPerSession(t *testing.T) {
	f := newFixture(t, nil)
	f.ready(t)
	if code, a := f.post(t, session("b-dup", "posted before", 0, 10), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("first post: %d %+v", code, a)
	}
	bad := session("b-bad", "ends before it starts", 120, 10)
	bad["endedAt"] = base.UnixMilli()
	code, a := f.post(t, batch(session("b-new", "new one", 60, 10), session("b-dup", "posted before", 0, 10), bad), testenv.SheetIngestToken)
	if code != http.StatusAccepted || a.Accepted != 1 || a.Duplicates != 1 || a.Invalid != 1 || len(a.Results) != 3 {
		t.Fatalf("batch: %d %+v", code, a)
	}
	want := []struct{ id, status string }{{"b-new", "accepted"}, {"b-dup", "duplicate"}, {"b-bad", "invalid"}}
	for i, w := range want {
		if r := a.Results[i]; r.ID != w.id || r.Status != w.status {
			t.Errorf("result %d: %+v, want %s %s", i, r, w.id, w.status)
		}
	}
	if e := a.Results[2].Error; e == nil || e.Field != "sessions[2].endedAt" {
		t.Fatalf("the invalid session's error %+v does not name sessions[2].endedAt", e)
	}
	if n := len(f.syncs(t)); n != 2 {
		t.Fatalf("%d SheetSyncs, want 2", n)
	}

	noTitle := session("b-x", "", 0, 10)
	delete(noTitle, "title")
	badTags := session("b-y", "tags", 0, 10)
	badTags["tags"] = "deep"
	code, a = f.post(t, batch(bad, noTitle, badTags), testenv.SheetIngestToken)
	if code != http.StatusBadRequest || a.Invalid != 3 || a.Accepted != 0 {
		t.Fatalf("all invalid: %d %+v", code, a)
	}
	for i, field := range []string{"sessions[0].endedAt", "sessions[1].title", "sessions[2].tags"} {
		if e := a.Results[i].Error; e == nil || e.Field != field {
			t.Errorf("result %d error %+v, want field %s", i, e, field)
		}
	}
	f.succeeded(t, "b-new")
	f.succeeded(t, "b-dup")
	if n := len(f.syncs(t)); n != 2 {
		t.Fatalf("%d SheetSyncs after an all-invalid batch", n)
	}
	if len(f.rows()) != 3 {
		t.Fatalf("rows %q", f.rows())
	}
}

func TestPendingSessionsShareOneAppend(t *testing.T) {
	f := newFixture(t, nil)
	f.ready(t)
	// A first session's append is held open at Google: the connection's
	// batch is busy, so the ten posted meanwhile are all pending when it
	// ends, and the next batch carries them all. Without the hold the
	// first of the ten would be reconciled while the webhook was still
	// creating the others, and the ten would take two appends or three.
	held, release := sheetsEm.HoldAppends()
	defer release()
	if code, a := f.post(t, session("p-first", "first", 0, 5), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post: %d %+v", code, a)
	}
	waitHeld(t, held)
	before := box.Calls(sandbox.SheetsValuesAppend)
	// Posted out of order: the rows go in session order (startedAt).
	order := []int{7, 2, 9, 0, 5, 3, 8, 1, 6, 4}
	sessions := make([]map[string]any, len(order))
	for i, n := range order {
		sessions[i] = session("p-"+string(rune('a'+n)), "session "+string(rune('a'+n)), 60+10*n, 5)
	}
	if code, a := f.post(t, batch(sessions...), testenv.SheetIngestToken); code != http.StatusAccepted || a.Accepted != 10 {
		t.Fatalf("batch: %d %+v", code, a)
	}
	release()
	for _, s := range sessions {
		f.succeeded(t, s["id"].(string))
	}
	if got := box.Calls(sandbox.SheetsValuesAppend) - before; got != 1 {
		t.Fatalf("%d values.append calls for ten pending sessions, want 1", got)
	}
	rows := f.rows()
	if len(rows) != 12 || rows[1][colID] != "p-first" {
		t.Fatalf("rows %q", rows)
	}
	for n := range 10 {
		id := "p-" + string(rune('a'+n))
		if rows[n+2][colID] != id {
			t.Fatalf("row %d holds %q, want %s (session order)", n+3, rows[n+2][colID], id)
		}
		if s := f.sync(t, id); s.Status.RowNumber != int64(n+3) {
			t.Fatalf("%s rowNumber %d, want %d", id, s.Status.RowNumber, n+3)
		}
	}
}

func TestAFormulaTitleIsStoredAsText(t *testing.T) {
	f := newFixture(t, nil)
	f.ready(t)
	titles := map[string]string{"f-link": `=HYPERLINK("http://evil","x")`, "f-plus": "+1", "f-at": "@x", "f-sum": "=1+1"}
	minute := 0
	for id, title := range titles {
		if code, a := f.post(t, session(id, title, minute, 5), testenv.SheetIngestToken); code != http.StatusAccepted {
			t.Fatalf("post %s: %d %+v", id, code, a)
		}
		minute += 10
	}
	for id, title := range titles {
		row := f.succeeded(t, id).Status.RowNumber
		c, ok := sheetsEm.Cell(f.spreadsheet, f.title, "A"+itoa(row))
		if !ok || c.Formula != "" || c.Value != title {
			t.Errorf("%s: cell A%d = %+v, want the text %q", id, row, c, title)
		}
	}
}

func TestSheetTitlesThatNeedQuoting(t *testing.T) {
	titles := []string{"Time log", "Jon's log", "勤怠 ログ"}
	// One spreadsheet with the three sheets and a decoy first sheet.
	id := newSpreadsheet(append([]string{"Sheet1"}, titles...)...)
	var fs []*fixture
	for _, title := range titles {
		fs = append(fs, connect(t, newNamespace(t), id, title, grant(), nil))
	}
	for i, f := range fs {
		c := f.ready(t)
		if c.Status.SheetTitle != f.title || c.Status.SheetID == nil || *c.Status.SheetID != int64(101+i) {
			t.Fatalf("%q resolved to %q id %v", f.title, c.Status.SheetTitle, c.Status.SheetID)
		}
		if code, a := f.post(t, session("q-"+itoa(int64(i)), "into "+f.title, 0, 5), testenv.SheetIngestToken); code != http.StatusAccepted {
			t.Fatalf("post to %q: %d %+v", f.title, code, a)
		}
	}
	for i, f := range fs {
		sid := "q-" + itoa(int64(i))
		s := f.succeeded(t, sid)
		if s.Status.RowNumber != 2 {
			t.Fatalf("%q: rowNumber %d", f.title, s.Status.RowNumber)
		}
		rows := f.rows()
		if len(rows) != 2 || rows[1][colID] != sid || rows[1][colTitle] != "into "+f.title {
			t.Fatalf("sheet %q rows %q", f.title, rows)
		}
	}
	if rows := sheetsEm.Rows(id, "Sheet1"); len(rows) != 1 {
		t.Fatalf("the decoy sheet got rows: %q", rows)
	}
}

func TestARenamedHeaderStopsIngestUntilRenamedBack(t *testing.T) {
	f := newFixture(t, nil)
	f.ready(t)
	renamed := slices.Clone(testenv.SheetHeader)
	renamed[colSeconds] = "Duration (s)"
	if err := sheetsEm.SetRow(f.spreadsheet, f.title, 1, renamed...); err != nil {
		t.Fatal(err)
	}
	f.requestReconcile(t)
	c := f.waitConn(t, "Ready=False naming the renamed header", func(c *v1alpha1.SheetConnection) bool {
		return !status.IsTrue(c, v1alpha1.ReadyCondition) && len(c.Status.MissingHeaders) > 0
	})
	if !slices.Equal(c.Status.MissingHeaders, []string{"Seconds"}) || !strings.Contains(condition(c, v1alpha1.ReadyCondition).Message, `"Seconds"`) {
		t.Fatalf("status %+v", c.Status)
	}
	f.waitIngest(t, http.StatusConflict)
	conflict(t, f, session("h-1", "while renamed", 0, 5))

	if err := sheetsEm.SetRow(f.spreadsheet, f.title, 1, testenv.SheetHeader...); err != nil {
		t.Fatal(err)
	}
	f.requestReconcile(t)
	c = f.ready(t)
	if len(c.Status.MissingHeaders) != 0 || c.Status.ResolvedColumns["durationSeconds"] != "D" {
		t.Fatalf("status %+v", c.Status)
	}
	if code, a := f.post(t, session("h-2", "renamed back", 0, 5), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post: %d %+v", code, a)
	}
	f.succeeded(t, "h-2")
}
