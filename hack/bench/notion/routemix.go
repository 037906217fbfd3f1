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
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/hack/internal/local"
)

// The routes table's design: each row's rate alone, in blocks. At each
// client count the five rows take turns, one block each per round, in
// one of ten orders by round number (a Williams design: over the ten
// rounds each row is at each place twice, and right after each other row
// twice), so that a drift of the rig weighs on every row alike. A block
// is a row's requests from every client until the block's count is sent,
// timed from its first request to its last answer; blocks are short and
// rounds many (schedule). At one client a round is turns instead, each
// row's request in its turn (runTurns).
//
// The controllers are stopped for the table: what they do with a
// PaperSync is the same whichever row made it, and the papersync suite
// measures it. Running, their writes either weighed on every row alike
// and hid the routes' cost among them (a block timed to the last status
// written read 0.90–0.97), or, with a block's backlog left to after it,
// weighed more on the slower row (0.62–0.85).
//
// At more than one client, rows one at a time, not mixed request by
// request (at one client only one request is ever in flight, and turns
// mix them safely): mixed, the webhook's
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

// designLength is the rounds of one Williams design of five rows (its
// orders, rowOrders): the rounds at a client count are a multiple of it.
const designLength = len(rowOrders)

// resamplings is how many bootstrap resamplings of the rounds the
// interval of each ratio is read from.
const resamplings = 2000

// rowOrders are the orders of the five rows in a round, by round number
// mod 10: a cyclic Latin square from 0 1 4 2 3 and its mirror.
var rowOrders = [10][5]int{
	{0, 1, 4, 2, 3}, {1, 2, 0, 3, 4}, {2, 3, 1, 4, 0}, {3, 4, 2, 0, 1}, {4, 0, 3, 1, 2},
	{3, 2, 4, 1, 0}, {4, 3, 0, 2, 1}, {0, 4, 1, 3, 2}, {1, 0, 2, 4, 3}, {2, 1, 3, 0, 4},
}

// rowRequests is how many requests each row sends at clients: requests,
// or, if more, 320 a client within 2,560–10,240.
func rowRequests(requests, clients int) int {
	return max(requests, min(max(320*clients, minRow), maxRow))
}

// minRow and maxRow bound a row's requests at a client count, unless
// requests is more.
const minRow, maxRow = 2560, 10240

// turns is a round's length at one client: every row sends this many
// requests, taking turns (runTurns).
const turns = 256

// perClient is a block's requests a client at more than one client.
const perClient = 4

// schedule is a round's block size and the number of rounds at clients:
// at one client, rounds of turns; at more, blocks of perClient requests
// a client, a fraction of a second each, and as many rounds (a multiple
// of designLength) as make rowRequests. Short blocks, many rounds: a
// drift of the rig that lasts longer than a block (the API server's
// garbage collection on its one CPU, we suppose; a block's CPU a request
// still ranges fourfold) spreads over several rows' blocks instead of
// falling into one. With blocks of 32 a client and ten rounds the ratios'
// intervals were about ±0.35 wide at 16 clients, and the figures read
// 0.79–0.93 in one run and 0.91–1.20 in another; with these, ±0.12. At
// one client, blocks of 256 requests read 0.73–1.04 over three runs
// (intervals about ±0.2), turns 0.89–0.99 over four (about ±0.04).
func schedule(requests, clients int) (size, rounds int) {
	size = turns
	if clients > 1 {
		size = perClient * clients
	}
	per := size * designLength
	return size, (rowRequests(requests, clients) + per - 1) / per * designLength
}

// block is one row's block: its accepted requests' latencies, how many
// were not accepted, its time, first request sent to last answer read,
// and the CPU time the machine, the control plane and the webhook used
// meanwhile.
type block struct {
	lat     []time.Duration
	refused int
	took    time.Duration
	cpu     cpuUse
}

// cpuUse is CPU time used: by every process of the machine (the API
// server, etcd, the webhook, the bench), by the control plane (the API
// server and etcd), and by the webhook alone.
type cpuUse struct{ machine, plane, hook time.Duration }

