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
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

func TestTheRowFollowsTheMappingInTheSheetsTimeZone(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	s := v1alpha1.TimeTrackerSession{ID: "s1", Title: `=HYPERLINK("http://x","y")`, DurationSeconds: 90, Tags: []string{"a", "b"},
		StartedAt: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC).UnixMilli(), EndedAt: time.Date(2026, 11, 22, 0, 1, 30, 0, time.UTC).UnixMilli()}
	row := sessionRow(s, map[string]string{"title": "A", "startedAt": "B", "durationSeconds": "D", "tags": "F", "id": "C"}, tokyo)
	if len(row) != 6 || row[0] != s.Title || row[2] != "s1" || row[3] != int64(90) || row[4] != nil || row[5] != "a, b" {
		t.Fatalf("row %#v", row)
	}
	// 2026-11-22 09:00 in Tokyo: 46348 days after 1899-12-30, and 9/24.
	if got, want := row[1].(float64), 46348+9.0/24; got < want-1e-9 || got > want+1e-9 {
		t.Fatalf("startedAt serial %v, want %v", got, want)
	}
}
