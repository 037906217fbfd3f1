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

package tokens

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
)

// report prints the kind's figures.
func (r *tokenRun) report(k *tokenKind, p *tokenPlan) {
	n := float64(len(r.late))
	fmt.Printf("%-72s %11s %11s %11s %11s\n", "lateness (seen in the informer − due)", "min", "p50", "p99", "max")
	row := func(what string, d []time.Duration) {
		if len(d) == 0 {
			fmt.Printf("%-72s %11s\n", what, "-")
			return
		}
		fmt.Printf("%-72s %11s %11s %11s %11s\n", what, d[0].Round(time.Millisecond), bench.PctMs(d, 50), bench.PctMs(d, 99), d[len(d)-1].Round(time.Millisecond))
	}
	row(fmt.Sprintf("baseline: bare client, %d writers, token call + Secret update + status patch", k.workers), r.baseLate)
	row("controller: refresh written (status records the new expiry)", r.late)
	row("(controller: the token Secret holds the new pair, its lock freed)", r.rewriteLate)
	fmt.Printf("ratio controller/baseline: p99 %s, max %s; the last of %d refreshed %s the first due instant (baseline: its last %s)\n",
		lateRatio(bench.PctD(r.late, 99), bench.PctD(r.baseLate, 99)), lateRatio(r.late[len(r.late)-1], r.baseLate[len(r.baseLate)-1]), len(r.late),
		relative(r.lastRefresh.Sub(p.firstDue)), relative(r.lastBase.Sub(p.firstDue.Add(r.shift))))
	fmt.Printf("refreshed before the old access token expired: %d of %d (goal: all)\n", r.beforeExpiry, len(r.late))
	token, other := 0, []string{}
	routes := make([]string, 0, len(r.calls))
	for route := range r.calls {
		routes = append(routes, route)
	}
	sort.Strings(routes)
	for _, route := range routes {
		if route == k.tokenRoute {
			token = r.calls[route]
			continue
		}
		other = append(other, fmt.Sprintf("%s %.2f", route, float64(r.calls[route])/n))
	}
	otherText := "none"
	if len(other) > 0 {
		otherText = strings.Join(other, ", ")
	}
	fmt.Printf("token endpoint calls per refresh: %.2f (goal 1.00); other upstream calls per refresh: %s\n", float64(token)/n, otherText)
	fmt.Printf("manager API requests per refresh: %.2f writes (the baseline's: 2), %.2f reads\n",
		float64(r.after[1]-r.before[1])/n, float64(r.after[0]-r.before[0])/n)
	items, wait, work := r.queueAfter.Since(r.queueBefore)
	fmt.Printf("controller workqueue over the refreshes: %.0f reconciles (%.2f per refresh: 1 is the refresh alone, as its own token Secret write wakes nothing;\n"+
		"more are other timers, e.g. a SheetConnection's 10-minute header recheck), mean %s waiting in the queue once ready, mean %s reconciling (%d workers: at most %.0f reconciles/s)\n",
		items, items/n, wait.Round(100*time.Microsecond), work.Round(100*time.Microsecond), k.workers, float64(k.workers)*float64(time.Second)/float64(max(work, time.Microsecond)))
}

// lateRatio is a controller's lateness over the baseline's, or, when the
// controller wrote before the due instant (its lead), that it was early.
func lateRatio(controller, baseline time.Duration) string {
	if controller < 0 {
		return "early (" + relative(controller) + " due)"
	}
	return fmt.Sprintf("%.1f", bench.Ratio(controller, baseline))
}

// relative is d after, or before, an instant.
func relative(d time.Duration) string {
	if d < 0 {
		return (-d).Round(time.Millisecond).String() + " before"
	}
	return d.Round(time.Millisecond).String() + " after"
}