func (a cpuUse) sub(b cpuUse) cpuUse {
	return cpuUse{a.machine - b.machine, a.plane - b.plane, a.hook - b.hook}
}
func (a cpuUse) add(b cpuUse) cpuUse {
	return cpuUse{a.machine + b.machine, a.plane + b.plane, a.hook + b.hook}
}

// per is a over n requests.
func (a cpuUse) per(n int) cpuUse {
	d := time.Duration(n)
	return cpuUse{a.machine / d, a.plane / d, a.hook / d}
}

// cpuMeter reads the CPU time used so far by the machine, the control
// plane and the webhook's process.
type cpuMeter func() cpuUse

// processMeter is the meter of the machine, of the control plane's
// processes and of hook.
func processMeter(plane []int, hook *local.Process) cpuMeter {
	return func() cpuUse {
		u := cpuUse{machine: local.MachineBusy(), hook: hook.CPUTime()}
		for _, pid := range plane {
			u.plane += local.CPUTimeOf(pid)
		}
		return u
	}
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

// runTurns is one round at one client: size turns, in each of which
// every row, in order, sends one request for a new page. Only one request
// is in flight at a time, so the rows can share the round request by
// request: a drift of the rig shorter than a block (a garbage collection
// of the API server's, a kernel thread's work) falls on every row alike.
// Each row's block holds its requests: its time is the sum of their
// latencies, its CPU what the meter read across each of them. Every other
// turn runs the order backwards (turnOrder), so that the pair across
// turns is a row after itself: in the order's direction the pair across
// turns (its last row, then its first) would be one pair a round, ten of
// the twenty over ten rounds, each once, and not balanced. Backwards, a
// turn's pairs are the order's pairs reversed, which the design balances
// as well.
func runTurns(rows []routeRow, order [5]int, size int, page func() string, meter cpuMeter) ([]block, error) {
	blocks := make([]block, len(rows))
	for turn := range size {
		for _, k := range turnOrder(order, turn) {
			send := rows[k].prepare(page())
			used := meter()
			t0 := time.Now()
			ok, err := send()
			took := time.Since(t0)
			cpu := meter().sub(used)
			if err != nil {
				return nil, err
			}
			b := &blocks[k]
			b.took, b.cpu = b.took+took, b.cpu.add(cpu)
			if ok {
				b.lat = append(b.lat, took)
			} else {
				b.refused++
			}
		}
	}
	return blocks, nil
}

// turnOrder is the round's order in even turns, and backwards in odd.
func turnOrder(order [5]int, turn int) [5]int {
	if turn%2 == 1 {
		for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
			order[i], order[j] = order[j], order[i]
		}
	}
	return order
}

// rowBlocks are each row's blocks at one client count, by row, then by
// round.
type rowBlocks [][]block

// runRounds runs rounds of rows at clients, each row a block of size
// requests a round, and reset after each block, untimed; at one client,
// the rows take turns instead (runTurns), and reset follows each round.
func runRounds(rows []routeRow, clients, size, rounds int, page func() string, meter cpuMeter, reset func() error) (rowBlocks, error) {
	out := make(rowBlocks, len(rows))
	for round := range rounds {
		order := rowOrders[round%len(rowOrders)]
		if clients == 1 {
			blocks, err := runTurns(rows, order, size, page, meter)
			if err != nil {
				return out, err
			}
			for k, b := range blocks {
				out[k] = append(out[k], b)
			}
			if err := reset(); err != nil {
				return out, err
			}
			continue
		}
		for _, k := range order {
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

// cpuPerRequest is the machine's, the control plane's and the webhook's
// CPU time per accepted request over blocks.
func cpuPerRequest(blocks []block) cpuUse {
	n, used := 0, cpuUse{}
	for _, b := range blocks {
		n, used = n+len(b.lat), used.add(b.cpu)
	}
	if n == 0 {
		return cpuUse{}
	}
	return used.per(n)
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
