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
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
)

// The routes table's printing: what it measured and how (printMixHeader),
// and each client count's rows (printMix).

// printMixHeader says what the table is and how each figure is computed;
// split says where the control plane and the clients run.
func printMixHeader(requests int, split string) {
	orders := make([]string, len(rowOrders))
	for i, o := range rowOrders {
		letters := make([]string, len(o))
		for j, k := range o {
			letters[j] = string(rune('a' + k))
		}
		orders[i] = strings.Join(letters, " ")
	}
	var plan []string
	for _, clients := range routeClients {
		size, rounds := schedule(requests, clients)
		plan = append(plan, fmt.Sprintf("%d client(s): %d rounds of %d", clients, rounds, size))
	}
	fmt.Printf("\nNotion routes, each row's rate alone, in rounds: in each round every row runs one block, the rows in one of ten orders by round\n")
	fmt.Printf("number (%s:\n", strings.Join(orders, ", "))
	fmt.Println("each row at each place, and right after each other row, twice in ten rounds). Loopback, real API server. Each request is a new page")
	fmt.Printf("(one PaperSync). %s. At one client the rows take turns: a round is that many turns, in each of\n", strings.Join(plan, "; "))
	fmt.Println("which every row sends one request, in the round's order; a row's block is its requests of the round; the round's PaperSyncs are")
	fmt.Printf("deleted after it, untimed. At more clients a block is %d requests a client, every client sending the row's next request once it\n", perClient)
	fmt.Println("has its last answer; the block's PaperSyncs are deleted after it, untimed: every block starts from the same store. The controllers are")
	fmt.Println("stopped (what they do with a sync is the same whatever its row: the papersync suite measures it). The routes are served by")
	fmt.Println("bin/webhook in its own process, as a pod runs it (its own client, cache and connections to the API server: its PaperSync creates over")
	fmt.Println("HTTP/1.1, on the HTTP client row b sends over too), rate limit off. Every other turn at one client runs the order backwards, so that")
	fmt.Println("the pair across turns is a row after itself.")
	fmt.Printf("CPUs: %s.\n", split)
	fmt.Println("accepted: requests answered queued (baseline: created); p50 p95 p99 mean: their latency, request sent to answer read (the sender's work,\n  the body and an event's signature or the baseline's object, is done before the clock starts).")
	fmt.Println("rate/s: accepted requests over the blocks' time, a block timed from its first request sent to its last answer read (at one client,")
	fmt.Println("  the sum of its requests' latencies).")
	fmt.Printf("to baseline: the row's rate over bare creates' (row a, client-go's HTTP/2). [lo–hi]: 2.5th–97.5th percentile of that ratio over %d\n", resamplings)
	fmt.Println("  resamplings of the rounds with replacement (a round's two blocks kept together). rounds: the median of the rounds' own ratios.")
	fmt.Println("CPU ms/req: CPU time the whole machine used during the row's blocks (at one client, during its requests): API server, etcd,")
	fmt.Println("  webhook, bench (/proc/stat); per accepted request, and [the least–the most of its blocks]; plane: the API server's and etcd's")
	fmt.Println("  share, webhook: bin/webhook's (/proc/PID/stat).")
	fmt.Printf("%-8s %-38s %8s %8s %8s %8s %8s %8s %20s %6s %8s   %s\n", "clients", "row", "accepted", "p50", "p95", "p99", "mean", "rate/s",
		"CPU ms/req [blocks]", "plane", "webhook", "to baseline [lo–hi] / rounds (≥ 0.9)")
}

// printMix prints one client count's rows, the baseline first.
func printMix(clients int, rows []routeRow, rb rowBlocks) {
	rng := rand.New(rand.NewPCG(34, uint64(clients)))
	for k, r := range rows {
		var lat []time.Duration
		refused := 0
		for _, b := range rb[k] {
			lat, refused = append(lat, b.lat...), refused+b.refused
		}
		bench.SortDurations(lat)
		ratio := "-"
		if k > 0 {
			v, lo, hi, med := rb.toBaseline(k, rng)
			ratio = fmt.Sprintf("%.2f [%.2f–%.2f] / %.2f", v, lo, hi, med)
		}
		cpu := cpuPerRequest(rb[k])
		fmt.Printf("%-8d %-38s %8d %8s %8s %8s %8s %8.0f %20s %6.2f %8.2f   %s", clients, r.name, len(lat), bench.PctMs(lat, 50), bench.PctMs(lat, 95), bench.PctMs(lat, 99),
			meanMs(lat), pooledRate(rb[k]), fmt.Sprintf("%.2f [%s]", ms(cpu.machine), blockSpread(rb[k])), ms(cpu.plane), ms(cpu.hook), ratio)
		if refused > 0 {
			fmt.Printf("   (%d not accepted)", refused)
		}
		fmt.Println()
	}
}

// meanMs is the mean of d, rounded as bench.PctMs rounds.
func meanMs(d []time.Duration) string {
	if len(d) == 0 {
		return "-"
	}
	return bench.PctMs([]time.Duration{bench.MeanD(d)}, 50)
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// blockSpread is the least and the most machine CPU per request of
// blocks, in milliseconds.
func blockSpread(blocks []block) string {
	lo, hi := 0.0, 0.0
	for i, b := range blocks {
		v := ms(cpuPerRequest([]block{b}).machine)
		if i == 0 || v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return fmt.Sprintf("%.1f–%.1f", lo, hi)
}
