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

package gsheets

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// These tests answer from a RoundTripper under the outbound policy, to pin
// what is sent where without an emulator; client_test.go drives the
// sandbox's Sheets emulator.

type recorder struct {
	reqs   []*http.Request
	bodies []string
	status int
	answer string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	b := ""
	if req.Body != nil {
		raw, _ := io.ReadAll(req.Body)
		b = string(raw)
	}
	r.reqs, r.bodies = append(r.reqs, req), append(r.bodies, b)
	status := r.status
	if status == 0 {
		status = http.StatusOK
	}
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(r.answer)), Request: req}, nil
}

func fakeClient(t *testing.T, ups *upstream.Set, rec *recorder) *Client {
	t.Helper()
	out, err := outbound.New(ups, outbound.Options{Transport: rec})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEndpointFollowsTheGoogleAPIsUpstream(t *testing.T) {
	overridden := upstream.NewSet()
	if err := overridden.Set("googleapis=http://sandbox.test/googleapis"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		ups  *upstream.Set
		want string
	}{
		// Sheets' own host while googleapis is the real one.
		{"default", upstream.NewSet(), "https://sheets.googleapis.com/v4/spreadsheets/sid"},
		{"overridden", overridden, "http://sandbox.test/googleapis/v4/spreadsheets/sid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{answer: `{"spreadsheetId":"sid","properties":{"timeZone":"Asia/Tokyo"},"sheets":[{"properties":{"sheetId":7,"title":"It's"}}]}`}
			got, err := fakeClient(t, c.ups, rec).Spreadsheet(context.Background(), "tok", "sid")
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Sheets) != 1 || got.TimeZone != "Asia/Tokyo" || got.Sheets[0] != (Sheet{ID: 7, Title: "It's"}) {
				t.Fatalf("got %+v", got)
			}
			u := rec.reqs[0].URL
			if s := u.Scheme + "://" + u.Host + u.Path; s != c.want {
				t.Fatalf("called %s, want %s", s, c.want)
			}
			if f := u.Query().Get("fields"); f != "spreadsheetId,properties.timeZone,sheets.properties(sheetId,title)" {
				t.Errorf("fields %q", f)
			}
			if a := rec.reqs[0].Header.Get("Authorization"); a != "Bearer tok" {
				t.Errorf("Authorization %q", a)
			}
		})
	}
}

