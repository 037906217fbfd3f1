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

package sheets

import (
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetsync"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// sheetRows counts the rows under the sheet's header, their distinct
// session ids, and the rows that repeat a session.
func sheetRows(rig *sheetsRig) (rows, distinct, dups int) {
	all := rig.sheets.Rows(bench.SheetsID, bench.SheetsTab)
	idCol := -1
	for i, h := range testenv.SheetHeader {
		if h == "Session ID" {
			idCol = i
		}
	}
	ids := map[string]int{}
	for _, r := range all[1:] {
		if idCol >= 0 && idCol < len(r) {
			ids[r[idCol]]++
		}
	}
	for _, k := range ids {
		if k > 1 {
			dups += k - 1
		}
	}
	return len(all) - 1, len(ids), dups
}

// reportSheets prints the Sheets benchmark's figures and checks the sheet
// holds one row per session (total, the baselines' included).
func reportSheets(rig *sheetsRig, runs []*sheetsRun, n, rounds, total int) error {
	rows, distinct, dups := sheetRows(rig)
	fmt.Printf("%-70s %10s %12s %10s %10s %10s\n", "", "time", "per second", "p50", "p95", "p99")
	line := func(what string, r sheetsRate) {
		fmt.Printf("%-70s %10s %12.0f %10s %10s %10s\n", what, r.took.Round(time.Millisecond), r.perSecond(n), bench.PctMs(r.lat, 50), bench.PctMs(r.lat, 95), bench.PctMs(r.lat, 99))
	}
	for _, r := range runs {
		fmt.Printf("%d clients:\n", r.clients)
		line(fmt.Sprintf("  baseline: bare client, %d SheetSync creates, nothing reconciling", n), r.idle)
		line(fmt.Sprintf("  baseline: bare client, %d SheetSync creates, the manager draining (%d rounds)", n, rounds/2), r.drainedBase)
		line(fmt.Sprintf("  ingest route: %d sessions accepted (202), the manager draining (%d rounds)", n, rounds/2), r.route)
		fmt.Printf("  ratio ingest/baseline: accepted per second %.2f against creates while draining (goal ≥ 0.9), %.2f against idle creates; p99 latency %.2f, %.2f\n",
			r.route.perSecond(n)/r.drainedBase.perSecond(n), r.route.perSecond(n)/r.idle.perSecond(n),
			bench.Ratio(bench.PctD(r.route.lat, 99), bench.PctD(r.drainedBase.lat, 99)), bench.Ratio(bench.PctD(r.route.lat, 99), bench.PctD(r.idle.lat, 99)))
		fmt.Printf("  the route's mean latency %s at the client, %s of it inside the webhook server's handler (its request duration metric; the baseline's creates: mean %s)\n",
			bench.MeanD(r.route.lat).Round(100*time.Microsecond), r.served.mean().Round(100*time.Microsecond), bench.MeanD(r.drainedBase.lat).Round(100*time.Microsecond))
		fmt.Printf("  values.append calls the sandbox counted: %d (%.1f sessions per append; pacing 1 append/s per connection, at most %d rows each)\n",
			r.appends, float64(n)/float64(max(r.appends, 1)), sheetsync.MaxRows)
		fmt.Printf("  the route's sessions Succeeded %s after each round's first post (%s after its last), summed over its %d rounds; %d Failed\n",
			r.drained.Round(time.Millisecond), r.afterLast.Round(time.Millisecond), rounds/2, r.failed)
		fmt.Printf("  API requests per session, ingest and drain (the webhook's create included): %.2f writes (goal ≤ 2.0), %.2f reads\n",
			float64(r.apiWrites)/float64(n), float64(r.apiRead)/float64(n))
	}
	fmt.Printf("rows in the sheet under the header: %d (want %d, the baselines' included); distinct session ids %d, duplicate rows %d\n",
		rows, total, distinct, dups)
	for _, r := range runs {
		if r.failed != 0 {
			return fmt.Errorf("%d sessions failed at %d clients", r.failed, r.clients)
		}
	}
	if rows != total || dups != 0 {
		return fmt.Errorf("the sheet has %d rows (%d duplicates) for %d sessions", rows, dups, total)
	}
	return nil
}
