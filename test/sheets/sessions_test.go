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
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/audit/audittest"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// sessionState is a session as the sessions routes answer it.
type sessionState struct {
	ID            string     `json:"id"`
	Status        string     `json:"status"`
	RowNumber     int64      `json:"rowNumber"`
	RetryCount    int32      `json:"retryCount"`
	AttemptedAt   *time.Time `json:"attemptedAt"`
	NextAttemptAt *time.Time `json:"nextAttemptAt"`
	FailureReason string     `json:"failureReason"`
	Collected     bool       `json:"collected"`
}

// ask sends a request to the connection's sessions routes (rest is what
// follows the ingest path) with the ingest token as a Bearer token ("":
// none), and decodes a 2xx answer into out.
func (f *fixture) ask(t *testing.T, method, rest, token string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, hookURL+f.conn(t).Status.IngestPath+rest, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("%s %s answered with Cache-Control %q", method, rest, cc)
	}
	if strings.Contains(string(body), testenv.SheetIngestToken) {
		t.Fatalf("%s %s answered with the ingest token", method, rest)
	}
	if resp.StatusCode/100 == 2 && out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("%s %s: %d %q: %v", method, rest, resp.StatusCode, body, err)
		}
	}
	return resp.StatusCode
}

// state reads one session.
func (f *fixture) state(t *testing.T, id string) (int, sessionState) {
	t.Helper()
	var st sessionState
	code := f.ask(t, http.MethodGet, "/sessions/"+url.PathEscape(id), testenv.SheetIngestToken, &st)
	return code, st
}

// waitState waits for a session to read as status.
func (f *fixture) waitState(t *testing.T, id, status string) sessionState {
	t.Helper()
	var st sessionState
	testenv.Eventually(t, "session "+id+" reads "+status, func() bool {
		code, s := f.state(t, id)
		st = s
		return code == http.StatusOK && s.Status == status
	})
	return st
}

