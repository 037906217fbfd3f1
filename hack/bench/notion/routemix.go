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

package notion

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
)

// The routes table's design: the four rows interleaved request by
// request, so that each route's figure is paired with the baseline's at
// the same load and moment, and a pause of the rig (a garbage
// collection, an etcd compaction) weighs on every row alike.

// routeWindows split each client count's cycles into windows, each
// started once the controllers have written the status of every
// PaperSync the last one created (settleSyncs).
const routeWindows = 8

// resamplings is how many bootstrap resamplings of the cycles the
// interval of each ratio is read from.
const resamplings = 2000

// rowOrders are the orders of the four rows in a cycle, by cycle number
// mod 4: a Williams design, in which each row is at each place of a cycle,
// and right after each other row, in one cycle of four.
var rowOrders = [4][4]int{{0, 1, 3, 2}, {1, 2, 0, 3}, {2, 3, 1, 0}, {3, 0, 2, 1}}

// sent is one request of a cycle: its latency, and whether it was
// accepted.
type sent struct {
	lat time.Duration
	ok  bool
}

// cycle is one request of each row, indexed by row, sent back to back
// by one client.
type cycle [len(rowOrders)]sent

// runWindow runs count cycles, numbered from first, from clients
// goroutines, each taking the next cycle once it has finished its last;
// page names each request's new page. It answers the cycles and the
// window's wall time.
func runWindow(rows []routeRow, clients, first, count int, page func() string) ([]cycle, time.Duration, error) {
	out := make([]cycle, count)
	errs := make([]error, clients)
	var next atomic.Int64
	var wg sync.WaitGroup
	began := time.Now()
	for g := range clients {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < count && errs[g] == nil; i = int(next.Add(1)) - 1 {
				for _, k := range rowOrders[(first+i)%len(rowOrders)] {
					send := rows[k].prepare(page())
					t0 := time.Now()
					ok, err := send()
					out[i][k] = sent{lat: time.Since(t0), ok: ok}
					if err != nil {
						errs[g] = err
						break
					}
				}
			}
		})
	}
	wg.Wait()
	return out, time.Since(began), errors.Join(errs...)
}

// countAccepted is how many of cycles' requests were accepted.
func countAccepted(cycles []cycle) int {
	n := 0
	for _, c := range cycles {
		for _, s := range c {
			if s.ok {
				n++
			}
		}
	}
	return n
}

// routeMix is one client count's windows.
type routeMix struct {
	windows [][]cycle
	took    time.Duration
}

// add records a window's cycles and wall time.
func (m *routeMix) add(cycles []cycle, took time.Duration) {
	m.windows, m.took = append(m.windows, cycles), m.took+took
}

// pair is the baseline's latency and a row's in one cycle.
type pair struct{ base, row time.Duration }

// pairs are the cycles' (baseline, row k) latencies, where both were
// accepted.
func pairs(cycles []cycle, k int) []pair {
	var out []pair
	for _, c := range cycles {
		if c[0].ok && c[k].ok {
			out = append(out, pair{c[0].lat, c[k].lat})
		}
	}
	return out
}

// pairRatio is Σ baseline latency / Σ row latency over ps (0 for none).
func pairRatio(ps []pair) float64 {
	var b, r time.Duration
	for _, p := range ps {
		b, r = b+p.base, r+p.row
	}
	if r == 0 {
		return 0
	}
	return float64(b) / float64(r)
}

// toBaseline is row k's ratio to the baseline over every window's
// cycles, its bootstrap interval (2.5th and 97.5th percentile of the
// ratio over resamplings of the cycles), and the median of the windows'
// own ratios.
func (m *routeMix) toBaseline(k int, rng *rand.Rand) (ratio, lo, hi, median float64) {
	var all []pair
	perWindow := make([]float64, 0, len(m.windows))
	for _, w := range m.windows {
		ps := pairs(w, k)
		all = append(all, ps...)
		if len(ps) > 0 {
			perWindow = append(perWindow, pairRatio(ps))
		}
	}
	if len(all) == 0 {
		return 0, 0, 0, 0
	}
	boot := make([]float64, resamplings)
	draw := make([]pair, len(all))
	for b := range boot {
		for i := range draw {
			draw[i] = all[rng.IntN(len(all))]
		}
		boot[b] = pairRatio(draw)
	}
	sort.Float64s(boot)
	return pairRatio(all), boot[resamplings*25/1000], boot[resamplings*975/1000-1], medianOf(perWindow)
}

