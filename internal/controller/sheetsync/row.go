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
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/upstream/gsheets"
)

// sessionRow is the row a session becomes, from column A to the last mapped
// column; unmapped columns are nil, which Sheets leaves empty. cols maps
// each field to its column letter (status.resolvedColumns).
//
//   - startedAt and endedAt are date-time serial numbers in loc, the
//     spreadsheet's time zone: what Sheets itself stores for a date-time,
//     so the cells sort, compute and show as a date-time once the column
//     has a Date time number format (docs/sheetconnection.md). RAW input
//     keeps a number a number.
//   - durationSeconds is a number; tags are joined with ", ".
//   - Text is written as is: the append uses valueInputOption=RAW, so a
//     title such as =HYPERLINK(…) stays text and never becomes a formula.
func sessionRow(s v1alpha1.TimeTrackerSession, cols map[string]string, loc *time.Location) []any {
	values := map[string]any{
		"id": s.ID, "title": s.Title,
		"startedAt":       gsheets.Serial(time.UnixMilli(s.StartedAt), loc),
		"endedAt":         gsheets.Serial(time.UnixMilli(s.EndedAt), loc),
		"durationSeconds": s.DurationSeconds,
		"project":         s.Project, "notes": s.Notes, "skill": s.Skill, "intensity": s.Intensity,
		"tags": strings.Join(s.Tags, ", "),
	}
	width := 0
	idx := make(map[string]int, len(cols))
	for field, col := range cols {
		i, err := gsheets.ColumnIndex(col)
		if err != nil {
			continue
		}
		idx[field] = i
		width = max(width, i)
	}
	row := make([]any, width)
	for field, i := range idx {
		if v, ok := values[field]; ok {
			row[i-1] = v
		}
	}
	return row
}