// The time tracker (seed 004 §4) reads a session pending while Google
// holds its append, then succeeded with its row; a session Google
// refused reads failed with the reason; retried twice over HTTP it is
// written once; a batch read answers each session, "unknown" for one
// never taken; and without the ingest token nothing is read or retried.
func TestATrackerReadsAndRetriesItsSessions(t *testing.T) {
	facts := audittest.Capture(t)
	f := newFixture(t, nil)
	f.ready(t)

	held, release := sheetsEm.HoldAppends()
	defer release()
	if code, a := f.post(t, session("s-read", "read me", 0, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post: %d %+v", code, a)
	}
	waitHeld(t, held)
	if code, st := f.state(t, "s-read"); code != http.StatusOK || st.Status != "pending" || st.RowNumber != 0 {
		t.Fatalf("while Google holds the append: %d %+v", code, st)
	}
	release()
	st := f.waitState(t, "s-read", "success")
	if want := f.succeeded(t, "s-read").Status.RowNumber; st.RowNumber != want || want < 2 || st.AttemptedAt == nil || st.FailureReason != "" {
		t.Fatalf("succeeded: %+v, the SheetSync's row %d", st, want)
	}

	box.SetFault(sandbox.SheetsValuesAppend, sandbox.Fault{Status: http.StatusBadRequest, Times: 1})
	t.Cleanup(func() { box.ClearFault(sandbox.SheetsValuesAppend) })
	if code, a := f.post(t, session("s-fail", "refused once", 60, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post: %d %+v", code, a)
	}
	failed := f.waitState(t, "s-fail", "failed")
	if failed.FailureReason == "" || failed.RetryCount != 1 || f.rowsOf("s-fail") != 0 {
		t.Fatalf("failed: %+v, rows %d", failed, f.rowsOf("s-fail"))
	}
	// The re-sync, asked twice: both 202, one more row.
	for range 2 {
		var retried sessionState
		if code := f.ask(t, http.MethodPost, "/sessions/s-fail/retry", testenv.SheetIngestToken, &retried); code != http.StatusAccepted && code != http.StatusOK {
			t.Fatalf("retry: %d", code)
		}
	}
	f.waitState(t, "s-fail", "success")
	if n := f.rowsOf("s-fail"); n != 1 {
		t.Fatalf("the retried session is in %d rows", n)
	}
	var again sessionState
	if code := f.ask(t, http.MethodPost, "/sessions/s-fail/retry", testenv.SheetIngestToken, &again); code != http.StatusOK || again.Status != "success" {
		t.Fatalf("retrying a succeeded session: %d %+v", code, again)
	}

	// Each session appended is audited once (docs/audit.md), the
	// retried one too, with its row.
	appended := map[string]float64{}
	for _, line := range facts.Of(audit.SessionAppended, f.ns) {
		audittest.CheckSchema(t, line)
		appended[line["name"].(string)] = line["row"].(float64)
	}
	for _, id := range []string{"s-read", "s-fail"} {
		if row := appended[timesheet.SyncName(connName, id)]; row != float64(f.sync(t, id).Status.RowNumber) || len(facts.Of(audit.SessionAppended, f.ns)) != 2 {
			t.Errorf("session %s audited as appended at row %v, facts %v", id, row, facts.Of(audit.SessionAppended, f.ns))
		}
	}

	var out struct {
		Sessions []sessionState `json:"sessions"`
	}
	if code := f.ask(t, http.MethodGet, "/sessions?id=s-read&id=s-fail&id=never", testenv.SheetIngestToken, &out); code != http.StatusOK ||
		len(out.Sessions) != 3 || out.Sessions[0].Status != "success" || out.Sessions[1].Status != "success" || out.Sessions[2].Status != "unknown" {
		t.Fatalf("batch read: %d %+v", code, out)
	}
	if code, _ := f.state(t, "never"); code != http.StatusNotFound {
		t.Fatalf("a session never taken: %d", code)
	}
	if code := f.ask(t, http.MethodGet, "/sessions", testenv.SheetIngestToken, nil); code != http.StatusBadRequest {
		t.Fatalf("a batch read naming no session: %d", code)
	}
	if code := f.ask(t, http.MethodPost, "/sessions/never/retry", testenv.SheetIngestToken, nil); code != http.StatusNotFound {
		t.Fatalf("a retry of a session never taken: %d", code)
	}
	for _, token := range []string{"", "wrong-token-of-sixteen-chars"} {
		if code := f.ask(t, http.MethodGet, "/sessions/s-read", token, nil); code != http.StatusUnauthorized {
			t.Errorf("a read with token %q: %d", token, code)
		}
		if code := f.ask(t, http.MethodPost, "/sessions/s-fail/retry", token, nil); code != http.StatusUnauthorized {
			t.Errorf("a retry with token %q: %d", token, code)
		}
	}
}

// A session whose SheetSync was collected after the connection's
// syncRetention still reads "success" with its row, from the ledger; a
// repost makes a new SheetSync, which finds the session in the sheet and
// appends nothing.
func TestASessionReadsSucceededAfterItsSyncWasCollected(t *testing.T) {
	f := newFixture(t, func(c *v1alpha1.SheetConnection) { c.Spec.SyncRetention = metav1.Duration{Duration: time.Second} })
	f.ready(t)
	if code, a := f.post(t, session("s-old", "long ago", 0, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post: %d %+v", code, a)
	}
	row := f.waitState(t, "s-old", "success").RowNumber
	testenv.Eventually(t, "the SheetSync collected", func() bool {
		err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: timesheet.SyncName(connName, "s-old")}, &v1alpha1.SheetSync{})
		return apierrors.IsNotFound(err)
	})
	st := f.waitState(t, "s-old", "success")
	if st.RowNumber != row || !st.Collected {
		t.Fatalf("after collection: %+v, want row %d", st, row)
	}
	appends := box.Calls(sandbox.SheetsValuesAppend)
	if code, a := f.post(t, session("s-old", "long ago", 0, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("repost: %d %+v", code, a)
	}
	// Its new SheetSync succeeds (and, a second later, is collected
	// again: Failed ones are kept, so gone means it succeeded).
	testenv.Eventually(t, "the reposted session found in the sheet", func() bool {
		var s v1alpha1.SheetSync
		err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: timesheet.SyncName(connName, "s-old")}, &s)
		return apierrors.IsNotFound(err) || err == nil && s.Status.Phase == v1alpha1.SyncSucceeded
	})
	if st := f.waitState(t, "s-old", "success"); st.RowNumber != row {
		t.Fatalf("after the repost: %+v, want row %d", st, row)
	}
	if n := f.rowsOf("s-old"); n != 1 || box.Calls(sandbox.SheetsValuesAppend) != appends {
		t.Fatalf("the repost wrote: %d rows, %d appends", n, box.Calls(sandbox.SheetsValuesAppend)-appends)
	}
}
