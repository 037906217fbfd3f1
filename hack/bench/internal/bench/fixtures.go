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

package bench

import (
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// The fixtures more than one suite writes into its objects.
const (
	// DeckURL is the one deck every SlideStock stocks.
	DeckURL = "https://speakerdeck.com/jnunemaker/atom"
	// SheetsID and SheetsTab are the spreadsheet and sheet of the Sheets
	// suite's connection (and of the memory suite's).
	SheetsID  = "1BenchSpreadsheet000000000000000000000000000"
	SheetsTab = "Time log"
)

// CalendarName is the calendar of the i-th CalendarWatch.
func CalendarName(i int) string { return fmt.Sprintf("w%04d@example.com", i) }

// Session is the i-th session of a run: ten minutes each, one after
// another, so that session order is i order.
func Session(prefix string, i int) v1alpha1.TimeTrackerSession {
	start := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 10 * time.Minute)
	return v1alpha1.TimeTrackerSession{
		ID: fmt.Sprintf("%s-%05d", prefix, i), Title: fmt.Sprintf("Session %d", i),
		StartedAt: start.UnixMilli(), EndedAt: start.Add(9 * time.Minute).UnixMilli(), DurationSeconds: 540,
		Project: "bench", Tags: []string{"bench", "load"},
	}
}