// medianOf is the median of xs (0 for none); it sorts xs.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

// row is row k's accepted requests' latencies, sorted, and how many of
// its requests were not accepted.
func (m *routeMix) row(k int) (lat []time.Duration, refused int) {
	for _, w := range m.windows {
		for _, c := range w {
			if c[k].ok {
				lat = append(lat, c[k].lat)
			} else {
				refused++
			}
		}
	}
	bench.SortDurations(lat)
	return lat, refused
}

// printMixHeader says what the table is and how each figure is computed.
func printMixHeader(per int) {
	fmt.Printf("\nNotion routes, interleaved: at each client count %d cycles in %d windows of %d, loopback, real API server. A cycle is one request of each row,\n", per*routeWindows, routeWindows, per)
	fmt.Println("sent back to back by one client, in one of four orders by cycle number (a b d c, b c a d, c d b a, d a c b: each row at each place,")
	fmt.Println("and right after each other row, in a quarter of the cycles); each client takes the next cycle once it has finished its last, so every")
	fmt.Println("row meets the same load at the same moment. Each request is a new page (one PaperSync); each window starts once the controllers have")
	fmt.Println("written every sync's status. Running meanwhile: the NotionIntegration and PaperSync controllers in process, the integration suspended")
	fmt.Println("(each sync costs them one status write, whatever its row); the webhook routes in process with cmd/webhook's client and cache, rate limit off.")
	fmt.Println("accepted: requests answered queued (baseline: created); p50 p95 p99 mean: their latency, request sent to answer read (the sender's work,\n  the body and an event's signature or the baseline's object, is done before the clock starts).")
	fmt.Println("to baseline = Σ baseline latency / Σ row latency over the cycles where both were accepted: with the same clients in a closed loop the rate")
	fmt.Println("  is clients / mean latency, so this is the row's rate over the baseline's at the same load. The routes' own CPU (the webhook runs in this")
	fmt.Println("  process) slows all four rows alike, so it is the row's extra time per request, not its rate alone on the rig.")
	fmt.Printf("  [lo–hi]: 2.5th–97.5th percentile of that ratio over %d resamplings of the cycles with replacement (a cycle's pair kept together;\n", resamplings)
	fmt.Println("  neighbouring cycles taken as independent). windows: the median of the same ratio computed within each window.")
	fmt.Println("mix/s: all four rows' accepted requests over the windows' wall time (settling excluded), the rig's rate on this mix.")
	fmt.Printf("%-8s %-36s %8s %8s %8s %8s %8s   %s\n", "clients", "row", "accepted", "p50", "p95", "p99", "mean", "to baseline [lo–hi] / windows (≥ 0.9)")
}

// printMix prints one client count's rows, the baseline first, and the
// mix's rate.
func printMix(clients int, rows []routeRow, m *routeMix) {
	rng := rand.New(rand.NewPCG(34, uint64(clients)))
	total := 0
	for k, r := range rows {
		lat, refused := m.row(k)
		total += len(lat)
		ratio := "-"
		if k > 0 {
			v, lo, hi, med := m.toBaseline(k, rng)
			ratio = fmt.Sprintf("%.2f [%.2f–%.2f] / %.2f", v, lo, hi, med)
		}
		fmt.Printf("%-8d %-36s %8d %8s %8s %8s %8s   %s", clients, r.name, len(lat), bench.PctMs(lat, 50), bench.PctMs(lat, 95), bench.PctMs(lat, 99),
			meanMs(lat), ratio)
		if refused > 0 {
			fmt.Printf("   (%d not accepted)", refused)
		}
		fmt.Println()
	}
	fmt.Printf("%-8d %-36s %8.0f/s over %s\n", clients, "mix/s", float64(total)/m.took.Seconds(), m.took.Round(100*time.Millisecond))
}

// meanMs is the mean of d, rounded as bench.PctMs rounds.
func meanMs(d []time.Duration) string {
	if len(d) == 0 {
		return "-"
	}
	return bench.PctMs([]time.Duration{bench.MeanD(d)}, 50)
}
