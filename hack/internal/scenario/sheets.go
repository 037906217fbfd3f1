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

package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
)

// The SheetConnection part of the demo. The sample "timesheet" appends to
// the tab "Log" with the Google grant the demo fetched at the start (Secret
// google-token); this part makes its own connection, "worklog", to the tab
// "Time log" of the same spreadsheet, connects it through the webhook's
// OAuth routes as a person would, and plays the time tracker.
const (
	// SheetConnectionName is the walk's connection; SheetIngestToken the
	// token its ingest route wants.
	SheetConnectionName = "worklog"
	sheetTab            = "Time log" // a title with a space: every A1 range quotes it
	sheetTimeZone       = "Asia/Tokyo"
	SheetIngestToken    = "demo-worklog-ingest-0123456789abcdef"
	// demoSpreadsheet is the sample's spreadsheet (the id in its URL).
	demoSpreadsheet = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"
)

// sheetsSeed is the spreadsheet the sandbox starts with (its seed file's
// "googleSheets"): the sample's tab "Log" and the demo's "Time log", each
// with its header row.
const sheetsSeed = `{"spreadsheets":[{"id":"` + demoSpreadsheet + `","timeZone":"` + sheetTimeZone + `","sheets":[
   {"id":0,"title":"Log","rows":[["Title","Started","Ended","Seconds","Project","Tags"]]},
   {"id":1718,"title":"` + sheetTab + `","rows":[["Session ID","Title","Started","Ended","Seconds","Project","Tags"]]}]}]}`

// demoSessions are what the time tracker posts; the first is posted twice.
var demoSessions = func() []map[string]any {
	start := time.Date(2026, 1, 15, 9, 0, 0, 0, time.FixedZone("JST", 9*3600))
	s := Session
	return []map[string]any{
		s("7c1e2a90-5b3d-4f6e-8a1b-000000000001", "Write the design doc", start, 90*time.Minute, "switchboard", "writing", "design"),
		s("7c1e2a90-5b3d-4f6e-8a1b-000000000002", `=HYPERLINK("http://example.com","click")`, start.Add(2*time.Hour), 25*time.Minute+30*time.Second, "security"),
		s("7c1e2a90-5b3d-4f6e-8a1b-000000000003", "Review pull requests", start.Add(4*time.Hour), 45*time.Minute, "switchboard", "review"),
	}
}()

// Session is the body a time tracker posts to the ingest route for one
// work session.
func Session(id, title string, at time.Time, d time.Duration, project string, tags ...string) map[string]any {
	m := map[string]any{"id": id, "title": title, "startedAt": at.UnixMilli(), "endedAt": at.Add(d).UnixMilli(),
		"durationSeconds": int64(d / time.Second), "project": project}
	if len(tags) > 0 {
		m["tags"] = tags
	}
	return m
}

// SheetRows reads the rows of the walk's tab from the sandbox, the
// header first; each row's first cell is its session's id.
func SheetRows(sandboxURL string) ([][]string, error) {
	var rows [][]string
	if err := getJSON(sandboxURL+"/_sandbox/sheets/spreadsheets/"+demoSpreadsheet+"/sheets/"+url.PathEscape(sheetTab)+"/rows", &rows); err != nil {
		return nil, fmt.Errorf("sandbox rows: %w", err)
	}
	return rows, nil
}

// sheets connects "worklog" through /oauth/sheets/…, posts the sessions to
// the ingest route (one twice, one with a formula for a title) and prints
// the sheet's rows from the sandbox: three rows, the formula as text.
func (d *Demo) sheets(ctx context.Context, sandboxURL, webhookURL string) error {
	Step("SheetConnection: connecting Google Sheets through the OAuth routes, as a browser would")
	if err := d.createWorklog(ctx, webhookURL); err != nil {
		return err
	}
	if err := d.browse(ctx, webhookURL, "sheets", SheetConnectionName, SheetConnectionName+"-token"); err != nil {
		return err
	}
	conn, err := d.waitConnection(ctx, "Active and Ready", func(c *v1alpha1.SheetConnection) bool {
		ok, _ := timesheet.Accepting(c)
		return ok && c.Status.ObservedGeneration == c.Generation && meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ReadyCondition)
	})
	if err != nil {
		return err
	}
	cols := make([]string, 0, len(conn.Status.ResolvedColumns))
	for f, c := range conn.Status.ResolvedColumns {
		cols = append(cols, f+"="+c)
	}
	sort.Strings(cols)
	fmt.Printf("    SheetConnection %s %s: sheet %q (id %d) in %s, Google user %s\n", SheetConnectionName, conn.Status.Phase,
		conn.Status.SheetTitle, ptrValue(conn.Status.SheetID), conn.Status.TimeZone, conn.Status.GoogleUserID)
	fmt.Printf("    status.resolvedColumns: %s\n", strings.Join(cols, " "))
	ingest := webhookURL + conn.Status.IngestPath
	fmt.Printf("    ingest URL %s (status.ingestPath)\n", ingest)

	Step("SheetConnection: the time tracker posts three sessions, one of them twice")
	if err := postSessions(ingest); err != nil {
		return err
	}
	syncs, err := d.waitSyncs(ctx, len(demoSessions))
	if err != nil {
		return err
	}
	for _, s := range syncs {
		fmt.Printf("    SheetSync %s %s: row %d (%s), attempts %d\n", s.Name, s.Status.Phase, s.Status.RowNumber, s.Status.UpdatedRange, s.Status.Attempts)
	}

	Step("SheetConnection: the sheet's rows, read from the sandbox")
	return showSheet(sandboxURL, syncs)
}

