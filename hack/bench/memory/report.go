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

package memory

import (
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/internal/resmetrics"
)

// printReading prints one reading as a row of the memory table, as soon
// as it is taken.
func printReading(x memReading, kinds int) {
	what := "idle (baseline): no object"
	if x.objects > 0 {
		what = fmt.Sprintf("%d of each kind (%d objects)", x.objects/kinds, x.objects)
	}
	fmt.Printf("%-34s %11.1f MiB %11.1f MiB %11.1f MiB %11.1f MiB %11.1f MiB %11.1f MiB\n", what,
		bench.MiB(x.managerRSS), bench.MiB(x.managerPeak), bench.MiB(x.managerHeap), bench.MiB(x.webhookRSS), bench.MiB(x.webhookPeak), bench.MiB(x.webhookHeap))
	fmt.Printf("%-34s resident set now, anonymous + file-backed: manager %.1f + %.1f MiB, webhook %.1f + %.1f MiB\n", "",
		bench.MiB(x.managerAnon), bench.MiB(x.managerFile), bench.MiB(x.webhookAnon), bench.MiB(x.webhookFile))
}

// reportMemory prints, after the readings, the growth per 1,000 objects
// of each stage (peak resident set, and live heap, which a soft limit
// does not bend), and the goals.
func reportMemory(r []memReading, o memoryOptions) error {
	for i := 1; i < len(r); i++ {
		per := float64(r[i].objects-r[i-1].objects) / 1000
		fmt.Printf("growth %d → %d objects, per 1,000 objects: manager %.2f MiB peak, %.2f MiB live heap; webhook %.2f MiB peak, %.2f MiB live heap\n",
			r[i-1].objects, r[i].objects, bench.MiB(r[i].managerPeak-r[i-1].managerPeak)/per, bench.MiB(r[i].managerHeap-r[i-1].managerHeap)/per,
			bench.MiB(r[i].webhookPeak-r[i-1].webhookPeak)/per, bench.MiB(r[i].webhookHeap-r[i-1].webhookHeap)/per)
	}
	last := r[len(r)-1]
	if len(r) >= 3 {
		first := r[1]
		lin := func(a, b, idle int64) float64 {
			return (float64(b-idle) / float64(last.objects)) / (float64(a-idle) / float64(first.objects))
		}
		fmt.Printf("per-object cost at %d against at %d objects (1.00 linear, below sublinear): manager %.2f, webhook %.2f\n",
			last.objects, first.objects, lin(first.managerPeak, last.managerPeak, r[0].managerPeak), lin(first.webhookPeak, last.webhookPeak, r[0].webhookPeak))
	}
	fmt.Printf("at %d objects, container limits %s and %s: manager peak %.1f MiB (goal ≤ 300, %.2f of it), webhook peak %.1f MiB (goal ≤ 150, %.2f of it)\n",
		last.objects, limitText(o.managerLimit), limitText(o.webhookLimit), bench.MiB(last.managerPeak), bench.MiB(last.managerPeak)/300, bench.MiB(last.webhookPeak), bench.MiB(last.webhookPeak)/150)
	return nil
}

// scrapeResources scrapes the manager's per-resource metrics once, as
// Prometheus would, after the readings (which it leaves as they are):
// how many series, how large, how long, and the manager's peak resident
// set after it beside the one before.
func scrapeResources(p memProcs, last memReading) error {
	start := time.Now()
	series, size := 0, int64(0)
	err := bench.Scrape("http://"+p.managerMetrics+resmetrics.Path, func(line string) {
		size += int64(len(line)) + 1
		if line != "" && !strings.HasPrefix(line, "#") {
			series++
		}
	})
	if err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Printf("then one scrape of the manager's %s at %d objects: %d series, %.1f MiB, %s; manager RSS %.1f MiB, peak %.1f MiB (%.1f before the scrape)\n",
		resmetrics.Path, last.objects, series, bench.MiB(size), took.Round(time.Millisecond), bench.MiB(p.manager.RSS()), bench.MiB(p.manager.PeakRSS()), bench.MiB(last.managerPeak))
	return nil
}

// limitText shows a container memory limit, in MiB.
func limitText(b int64) string {
	if b == 0 {
		return "none"
	}
	return fmt.Sprintf("%.0fMi", bench.MiB(b))
}
