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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// connName is the name testenv.SheetConnection gives the connection.
const connName = "timesheet"

// Columns of testenv.SheetHeader, as the fixture maps them.
const (
	colTitle   = 0 // A: title, by letter
	colSeconds = 3 // D: durationSeconds, by the header "Seconds"
	colID      = 4 // E: id, by the header "Session ID"
	colProject = 5 // F: project, by letter
	colTags    = 6 // G: tags, by the header "Tags"
)

// grantScope is what the connect flow asks Google for (targets.Sheets.Provider).
const grantScope = "openid " + targets.SheetsScope

// base is when the sessions of the tests start.
var base = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

var spreadsheets, accounts atomic.Int64

// grant is a refresh token of a Google account of its own: Sheets counts
// its write quota (60 a minute) per account, so tests that share one
// would throttle each other.
func grant() string {
	return googleEm.IssueRefreshTokenFor("sheet-client", grantScope, fmt.Sprintf("1%020d", accounts.Add(1)))
}

// newSpreadsheet adds a spreadsheet in Asia/Tokyo with the given sheets,
// each with testenv.SheetHeader as row 1, and returns its id.
func newSpreadsheet(titles ...string) string {
	id := fmt.Sprintf("sheets-e2e-%04d", spreadsheets.Add(1))
	specs := make([]sandbox.SheetSpec, len(titles))
	for i, title := range titles {
		specs[i] = sandbox.SheetSpec{ID: int64(100 + i), Title: title, Rows: [][]string{testenv.SheetHeader}}
	}
	sheetsEm.AddSpreadsheet(id, "Asia/Tokyo", specs...)
	return id
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns, err := env.Namespace("sheets")
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// fixture is one SheetConnection ("timesheet") in a namespace of its own.
type fixture struct {
	ns, spreadsheet, title string
	// refresh is the grant stored in the token Secret ("" for none).
	refresh string
	key     types.NamespacedName
}

// connect creates the connection of testenv.SheetConnection in ns on the
// sheet title of spreadsheet, granted with refresh ("": not granted).
func connect(t *testing.T, ns, spreadsheet, title, refresh string, change func(*v1alpha1.SheetConnection)) *fixture {
	t.Helper()
	f := &fixture{ns: ns, spreadsheet: spreadsheet, title: title, refresh: refresh, key: types.NamespacedName{Namespace: ns, Name: connName}}
	if err := testenv.SheetConnection(context.Background(), env.Client, ns, spreadsheet, title, refresh, change); err != nil {
		t.Fatal(err)
	}
	return f
}

// newFixture is a granted connection on a spreadsheet of its own with one
// sheet, "Sessions".
func newFixture(t *testing.T, change func(*v1alpha1.SheetConnection)) *fixture {
	t.Helper()
	return connect(t, newNamespace(t), newSpreadsheet("Sessions"), "Sessions", grant(), change)
}

func (f *fixture) conn(t *testing.T) *v1alpha1.SheetConnection {
	t.Helper()
	c := &v1alpha1.SheetConnection{}
	if err := env.Client.Get(context.Background(), f.key, c); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitConn waits until the connection, as the API server holds it,
// satisfies cond, and returns it.
func (f *fixture) waitConn(t *testing.T, what string, cond func(*v1alpha1.SheetConnection) bool) *v1alpha1.SheetConnection {
	t.Helper()
	var c *v1alpha1.SheetConnection
	testenv.Eventually(t, what, func() bool {
		c = f.conn(t)
		return c.Status.ObservedGeneration == c.Generation && c.Status.IngestPath != "" && cond(c)
	})
	return c
}

// ready waits for the connection Active and Ready, and for the webhook's
// cache to see it so: the right token with an empty session is then a 400
// (a 401 while the webhook does not know the path, a 409 while it does not
// take sessions). The probe creates nothing.
func (f *fixture) ready(t *testing.T) *v1alpha1.SheetConnection {
	t.Helper()
	c := f.waitConn(t, "the connection Active and Ready", func(c *v1alpha1.SheetConnection) bool {
		return c.Status.Phase == v1alpha1.ConnectionActive && status.IsTrue(c, v1alpha1.ReadyCondition)
	})
	f.waitIngest(t, http.StatusBadRequest)
	return c
}

// waitIngest waits until a probe (the right token, an empty session)
// answers code.
func (f *fixture) waitIngest(t *testing.T, code int) {
	t.Helper()
	testenv.Eventually(t, fmt.Sprintf("ingest answering %d", code), func() bool {
		got, _ := f.post(t, map[string]any{}, testenv.SheetIngestToken)
		return got == code
	})
}

// requestReconcile sets the requested-at annotation to a new value.
func (f *fixture) requestReconcile(t *testing.T) {
	t.Helper()
	c := f.conn(t)
	patch := client.MergeFrom(c.DeepCopy())
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[v1alpha1.RequestedAtAnnotation] = strconv.FormatInt(time.Now().UnixNano(), 10)
	if err := env.Client.Patch(context.Background(), c, patch); err != nil {
		t.Fatal(err)
	}
}

// answer is a JSON answer of the ingest route: a session's result, a
// batch's, or an error body ({"error": {"code", "message", "details"}}).
type answer struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	SheetSync  string `json:"sheetSync"`
	Accepted   int    `json:"accepted"`
	Duplicates int    `json:"duplicates"`
	Invalid    int    `json:"invalid"`
	Results    []struct {
		ID        string `json:"id"`
		Status    string `json:"status"`
		SheetSync string `json:"sheetSync"`
		Error     *struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"results"`
	Error *struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

// post sends body to the connection's ingest path with token as a Bearer
// token ("" sends no Authorization header).
func (f *fixture) post(t *testing.T, body any, token string) (int, answer) {
	t.Helper()
	return postTo(t, f.conn(t).Status.IngestPath, body, "Bearer "+token, token != "")
}

// postTo sends body to path with the Authorization header auth (none
// unless withAuth) and decodes the answer.
func postTo(t *testing.T, path string, body any, auth string, withAuth bool) (int, answer) {
	t.Helper()
	return postAt(t, hookURL, path, body, auth, withAuth)
}

// postAt is postTo on the webhook server at base.
func postAt(t *testing.T, base, path string, body any, auth string, withAuth bool) (int, answer) {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if withAuth {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var a answer
	if len(data) > 0 {
		if err := json.Unmarshal(data, &a); err != nil {
			t.Fatalf("answer %d %q: %v", resp.StatusCode, data, err)
		}
	}
	return resp.StatusCode, a
}

// session is a finished session as the time tracker posts it: it started
// minute minutes after base and lasted mins minutes.
func session(id, title string, minute, mins int) map[string]any {
	start := base.Add(time.Duration(minute) * time.Minute)
	end := start.Add(time.Duration(mins) * time.Minute)
	return map[string]any{
		"id": id, "title": title, "startedAt": start.UnixMilli(), "endedAt": end.UnixMilli(),
		"durationSeconds": mins * 60, "project": "switchboard", "tags": []string{"deep", "e2e"},
	}
}

func batch(sessions ...map[string]any) map[string]any {
	return map[string]any{"sessions": sessions}
}

// syncs lists the SheetSyncs of the namespace.
func (f *fixture) syncs(t *testing.T) []v1alpha1.SheetSync {
	t.Helper()
	var list v1alpha1.SheetSyncList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// sync reads the SheetSync of a session.
func (f *fixture) sync(t *testing.T, sessionID string) *v1alpha1.SheetSync {
	t.Helper()
	s := &v1alpha1.SheetSync{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: timesheet.SyncName(connName, sessionID)}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// succeeded waits for a session's SheetSync to be Succeeded.
func (f *fixture) succeeded(t *testing.T, sessionID string) *v1alpha1.SheetSync {
	t.Helper()
	var s *v1alpha1.SheetSync
	testenv.Eventually(t, "session "+sessionID+" Succeeded", func() bool {
		s = f.sync(t, sessionID)
		return s.Status.Phase == v1alpha1.SyncSucceeded
	})
	return s
}

// rows are the sheet's rows, row 1 (the header) first.
func (f *fixture) rows() [][]string { return sheetsEm.Rows(f.spreadsheet, f.title) }

// rowsOf counts the rows holding a session id in the id column.
func (f *fixture) rowsOf(id string) int {
	n := 0
	for _, r := range f.rows() {
		if len(r) > colID && r[colID] == id {
			n++
		}
	}
	return n
}

// condition is the connection's condition ctype, or an empty one.
func condition(obj status.Object, ctype string) metav1.Condition {
	if c := status.Get(obj, ctype); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// waitHeld waits for the sandbox to hold an append (Google wrote its rows,
// the answer is kept back).
func waitHeld(t *testing.T, held <-chan struct{}) {
	t.Helper()
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("timed out waiting for an append to be held")
	}
}