// createWorklog creates the connection and its ingest token Secret; the
// token Secret does not exist until the OAuth callback writes it, so the
// connection starts Revoked (seed 004 §4: revoked → active when a grant is
// stored).
func (d *Demo) createWorklog(ctx context.Context, webhookURL string) error {
	ingestSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: SheetConnectionName + "-ingest", Namespace: Namespace},
		StringData: map[string]string{timesheet.IngestTokenKey: SheetIngestToken}}
	if err := d.C.Create(ctx, ingestSecret); err != nil {
		return fmt.Errorf("create Secret %s: %w", ingestSecret.Name, err)
	}
	sc := &v1alpha1.SheetConnection{ObjectMeta: metav1.ObjectMeta{Name: SheetConnectionName, Namespace: Namespace}}
	sc.Spec.SpreadsheetID = demoSpreadsheet
	sc.Spec.Sheet.Title = sheetTab
	sc.Spec.OAuth.ClientSecretRef.Name = "google-client"
	sc.Spec.OAuth.TokenSecretRef.Name = SheetConnectionName + "-token"
	sc.Spec.IngestTokenSecretRef.Name = SheetConnectionName + "-ingest"
	// Letters and row-1 header names mixed; id mapped, so a crash between
	// Google's write and the status write never costs a duplicate row.
	sc.Spec.ColumnMapping = map[string]v1alpha1.ColumnRef{
		"id": "Session ID", "title": "B", "startedAt": "Started", "endedAt": "Ended",
		"durationSeconds": "E", "project": "Project", "tags": "Tags",
	}
	if err := d.C.Create(ctx, sc); err != nil {
		return fmt.Errorf("create SheetConnection %s: %w", SheetConnectionName, err)
	}
	fmt.Printf("    SheetConnection %s → tab %q of spreadsheet %s; Secret %s-ingest; %s-token is written by the callback\n",
		SheetConnectionName, sheetTab, demoSpreadsheet, SheetConnectionName, SheetConnectionName)
	c, err := d.waitConnection(ctx, "Revoked (no grant yet)", func(c *v1alpha1.SheetConnection) bool {
		return c.Status.Phase == v1alpha1.ConnectionRevoked
	})
	if err != nil {
		return err
	}
	fmt.Printf("    before connecting: phase %s; ingest answers 409\n", c.Status.Phase)
	if c.Status.IngestPath != "" {
		code, body, err := post(webhookURL+c.Status.IngestPath, SheetIngestToken, demoSessions[0])
		if err != nil {
			return err
		}
		if code != http.StatusConflict {
			return fmt.Errorf("ingest before connecting answered %d %s, want 409", code, body)
		}
		fmt.Printf("    POST (Revoked) → %d %s\n", code, body)
	}
	return nil
}

// postSessions posts each session once, the first one again, and shows
// two refusals.
func postSessions(ingest string) error {
	want := func(what string, code int, body []byte, err error, status int) error {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if code != status {
			return fmt.Errorf("%s: got %d %s, want %d", what, code, body, status)
		}
		fmt.Printf("    %-56s → %d %s\n", what, code, body)
		return nil
	}
	for i, s := range demoSessions {
		code, body, err := post(ingest, SheetIngestToken, s)
		if err := want(fmt.Sprintf("POST session %d %s", i+1, s["title"]), code, body, err, http.StatusAccepted); err != nil {
			return err
		}
	}
	code, body, err := post(ingest, SheetIngestToken, demoSessions[0])
	if err := want("POST session 1 again (the tracker retried)", code, body, err, http.StatusOK); err != nil {
		return err
	}
	bad := map[string]any{}
	for k, v := range demoSessions[2] {
		bad[k] = v
	}
	bad["durationSeconds"] = 60
	code, body, err = post(ingest, SheetIngestToken, bad)
	if err := want("POST a session whose duration disagrees", code, body, err, http.StatusBadRequest); err != nil {
		return err
	}
	code, body, err = post(ingest, "not-the-ingest-token-at-all", demoSessions[0])
	return want("POST with a wrong ingest token", code, body, err, http.StatusUnauthorized)
}

