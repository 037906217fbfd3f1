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
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// ledgerSessions is how many collected sessions the ledger measure holds
// for one connection (issue 37: its cost at 100,000).
const ledgerSessions = 100_000

// benchSessionReads measures what the time tracker's session reads cost,
// after the ingest rounds, with clients at once: GET sessions/{id} through
// the webhook for sessions whose SheetSync is kept, beside a bare cached
// Get of the same SheetSyncs from the manager's informer cache, in rounds
// that take turns (route, bare, bare, route); then the ledger at 100,000
// collected sessions of one connection — its build, its bytes, writing its
// shards — and a read of a collected session through the route beside a
// bare cached Get of its shard.
func benchSessionReads(ctx context.Context, rig *sheetsRig, c client.Client, conn *v1alpha1.SheetConnection, n, clients int) error {
	// The first of the sessions the route took at this client count.
	ids := make([]string, min(n, 1000))
	for i := range ids {
		ids[i] = bench.Session(fmt.Sprintf("s%d", clients), i).ID
	}
	cached := rig.Mgr.GetClient()
	route := func(id string) error {
		return getSession(rig.HookURL+conn.Status.IngestPath+"/sessions/"+id, http.StatusOK)
	}
	bare := func(id string) error {
		return cached.Get(ctx, types.NamespacedName{Namespace: conn.Namespace, Name: timesheet.SyncName(conn.Name, id)}, &v1alpha1.SheetSync{})
	}
	var routeRate, bareRate sheetsRate
	for i := range 4 {
		f, into := bare, &bareRate
		if i == 0 || i == 3 {
			f, into = route, &routeRate
		}
		r, err := timedEach(ids, clients, f)
		if err != nil {
			return err
		}
		into.add(r)
	}
	bench.SortDurations(routeRate.lat)
	bench.SortDurations(bareRate.lat)
	reads := 2 * len(ids)
	fmt.Printf("\nsession reads, %d sessions twice each, %d clients (rounds: route, bare, bare, route):\n", len(ids), clients)
	readLine := func(what string, r sheetsRate) {
		fmt.Printf("  %-68s %10s %12.0f %10s %10s %10s\n", what, r.took.Round(time.Millisecond), r.perSecond(reads), bench.PctMs(r.lat, 50), bench.PctMs(r.lat, 95), bench.PctMs(r.lat, 99))
	}
	readLine("GET sessions/{id} through the webhook (its SheetSync kept)", routeRate)
	readLine("baseline: bare cached Get of the SheetSync, in process", bareRate)
	fmt.Printf("  ratio route/bare reads per second %.3f (the route is HTTP, a token check and an API read: the webhook caches no SheetSync)\n", routeRate.perSecond(reads)/bareRate.perSecond(reads))
	return benchLedger(ctx, rig, c, conn, clients)
}

// benchLedger builds one connection's ledger of ledgerSessions collected
// sessions, writes its shards to the webhook's namespace as the SheetSync
// controller would, and reads collected sessions through the route.
func benchLedger(ctx context.Context, rig *sheetsRig, c client.Client, conn *v1alpha1.SheetConnection, clients int) error {
	shards := map[string]*corev1.Secret{}
	began := time.Now()
	for i := range ledgerSessions {
		id := fmt.Sprintf("ledger-%06d", i)
		name := timesheet.LedgerName(conn.Namespace, conn.Name, id)
		sec := shards[name]
		if sec == nil {
			sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{
				v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue, timesheet.LedgerLabel: timesheet.LedgerConnection(conn.Namespace, conn.Name)}}}
			shards[name] = sec
		}
		timesheet.LedgerAdd(sec, conn, id, int64(i+2))
	}
	built := time.Since(began)
	size, largest := 0, 0
	began = time.Now()
	for _, sec := range shards {
		b := 0
		for _, v := range sec.Data {
			b += len(v)
		}
		size, largest = size+b, max(largest, b)
		if err := c.Create(ctx, sec); err != nil {
			return fmt.Errorf("write ledger shard %s: %w", sec.Name, err)
		}
	}
	written := time.Since(began)
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprintf("ledger-%06d", i*(ledgerSessions/len(ids)))
	}
	cached := rig.Mgr.GetClient()
	if err := waitCached(ctx, cached, shards); err != nil {
		return err
	}
	route, err := timedEach(ids, clients, func(id string) error {
		return getSession(rig.HookURL+conn.Status.IngestPath+"/sessions/"+id, http.StatusOK)
	})
	if err != nil {
		return err
	}
	bare, err := timedEach(ids, clients, func(id string) error {
		return cached.Get(ctx, types.NamespacedName{Namespace: "default", Name: timesheet.LedgerName(conn.Namespace, conn.Name, id)}, &corev1.Secret{})
	})
	if err != nil {
		return err
	}
	bench.SortDurations(route.lat)
	bench.SortDurations(bare.lat)
	fmt.Printf("ledger of one connection at %d collected sessions: %d Secrets, %d bytes (%.1f a session; largest shard %d bytes), built in %s, written in %s\n",
		ledgerSessions, len(shards), size, float64(size)/ledgerSessions, largest, built.Round(time.Millisecond), written.Round(time.Millisecond))
	fmt.Printf("  each collection rewrites its shard: at %d sessions about %d bytes a write (the SheetSync it replaces is about 2-9 kB)\n", ledgerSessions, largest)
	fmt.Printf("  %-68s %10s %12.0f %10s %10s %10s\n", "GET sessions/{id} of a collected session (SheetSync gone: the ledger)", route.took.Round(time.Millisecond),
		route.perSecond(len(ids)), bench.PctMs(route.lat, 50), bench.PctMs(route.lat, 95), bench.PctMs(route.lat, 99))
	fmt.Printf("  %-68s %10s %12.0f %10s %10s %10s\n", "baseline: bare cached Get of its ledger shard, in process", bare.took.Round(time.Millisecond),
		bare.perSecond(len(ids)), bench.PctMs(bare.lat, 50), bench.PctMs(bare.lat, 95), bench.PctMs(bare.lat, 99))
	return nil
}

// waitCached waits until the manager's cache shows every shard.
func waitCached(ctx context.Context, cached client.Client, shards map[string]*corev1.Secret) error {
	return poll.Until(ctx, "the ledger's shards in the cache", 10*time.Millisecond, time.Minute, func() (bool, error) {
		for name := range shards {
			if cached.Get(ctx, types.NamespacedName{Namespace: "default", Name: name}, &corev1.Secret{}) != nil {
				return false, nil
			}
		}
		return true, nil
	})
}

// getSession reads a session through the route and checks its status.
func getSession(u string, want int) error {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+testenv.SheetIngestToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("GET %s: %d, want %d", u, resp.StatusCode, want)
	}
	return nil
}

// timedEach runs f on each of ids with clients goroutines (parallel) and
// times each call and the whole.
func timedEach(ids []string, clients int, f func(string) error) (sheetsRate, error) {
	lat := make([]time.Duration, len(ids))
	began := time.Now()
	err := bench.Parallel(len(ids), clients, func(i int) error {
		t := time.Now()
		err := f(ids[i])
		lat[i] = time.Since(t)
		return err
	})
	return sheetsRate{lat: lat, took: time.Since(began)}, err
}
