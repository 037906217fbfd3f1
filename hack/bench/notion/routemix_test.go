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
	"testing"
	"time"
)

// timeUnit is k microseconds, a request's made-up CPU.
func timeUnit(k int) time.Duration { return time.Duration(k) * time.Microsecond }

// TestScheduleMakesWholeDesignsOfTheRowsRequests checks that every client
// count runs a whole number of Williams designs, at least the row's
// requests, in blocks of turns at one client and of perClient a client
// at more.
func TestScheduleMakesWholeDesignsOfTheRowsRequests(t *testing.T) {
	for _, tc := range []struct{ requests, clients, size, rounds int }{
		{1000, 1, turns, 10},
		{1000, 16, 64, 80},
		{1000, 64, 256, 40},
		{30000, 1, turns, 120},
	} {
		size, rounds := schedule(tc.requests, tc.clients)
		if size != tc.size || rounds != tc.rounds {
			t.Errorf("schedule(%d, %d) = %d, %d; want %d, %d", tc.requests, tc.clients, size, rounds, tc.size, tc.rounds)
		}
		if rounds%designLength != 0 || size*rounds < rowRequests(tc.requests, tc.clients) {
			t.Errorf("schedule(%d, %d): %d rounds of %d is not whole designs of at least %d requests", tc.requests, tc.clients, rounds, size, rowRequests(tc.requests, tc.clients))
		}
	}
}

// TestTurnsSendEachRowInTheRoundsOrder checks that at one client every
// row sends one request a turn, in the round's order in the first turn
// and backwards in the second, and that each
// row's block holds its own requests, CPU and refusals.
func TestTurnsSendEachRowInTheRoundsOrder(t *testing.T) {
	var sent []string
	var cpu cpuUse
	meter := func() cpuUse { return cpu }
	rows := make([]routeRow, 5)
	for k := range rows {
		rows[k].prepare = func(page string) func() (bool, error) {
			return func() (bool, error) {
				sent = append(sent, fmt.Sprintf("%d:%s", k, page))
				cpu = cpu.add(cpuUse{machine: 1 + 10*timeUnit(k), plane: 5 * timeUnit(k), hook: timeUnit(k)})
				return k != 3, nil // row 3's requests are refused
			}
		}
	}
	n := 0
	page := func() string { n++; return fmt.Sprint(n) }
	order := rowOrders[1]
	blocks, err := runTurns(rows, order, 2, page, meter)
	if err != nil {
		t.Fatal(err)
	}
	backwards := [5]int{order[4], order[3], order[2], order[1], order[0]}
	var want []string
	for turn, o := range [][5]int{order, backwards} {
		for i, k := range o {
			want = append(want, fmt.Sprintf("%d:%d", k, turn*5+i+1))
		}
	}
	if fmt.Sprint(sent) != fmt.Sprint(want) {
		t.Errorf("sent %v, want %v", sent, want)
	}
	for k, b := range blocks {
		accepted, refused := 2, 0
		if k == 3 {
			accepted, refused = 0, 2
		}
		if len(b.lat) != accepted || b.refused != refused {
			t.Errorf("row %d: %d accepted, %d refused; want %d, %d", k, len(b.lat), b.refused, accepted, refused)
		}
		if want := (cpuUse{machine: 2 * (1 + 10*timeUnit(k)), plane: 10 * timeUnit(k), hook: 2 * timeUnit(k)}); b.cpu != want {
			t.Errorf("row %d: CPU %v, want %v", k, b.cpu, want)
		}
		var sum time.Duration
		for _, l := range b.lat {
			sum += l
		}
		if accepted > 0 && b.took != sum {
			t.Errorf("row %d: took %v, want the sum of its requests' latencies, %v", k, b.took, sum)
		}
	}

	rows[2].prepare = func(string) func() (bool, error) {
		return func() (bool, error) { return false, errors.New("send failed") }
	}
	if _, err := runTurns(rows, order, 1, page, meter); err == nil {
		t.Error("a row's failed send was not an error of the round")
	}
}

// TestTurnsBalanceWhichRowFollowsWhich checks that over one design at one
// client every row comes right after every other row equally often, the
// pairs across turns included, and after itself only across turns.
func TestTurnsBalanceWhichRowFollowsWhich(t *testing.T) {
	var sent []int
	rows := make([]routeRow, 5)
	for k := range rows {
		rows[k].prepare = func(string) func() (bool, error) {
			return func() (bool, error) { sent = append(sent, k); return true, nil }
		}
	}
	meter := func() cpuUse { return cpuUse{} }
	var follows [5][5]int
	for _, order := range rowOrders {
		sent = sent[:0]
		if _, err := runTurns(rows, order, 4, func() string { return "" }, meter); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(sent); i++ {
			follows[sent[i-1]][sent[i]]++
		}
	}
	for a := range follows {
		for b, n := range follows[a] {
			if a != b && n != follows[0][1] {
				t.Errorf("row %d came right after row %d %d times, row 1 after row 0 %d times", b, a, n, follows[0][1])
			}
		}
	}
}