// post sends one JSON body with a Bearer token and returns the status
// and the body, trimmed.
func post(u, token string, in any) (int, []byte, error) {
	b, _ := json.Marshal(in)
	req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, bytes.TrimSpace(body), nil
}

// waitSyncs waits until the connection's n SheetSyncs are Succeeded and
// returns them by row.
func (d *Demo) waitSyncs(ctx context.Context, n int) ([]v1alpha1.SheetSync, error) {
	var syncs []v1alpha1.SheetSync
	err := poll.Until(ctx, "SheetSyncs Succeeded", pollEvery, 60*time.Second, func() (bool, error) {
		var list v1alpha1.SheetSyncList
		if err := d.C.List(ctx, &list, client.InNamespace(Namespace), client.MatchingLabels{timesheet.ConnectionLabel: SheetConnectionName}); err != nil {
			return false, poll.Stop(err)
		}
		done := 0
		for _, s := range list.Items {
			switch s.Status.Phase {
			case v1alpha1.SyncSucceeded:
				done++
			case v1alpha1.SyncFailed:
				return false, poll.Stop(fmt.Errorf("SheetSync %s Failed: %s", s.Name, s.Status.LastError))
			}
		}
		if len(list.Items) > n {
			return false, poll.Stop(fmt.Errorf("%d SheetSyncs for %d sessions", len(list.Items), n))
		}
		syncs = list.Items
		return done == n && len(list.Items) == n, fmt.Errorf("%d of %d", done, n)
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(syncs, func(i, j int) bool { return syncs[i].Status.RowNumber < syncs[j].Status.RowNumber })
	return syncs, nil
}

// showSheet prints the tab as the sandbox holds it, formatted values, and
// checks it: the header and three rows, the formula title as text (a
// stored formula would show its label, "click").
func showSheet(sandboxURL string, syncs []v1alpha1.SheetSync) error {
	rows, err := SheetRows(sandboxURL)
	if err != nil {
		return err
	}
	fmt.Printf("    GET /_sandbox/sheets/spreadsheets/%s/sheets/%s/rows\n", demoSpreadsheet, url.PathEscape(sheetTab))
	loc, _ := time.LoadLocation(sheetTimeZone)
	for i, r := range rows {
		cells := make([]string, len(r))
		for j, v := range r {
			cells[j] = strconv.Quote(v)
		}
		line := fmt.Sprintf("    %d  %s", i+1, strings.Join(cells, " "))
		if i > 0 && len(r) >= 4 && loc != nil {
			line += fmt.Sprintf("   (C, D as Date time: %s – %s)", serialTime(r[2], loc), serialTime(r[3], loc))
		}
		fmt.Println(line)
	}
	if len(rows) != 1+len(demoSessions) {
		return fmt.Errorf("the sheet has %d rows, want the header and %d", len(rows), len(demoSessions))
	}
	for i, s := range demoSessions {
		r := rows[i+1]
		if len(r) < 2 || r[0] != s["id"] || r[1] != s["title"] {
			return fmt.Errorf("row %d is %q, want session %s %q", i+2, r, s["id"], s["title"])
		}
	}
	for _, s := range syncs {
		if s.Status.RowNumber < 2 || int(s.Status.RowNumber) > len(rows) || rows[s.Status.RowNumber-1][0] != s.Spec.Session.ID {
			return fmt.Errorf("SheetSync %s says row %d, which does not hold session %s", s.Name, s.Status.RowNumber, s.Spec.Session.ID)
		}
	}
	fmt.Printf("    %d posts, %d rows under the header; row 3's title is the text %s, not a formula (valueInputOption=RAW)\n",
		len(demoSessions)+1, len(rows)-1, rows[2][1])
	return nil
}

// serialTime shows a date-time serial number (days since 1899-12-30, in
// the spreadsheet's time zone) as Sheets' Date time format would.
func serialTime(v string, loc *time.Location) string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return "?"
	}
	days := math.Floor(f)
	secs := math.Round((f - days) * 86400)
	t := time.Date(1899, 12, 30, 0, 0, 0, 0, loc).AddDate(0, 0, int(days)).Add(time.Duration(secs) * time.Second)
	return t.Format("2006-01-02 15:04:05")
}

// waitConnection polls the demo's SheetConnection until ok, for 60 s.
func (d *Demo) waitConnection(ctx context.Context, what string, ok func(*v1alpha1.SheetConnection) bool) (*v1alpha1.SheetConnection, error) {
	c, err := waitObject(ctx, d.C, client.ObjectKey{Namespace: Namespace, Name: SheetConnectionName}, 60*time.Second, ok)
	if err != nil {
		return nil, fmt.Errorf("SheetConnection %s: not %s: %w; phase %q, conditions: %+v", SheetConnectionName, what, err, c.Status.Phase, c.Status.Conditions)
	}
	return c, nil
}

func ptrValue(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
