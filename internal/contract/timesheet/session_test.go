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

package timesheet_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
)

// valid is a session that passes; each row below breaks one field.
func valid() map[string]any {
	return map[string]any{
		"id": "0b6f6f3e-8a53-4d55-9a0e-0a8b7c1d2e3f", "userId": "1c0e…ignored",
		"title": "Deep work", "startedAt": 1_763_800_000_000, "endedAt": 1_763_803_600_500, "durationSeconds": 3600,
		"project": "switchboard", "notes": "", "tags": []string{"focus", "go"}, "skill": "Go", "intensity": "high",
	}
}

func body(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every validation row of seed 004 §1 and §5, each naming its field.
func TestEachInvalidFieldIsNamed(t *testing.T) {
	long := strings.Repeat("あ", 257)
	rows := []struct {
		name  string
		edit  func(m map[string]any)
		field string
	}{
		{"id missing", func(m map[string]any) { delete(m, "id") }, "id"},
		{"id empty", func(m map[string]any) { m["id"] = "" }, "id"},
		{"id with a slash", func(m map[string]any) { m["id"] = "a/b" }, "id"},
		{"id not a string", func(m map[string]any) { m["id"] = 7 }, "id"},
		{"title missing", func(m map[string]any) { delete(m, "title") }, "title"},
		{"title null", func(m map[string]any) { m["title"] = nil }, "title"},
		{"title empty", func(m map[string]any) { m["title"] = "" }, "title"},
		{"title of 257 characters", func(m map[string]any) { m["title"] = long }, "title"},
		{"startedAt missing", func(m map[string]any) { delete(m, "startedAt") }, "startedAt"},
		{"startedAt a string", func(m map[string]any) { m["startedAt"] = "2026-11-22T10:00:00Z" }, "startedAt"},
		{"startedAt fractional", func(m map[string]any) { m["startedAt"] = 1.5 }, "startedAt"},
		{"startedAt negative", func(m map[string]any) { m["startedAt"] = -1 }, "startedAt"},
		{"endedAt missing", func(m map[string]any) { delete(m, "endedAt") }, "endedAt"},
		{"endedAt before startedAt", func(m map[string]any) { m["endedAt"] = 1_763_799_999_999 }, "endedAt"},
		{"durationSeconds missing", func(m map[string]any) { delete(m, "durationSeconds") }, "durationSeconds"},
		{"durationSeconds negative", func(m map[string]any) { m["durationSeconds"] = -1 }, "durationSeconds"},
		{"durationSeconds two seconds off", func(m map[string]any) { m["durationSeconds"] = 3602 }, "durationSeconds"},
		{"durationSeconds a string", func(m map[string]any) { m["durationSeconds"] = "3600" }, "durationSeconds"},
		{"project of 257 characters", func(m map[string]any) { m["project"] = long }, "project"},
		{"notes not a string", func(m map[string]any) { m["notes"] = 3 }, "notes"},
		{"skill of 257 characters", func(m map[string]any) { m["skill"] = long }, "skill"},
		{"intensity of 257 characters", func(m map[string]any) { m["intensity"] = long }, "intensity"},
		{"tags not an array", func(m map[string]any) { m["tags"] = "focus" }, "tags"},
		{"a tag not a string", func(m map[string]any) { m["tags"] = []any{"ok", 3} }, "tags[1]"},
		{"a tag of 257 characters", func(m map[string]any) { m["tags"] = []any{long} }, "tags[0]"},
		{"33 tags", func(m map[string]any) { m["tags"] = make([]string, 33) }, "tags"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			m := valid()
			row.edit(m)
			items, batch, err := timesheet.Parse(body(t, m))
			if err != nil || batch || len(items) != 1 {
				t.Fatalf("parse: %v %v %d", err, batch, len(items))
			}
			if items[0].Err == nil || items[0].Err.Field != row.field {
				t.Fatalf("want an error on %s, got %+v", row.field, items[0].Err)
			}
		})
	}
}

func TestAValidSessionIsReadWhole(t *testing.T) {
	items, batch, err := timesheet.Parse(body(t, valid()))
	if err != nil || batch || len(items) != 1 || items[0].Err != nil {
		t.Fatalf("%v %v %+v", err, batch, items)
	}
	s := items[0].Session
	want := v1alpha1.TimeTrackerSession{ID: "0b6f6f3e-8a53-4d55-9a0e-0a8b7c1d2e3f", Title: "Deep work", StartedAt: 1_763_800_000_000,
		EndedAt: 1_763_803_600_500, DurationSeconds: 3600, Project: "switchboard", Tags: []string{"focus", "go"}, Skill: "Go", Intensity: "high"}
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Fatalf("got %+v\nwant %+v", s, want)
	}
}