func TestAppendSendsRawRowsAndReadsTheRows(t *testing.T) {
	rec := &recorder{answer: `{"spreadsheetId":"sid","tableRange":"'It''s'!A1:B4","updates":{"spreadsheetId":"sid","updatedRange":"'It''s'!A5:B6","updatedRows":2,"updatedColumns":2,"updatedCells":4}}`}
	c := fakeClient(t, upstream.NewSet(), rec)
	res, err := c.Append(context.Background(), "secret-token", "sid", "It's", [][]any{{"a", 1.5}, {"=HYPERLINK(\"x\",\"y\")", true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstRow != 5 || res.LastRow != 6 || res.UpdatedRange != "'It''s'!A5:B6" {
		t.Fatalf("got %+v", res)
	}
	req := rec.reqs[0]
	q := req.URL.Query()
	if req.Method != http.MethodPost || q.Get("valueInputOption") != "RAW" || q.Get("insertDataOption") != "INSERT_ROWS" {
		t.Fatalf("%s %s", req.Method, req.URL)
	}
	if p := req.URL.Path; p != "/v4/spreadsheets/sid/values/'It''s'!A1:append" {
		t.Errorf("path %q", p)
	}
	if !strings.Contains(rec.bodies[0], `"values":[["a",1.5],["=HYPERLINK(\"x\",\"y\")",true]]`) {
		t.Errorf("body %s", rec.bodies[0])
	}
	for _, tr := range []string{res.Request, res.Response} {
		if tr == "" || strings.Contains(tr, "secret-token") {
			t.Errorf("trace %q", tr)
		}
	}
	if !strings.Contains(res.Request, `"valueInputOption":"RAW"`) || !strings.Contains(res.Response, `"updatedRange"`) {
		t.Errorf("traces %s / %s", res.Request, res.Response)
	}
}

func TestAppendTraceIsBounded(t *testing.T) {
	rec := &recorder{answer: `{"updates":{"updatedRange":"Log!A2:A2"}}`}
	big := strings.Repeat("勤", 3000)
	res, err := fakeClient(t, upstream.NewSet(), rec).Append(context.Background(), "t", "sid", "Log", [][]any{{big}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Request) > traceBytes+len("…") || !strings.HasSuffix(res.Request, "…") || !utf8Valid(res.Request) {
		t.Fatalf("request trace of %d bytes", len(res.Request))
	}
	if res.FirstRow != 2 || res.LastRow != 2 {
		t.Fatalf("rows %d..%d", res.FirstRow, res.LastRow)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestAppendRefusesAnAnswerWithoutRows(t *testing.T) {
	for _, answer := range []string{`{}`, `{"updates":{"updatedRange":"Log!A:A"}}`, `{"updates":{"updatedRange":"nonsense"}}`} {
		rec := &recorder{answer: answer}
		_, err := fakeClient(t, upstream.NewSet(), rec).Append(context.Background(), "t", "sid", "Log", [][]any{{"x"}})
		if !outbound.IsPermanent(err) {
			t.Errorf("%s: got %v, want a permanent error", answer, err)
		}
	}
}

func TestRowAndColumn(t *testing.T) {
	rec := &recorder{answer: `{"range":"Log!F1:F5","majorDimension":"ROWS","values":[["key"],[],["k2"],[""],["k4"]]}`}
	c := fakeClient(t, upstream.NewSet(), rec)
	col, err := c.Column(context.Background(), "t", "sid", "勤怠 ログ", "F")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(col, "|") != "key||k2||k4" {
		t.Fatalf("column %q", col)
	}
	if p, q := rec.reqs[0].URL.Path, rec.reqs[0].URL.Query(); p != "/v4/spreadsheets/sid/values/'勤怠 ログ'!F:F" || q.Get("valueRenderOption") != "FORMATTED_VALUE" {
		t.Fatalf("called %s ?%s", p, rec.reqs[0].URL.RawQuery)
	}
	rec.answer = `{"range":"Log!A1:C1","majorDimension":"ROWS","values":[["Date","It's",3]]}`
	row, err := c.Row(context.Background(), "t", "sid", "Log", 1)
	if err != nil || strings.Join(row, "|") != "Date|It's|3" {
		t.Fatalf("row %q %v", row, err)
	}
	if p := rec.reqs[1].URL.Path; p != "/v4/spreadsheets/sid/values/'Log'!1:1" {
		t.Fatalf("called %s", p)
	}
	rec.answer = `{"range":"Log!A9:C9","majorDimension":"ROWS"}`
	if row, err := c.Row(context.Background(), "t", "sid", "Log", 9); err != nil || len(row) != 0 {
		t.Fatalf("empty row %q %v", row, err)
	}
	if _, err := c.Row(context.Background(), "t", "sid", "Log", 0); !outbound.IsPermanent(err) {
		t.Errorf("row 0: %v", err)
	}
	if _, err := c.Column(context.Background(), "t", "sid", "Log", "F1"); !outbound.IsPermanent(err) {
		t.Errorf("column F1: %v", err)
	}
	if len(rec.reqs) != 3 {
		t.Errorf("%d calls; the refused arguments must not be sent", len(rec.reqs))
	}
}

func TestClassifySheetsCases(t *testing.T) {
	cases := []struct {
		name         string
		status       int
		body         string
		class        outbound.Class
		unauth, gone bool
	}{
		{"403 not shared", 403, `{"error":{"code":403,"message":"The caller does not have permission","status":"PERMISSION_DENIED"}}`, outbound.Permanent, true, false},
		{"403 rate limit", 403, `{"error":{"errors":[{"domain":"usageLimits","reason":"rateLimitExceeded","message":"Rate Limit Exceeded"}],"code":403,"message":"Rate Limit Exceeded"}}`, outbound.Transient, false, false},
		{"429", 429, `{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}`, outbound.Transient, false, false},
		{"400 missing sheet", 400, `{"error":{"code":400,"message":"Unable to parse range: 'Gone'!A1","status":"INVALID_ARGUMENT"}}`, outbound.Permanent, false, true},
		{"400 other", 400, `{"error":{"code":400,"message":"Invalid values[0][0]","status":"INVALID_ARGUMENT"}}`, outbound.Permanent, false, false},
		{"404", 404, `{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND"}}`, outbound.Permanent, false, true},
		{"401", 401, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`, outbound.Permanent, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{status: c.status, answer: c.body}
			_, err := fakeClient(t, upstream.NewSet(), rec).Spreadsheet(context.Background(), "t", "sid")
			e, ok := outbound.Classify(err)
			if !ok || e.Class != c.class || e.Status != c.status {
				t.Fatalf("got %v (%+v)", err, e)
			}
			if errors.Is(err, ErrUnauthorized) != c.unauth || errors.Is(err, ErrNotFound) != c.gone {
				t.Fatalf("%v: unauthorized %v, not found %v", err, errors.Is(err, ErrUnauthorized), errors.Is(err, ErrNotFound))
			}
		})
	}
}
