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

package setup_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/switchboard-dev/switchboard/internal/setup"
)

func probe() *http.Request { return httptest.NewRequest(http.MethodGet, "/readyz", nil) }

func TestAPIServerCheckAsksAtMostOncePerInterval(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1_700_000_000, 0))
	pings := 0
	var answer error
	c := &setup.APIServerCheck{Clock: clk, Interval: 5 * time.Second,
		Ping: func(context.Context) error { pings++; return answer }}

	for range 10 {
		if err := c.Check(probe()); err != nil {
			t.Fatal(err)
		}
	}
	if pings != 1 {
		t.Fatalf("10 probes within the interval sent %d pings, want 1", pings)
	}
	answer = errors.New("connection refused")
	clk.SetTime(clk.Now().Add(4 * time.Second))
	if err := c.Check(probe()); err != nil || pings != 1 {
		t.Fatalf("within the interval: err=%v pings=%d, want the cached success and no ping", err, pings)
	}
	clk.SetTime(clk.Now().Add(time.Second))
	err := c.Check(probe())
	if err == nil || !strings.Contains(err.Error(), "API server unreachable") || pings != 2 {
		t.Fatalf("after the interval: err=%v pings=%d, want unreachable after a second ping", err, pings)
	}
	if err2 := c.Check(probe()); err2 == nil || pings != 2 {
		t.Fatalf("the failure is cached as well: err=%v pings=%d", err2, pings)
	}
}

func TestAPIServerCheckGivesUpAfterItsTimeout(t *testing.T) {
	c := &setup.APIServerCheck{Timeout: 50 * time.Millisecond, Ping: func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	// The caller hanging up does not cut the shared check short; its own
	// timeout does.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Check(probe().WithContext(ctx)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the check's own deadline", err)
	}
}

func TestAPIServerCheckAgainstARealAndADeadAPIServer(t *testing.T) {
	live, err := setup.NewAPIServerCheck(env.Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Check(probe()); err != nil {
		t.Fatalf("envtest's API server: %v", err)
	}

	// A port that was free a moment ago: nothing listens there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := rest.CopyConfig(env.Config)
	dead.Host = "https://" + ln.Addr().String()
	_ = ln.Close()
	c, err := setup.NewAPIServerCheck(dead, nil)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	err = c.Check(probe())
	if err == nil || !strings.Contains(err.Error(), "API server unreachable") {
		t.Fatalf("dead API server: err = %v", err)
	}
	if d := time.Since(began); d > setup.APIServerCheckTimeout+time.Second {
		t.Fatalf("the check took %s", d)
	}
}

func TestCacheSyncedFailsUntilTheCacheHasSynced(t *testing.T) {
	scheme := setup.Scheme()
	cl, err := cluster.New(env.Config, func(o *cluster.Options) {
		o.Scheme = scheme
		o.Cache = setup.CacheOptions(scheme)
	})
	if err != nil {
		t.Fatal(err)
	}
	check := setup.CacheSynced(cl.GetCache())
	if err := check(probe()); err == nil {
		t.Fatal("ready before the cache was started")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = cl.Start(ctx) }()
	if !cl.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	if err := check(probe()); err != nil {
		t.Fatalf("not ready after the sync: %v", err)
	}
}
