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
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/hack/internal/poll"
)

// Drive sends count requests from `clients` goroutines; do reports whether
// request i was accepted, or an error (the first one is returned). It
// answers the accepted requests per second, their latencies (sorted) and
// how many were not accepted.
func Drive(clients, count int, do func(i int) (bool, error)) (perSecond float64, lat []time.Duration, refused int, err error) {
	var next atomic.Int64
	var mu sync.Mutex
	lat = make([]time.Duration, 0, count)
	var wg sync.WaitGroup
	began := time.Now()
	for range clients {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < count; i = int(next.Add(1)) - 1 {
				t0 := time.Now()
				ok, e := do(i)
				d := time.Since(t0)
				mu.Lock()
				switch {
				case e != nil:
					if err == nil {
						err = e
					}
				case ok:
					lat = append(lat, d)
				default:
					refused++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	SortDurations(lat)
	return float64(len(lat)) / elapsed.Seconds(), lat, refused, err
}

// SortDurations sorts d, shortest first.
func SortDurations(d []time.Duration) { sort.Slice(d, func(i, j int) bool { return d[i] < d[j] }) }

// Lateness is how late each of seen came after its due instant, sorted,
// and the last of seen: what a baseline's writes are measured by.
func Lateness(seen, due map[string]time.Time) (late []time.Duration, last time.Time) {
	late = make([]time.Duration, 0, len(seen))
	for name, at := range seen {
		late = append(late, at.Sub(due[name]))
		if at.After(last) {
			last = at
		}
	}
	SortDurations(late)
	return late, last
}

// MeanD is the mean of d (0 for none).
func MeanD(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

// PctD is the p-th percentile of sorted durations (nearest rank).
func PctD(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := max((len(sorted)*p+99)/100, 1)
	return sorted[i-1]
}

// PctMs is the p-th percentile of sorted durations, rounded to what
// shows its size.
func PctMs(sorted []time.Duration, p int) string {
	if len(sorted) == 0 {
		return "-"
	}
	d := PctD(sorted, p)
	switch a := max(d, -d); {
	case a >= 10*time.Millisecond:
		return d.Round(time.Millisecond).String()
	case a >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	// A cached read takes microseconds: keep them.
	return d.Round(time.Microsecond).String()
}

// Ratio is a over b, or 0 when b is.
func Ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// WaitLogged polls every 20 ms, until deadline, until got (a map an
// informer handler fills under mu) holds n entries; it answers how many
// it holds.
func WaitLogged(ctx context.Context, mu *sync.Mutex, got map[string]time.Time, n int, deadline time.Time) (int, error) {
	seen := 0
	err := poll.Until(ctx, "", 20*time.Millisecond, time.Until(deadline), func() (bool, error) {
		mu.Lock()
		seen = len(got)
		mu.Unlock()
		return seen >= n, nil
	})
	return seen, err
}

// Timed runs f and answers how long it took.
func Timed(f func() error) (time.Duration, error) {
	began := time.Now()
	err := f()
	return time.Since(began), err
}

// Parallel runs f(0..count-1) on `workers` goroutines; the first error wins.
func Parallel(count, workers int, f func(int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < count; i = int(next.Add(1)) - 1 {
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// PositiveInts parses numbers separated by commas, each above zero.
func PositiveInts(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			return nil, errors.New("not a positive number: " + f)
		}
		out = append(out, v)
	}
	return out, nil
}

// MiB is b bytes in mebibytes.
func MiB(b int64) float64 { return float64(b) / (1 << 20) }
