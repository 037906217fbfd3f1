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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/local"
)

// The routes table's design: each row's rate alone, in blocks. At each
// client count the five rows take turns, one block each per round, in
// one of ten orders by round number (a Williams design: over the ten
// rounds each row is at each place twice, and right after each other row
// twice), so that a drift of the rig weighs on every row alike. A block
// is a row's requests from every client until the block's count is sent,
// timed from its first request to its last answer.
//
// The controllers are stopped for the table: what they do with a
// PaperSync is the same whichever row made it, and the papersync suite
// measures it. Running, their writes either weighed on every row alike
// and hid the routes' cost among them (a block timed to the last status
// written read 0.90–0.97), or, with a block's backlog left to after it,
// weighed more on the slower row (0.62–0.85).
//
// Rows one at a time, not mixed request by request: mixed, the webhook's
// creates (one HTTP/2 connection to the API server, carrying three rows'
// requests) and the bare creates (another connection, one row's) met the
// API server's sharing of its CPU between connections, and the figure
// measured that. With the routes served in the bench's own process it
// read 0.77–0.94 at 64 clients from run to run; served by bin/webhook,
// 0.45–0.83; and 1.35–1.49 with the webhook on HTTP/1.1 (a connection per
// request), the route's code unchanged.
//
// Each block starts from the same store: the PaperSyncs of the block
// before are deleted, untimed. Kept, the table's own creates (about
// 100,000 at the default size) grew the API server's heap past 1 GB; its
// garbage collection, a cycle every few seconds of the 64 clients' rows,
// fell into some blocks and not others, and a block's CPU a request ran
// from 2.2 to 6.8 ms whatever its row.
//
// The control plane (kube-apiserver and etcd) runs on half the machine's
// CPUs and the clients (the bench and bin/webhook) on the other half
// (cpus.go), as a cluster's control plane and its workers run on nodes
// of their own: shared, the webhook's CPU was taken from the API server's
// and the bench's client's from both, which no cluster does.

// routeRounds is how many blocks each row runs at each client count: one
// Williams design of five rows.
const routeRounds = 10

// resamplings is how many bootstrap resamplings of the rounds the
// interval of each ratio is read from.
const resamplings = 2000

// rowOrders are the orders of the five rows in a round, by round number
// mod 10: a cyclic Latin square from 0 1 4 2 3 and its mirror.
var rowOrders = [10][5]int{
	{0, 1, 4, 2, 3}, {1, 2, 0, 3, 4}, {2, 3, 1, 4, 0}, {3, 4, 2, 0, 1}, {4, 0, 3, 1, 2},
	{3, 2, 4, 1, 0}, {4, 3, 0, 2, 1}, {0, 4, 1, 3, 2}, {1, 0, 2, 4, 3}, {2, 1, 3, 0, 4},
}

// blockSize is how many requests a block of clients sends: requests over
// the rounds, and at least 32 a client and 256 in all, up to 1,024, so
// that a block is a steady stream of a second or more at every client
// count, not a burst (at 8 a client, the ratios at 16 clients read
// 0.72–0.96 from run to run; at one client, a run with blocks of 100 read
// 0.73–0.85 and one with blocks of 200 0.89–0.92, the same build).
func blockSize(requests, clients int) int {
	return max(requests/routeRounds, min(max(32*clients, minBlock), maxBlock))
}

// minBlock and maxBlock bound a block's requests, unless requests over
// the rounds is more.
const minBlock, maxBlock = 256, 1024

// block is one row's block: its accepted requests' latencies, how many
// were not accepted, its time, first request sent to last answer read,
// and the CPU time the machine and the webhook used meanwhile.
type block struct {
	lat     []time.Duration
	refused int
	took    time.Duration
	cpu     cpuUse
}

// cpuUse is CPU time used: by every process of the machine (the API
// server, etcd, the webhook, the bench), and by the webhook alone.
type cpuUse struct{ machine, hook time.Duration }

func (a cpuUse) sub(b cpuUse) cpuUse { return cpuUse{a.machine - b.machine, a.hook - b.hook} }
func (a cpuUse) add(b cpuUse) cpuUse { return cpuUse{a.machine + b.machine, a.hook + b.hook} }

// cpuMeter reads the CPU time used so far by the machine and by the
// webhook's process.
type cpuMeter func() cpuUse

// processMeter is the meter of the machine and of hook.
func processMeter(hook *local.Process) cpuMeter {
	return func() cpuUse { return cpuUse{machine: local.MachineBusy(), hook: hook.CPUTime()} }
}

// rate is the block's accepted requests a second.
func (b block) rate() float64 { return float64(len(b.lat)) / b.took.Seconds() }