// The tolerance: the tracker counts whole seconds, the timestamps are
// milliseconds.
func TestDurationAgreesWithinOneSecondAndIsRounded(t *testing.T) {
	for _, tc := range []struct {
		d    any
		want int64
		ok   bool
	}{{3600, 3600, true}, {3601, 3601, true}, {3599, 3599, true}, {3600.5, 3601, true}, {1.5e3, 0, false}, {3602, 0, false}} {
		m := valid()
		m["durationSeconds"] = tc.d
		items, _, _ := timesheet.Parse(body(t, m))
		if ok := items[0].Err == nil; ok != tc.ok || ok && items[0].Session.DurationSeconds != tc.want {
			t.Errorf("durationSeconds %v: ok=%v (%v) stored %d", tc.d, ok, items[0].Err, items[0].Session.DurationSeconds)
		}
	}
}

func TestABatchAnswersPerSession(t *testing.T) {
	bad := valid()
	bad["id"] = "second"
	delete(bad, "title")
	good := valid()
	items, batch, err := timesheet.Parse(body(t, map[string]any{"sessions": []any{good, bad}}))
	if err != nil || !batch || len(items) != 2 {
		t.Fatalf("%v %v %d", err, batch, len(items))
	}
	if items[0].Err != nil || items[1].Err == nil || items[1].Err.Field != "sessions[1].title" || items[1].ID != "second" {
		t.Fatalf("%+v / %+v", items[0].Err, items[1])
	}
}

func TestBodiesThatAreNeitherFormAreRefused(t *testing.T) {
	many := make([]any, timesheet.MaxBatch+1)
	for i := range many {
		many[i] = valid()
	}
	for name, b := range map[string]string{
		"an array":          `[{"id":"a"}]`,
		"a string":          `"x"`,
		"null":              `null`,
		"sessions not list": `{"sessions": {"id": "a"}}`,
		"no sessions":       `{"sessions": []}`,
		"101 sessions":      string(body(t, map[string]any{"sessions": many})),
	} {
		if _, _, err := timesheet.Parse([]byte(b)); err == nil {
			t.Errorf("%s was accepted", name)
		}
	}
}

// FuzzParse: the ingest body parser never panics, and what it accepts
// satisfies the rules the API server's CEL enforces again.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"id":"a","title":"t","startedAt":0,"endedAt":1000,"durationSeconds":1}`))
	f.Add([]byte(`{"sessions":[{"id":"a","title":"t","startedAt":0,"endedAt":1000,"durationSeconds":1,"tags":["x"]},{"id":"b"}]}`))
	f.Add([]byte(`{"id":"a","title":"t","startedAt":1e20,"endedAt":1e21,"durationSeconds":1e18}`))
	f.Add([]byte(`{"sessions":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		items, _, err := timesheet.Parse(b)
		if err != nil {
			return
		}
		for _, it := range items {
			if it.Err != nil {
				continue
			}
			s := it.Session
			d := (s.EndedAt - s.StartedAt) / 1000
			if s.ID == "" || s.Title == "" || s.EndedAt < s.StartedAt || s.StartedAt < 0 || s.DurationSeconds < 0 ||
				s.DurationSeconds-d > timesheet.DurationTolerance || d-s.DurationSeconds > timesheet.DurationTolerance || len(s.Tags) > timesheet.MaxTags {
				t.Fatalf("accepted an invalid session %+v", s)
			}
		}
	})
}

// A SheetSync is its connection's shard's, so the manager that reconciles
// the connection reconciles its syncs.
func TestASyncTakesItsConnectionsShard(t *testing.T) {
	c := &v1alpha1.SheetConnection{}
	c.Name, c.Namespace = "worklog", "ns"
	c.Labels = map[string]string{v1alpha1.ShardLabel: "shard2", "team": "time"}
	s := timesheet.NewSync(c, v1alpha1.TimeTrackerSession{ID: "s-1"})
	if got := s.Labels; got[v1alpha1.ShardLabel] != "shard2" || got[timesheet.ConnectionLabel] != "worklog" || got["team"] != "" {
		t.Fatalf("labels %v: want the shard and the connection, nothing else", got)
	}
	c.Labels = nil
	if s := timesheet.NewSync(c, v1alpha1.TimeTrackerSession{ID: "s-1"}); len(s.Labels) != 1 {
		t.Fatalf("labels %v: want only the connection's", s.Labels)
	}
}