// runBlock sends count requests of row from clients goroutines, each
// sending the next once it has its last answer; page names each
// request's new page.
func runBlock(row routeRow, clients, count int, page func() string, meter cpuMeter) (block, error) {
	sent := make([]struct {
		lat time.Duration
		ok  bool
	}, count)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, clients)
	used := meter()
	began := time.Now()
	for g := range clients {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < count; i = int(next.Add(1)) - 1 {
				send := row.prepare(page())
				t0 := time.Now()
				ok, err := send()
				sent[i].lat, sent[i].ok = time.Since(t0), ok
				if err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	b := block{took: time.Since(began), cpu: meter().sub(used)}
	for _, s := range sent {
		if s.ok {
			b.lat = append(b.lat, s.lat)
		} else {
			b.refused++
		}
	}
	return b, errors.Join(errs...)
}

// rowBlocks are each row's blocks at one client count, by row, then by
// round.
type rowBlocks [][]block

// runRounds runs routeRounds rounds of rows at clients, each row a block
// of size requests a round, and reset after each block, untimed.
func runRounds(rows []routeRow, clients, size int, page func() string, meter cpuMeter, reset func() error) (rowBlocks, error) {
	out := make(rowBlocks, len(rows))
	for round := range routeRounds {
		for _, k := range rowOrders[round%len(rowOrders)] {
			b, err := runBlock(rows[k], clients, size, page, meter)
			if err != nil {
				return out, err
			}
			out[k] = append(out[k], b)
			if err := reset(); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// pooledRate is Σ accepted / Σ time over blocks.
func pooledRate(blocks []block) float64 {
	n, took := 0, time.Duration(0)
	for _, b := range blocks {
		n, took = n+len(b.lat), took+b.took
	}
	if took == 0 {
		return 0
	}
	return float64(n) / took.Seconds()
}

// cpuPerRequest is the machine's and the webhook's CPU time per
// accepted request over blocks.
func cpuPerRequest(blocks []block) cpuUse {
	n, used := 0, cpuUse{}
	for _, b := range blocks {
		n, used = n+len(b.lat), used.add(b.cpu)
	}
	if n == 0 {
		return cpuUse{}
	}
	return cpuUse{used.machine / time.Duration(n), used.hook / time.Duration(n)}
}

// toBaseline is row k's pooled rate over the baseline's (row 0), its
// bootstrap interval (2.5th and 97.5th percentile over resamplings of the
// rounds, a round's two blocks kept together), and the median of the
// rounds' own ratios.
func (rb rowBlocks) toBaseline(k int, rng *rand.Rand) (ratio, lo, hi, median float64) {
	rounds := len(rb[k])
	if rounds == 0 || pooledRate(rb[0]) == 0 {
		return 0, 0, 0, 0
	}
	perRound := make([]float64, rounds)
	for i := range rounds {
		perRound[i] = rb[k][i].rate() / rb[0][i].rate()
	}
	boot := make([]float64, resamplings)
	row, base := make([]block, rounds), make([]block, rounds)
	for s := range boot {
		for i := range rounds {
			j := rng.IntN(rounds)
			row[i], base[i] = rb[k][j], rb[0][j]
		}
		boot[s] = pooledRate(row) / pooledRate(base)
	}
	sort.Float64s(boot)
	return pooledRate(rb[k]) / pooledRate(rb[0]), boot[resamplings*25/1000], boot[resamplings*975/1000-1], medianOf(perRound)
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
	fmt.Printf("\nNotion routes, each row's rate alone: at each client count %d rounds; in each round every row runs one block of requests,\n", routeRounds)
	fmt.Printf("max(%d, 32 × clients within %d–%d), the rows in one of ten orders by round number (%s:\n", requests/routeRounds, minBlock, maxBlock, strings.Join(orders, ", "))
	fmt.Println("each row at each place, and right after each other row, twice). Loopback, real API server. In a block every client sends the row's next")
	fmt.Println("request once it has its last answer; each request is a new page (one PaperSync). After each block its PaperSyncs are deleted, untimed:")
	fmt.Println("every block starts from the same store. The controllers are stopped (what they do with a sync is the same whatever its row: the")
	fmt.Println("papersync suite measures it). The routes are served by bin/webhook in its own process, as a pod runs it (its own client, cache and")
	fmt.Println("connections to the API server: its PaperSync creates over HTTP/1.1, as row b's), rate limit off.")
	fmt.Printf("CPUs: %s.\n", split)
	fmt.Println("accepted: requests answered queued (baseline: created); p50 p95 p99 mean: their latency, request sent to answer read (the sender's work,\n  the body and an event's signature or the baseline's object, is done before the clock starts).")
	fmt.Println("rate/s: accepted requests over the blocks' time, each block timed from its first request sent to its last answer read.")
	fmt.Printf("to baseline: the row's rate over bare creates' (row a, client-go's HTTP/2). [lo–hi]: 2.5th–97.5th percentile of that ratio over %d\n", resamplings)
	fmt.Println("  resamplings of the rounds with replacement (a round's two blocks kept together). rounds: the median of the rounds' own ratios.")
	fmt.Println("CPU ms/req: CPU time the whole machine used during the row's blocks (API server, etcd, webhook, bench; /proc/stat), per accepted")
	fmt.Println("  request, and [the least–the most of its blocks]; webhook: bin/webhook's own share (/proc/PID/stat).")
	fmt.Printf("%-8s %-38s %8s %8s %8s %8s %8s %8s %20s %8s   %s\n", "clients", "row", "accepted", "p50", "p95", "p99", "mean", "rate/s",
		"CPU ms/req [blocks]", "webhook", "to baseline [lo–hi] / rounds (≥ 0.9)")
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
		fmt.Printf("%-8d %-38s %8d %8s %8s %8s %8s %8.0f %20s %8.2f   %s", clients, r.name, len(lat), bench.PctMs(lat, 50), bench.PctMs(lat, 95), bench.PctMs(lat, 99),
			meanMs(lat), pooledRate(rb[k]), fmt.Sprintf("%.2f [%s]", ms(cpu.machine), blockSpread(rb[k])), ms(cpu.hook), ratio)
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
