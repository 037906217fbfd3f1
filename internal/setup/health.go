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

package setup

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

// Readiness defaults.
const (
	// CacheSyncWait bounds how long one readiness probe waits for the
	// informer cache: a probe answers, it does not wait for the sync.
	CacheSyncWait = 500 * time.Millisecond
	// APIServerCheckInterval is how long one answer of the API server is
	// reused: probes (kubelet's every 10 s, people's curl) cost at most one
	// request per interval.
	APIServerCheckInterval = 5 * time.Second
	// APIServerCheckTimeout bounds one check, below the 3 s probe timeout in
	// config/webhook so a hung API server fails the probe instead of timing
	// it out.
	APIServerCheckTimeout = 2 * time.Second
)

// Checker is a readiness or liveness check, the shape of controller-runtime's
// healthz.Checker.
type Checker = func(req *http.Request) error

// SyncWaiter is what CacheSynced needs of a cache (cache.Cache has it).
type SyncWaiter interface {
	WaitForCacheSync(ctx context.Context) bool
}

// CacheSynced is ready once the informer cache has started and synced. A
// probe waits at most CacheSyncWait for it.
func CacheSynced(c SyncWaiter) Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), CacheSyncWait)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("informer cache not synced")
		}
		return nil
	}
}

// APIServerCheck reports whether the API server answered recently. The
// answer is reused for Interval, so however often it is probed it sends at
// most one request per Interval, and each request gives up after Timeout.
type APIServerCheck struct {
	// Ping asks the API server something cheap (NewAPIServerCheck: GET
	// /version, which every client may read).
	Ping func(ctx context.Context) error
	// Interval is how long an answer is reused (APIServerCheckInterval
	// when zero).
	Interval time.Duration
	// Timeout bounds one Ping (APIServerCheckTimeout when zero).
	Timeout time.Duration
	// Clock tells the time (the wall clock when nil).
	Clock clock.PassiveClock

	mu        sync.Mutex
	checked   bool
	checkedAt time.Time
	last      error
}

// NewAPIServerCheck checks the API server cfg names over httpClient (pass
// the client the binary already has, so the check shares its connections;
// nil builds one from cfg).
func NewAPIServerCheck(cfg *rest.Config, httpClient *http.Client) (*APIServerCheck, error) {
	var dc *discovery.DiscoveryClient
	var err error
	if httpClient == nil {
		dc, err = discovery.NewDiscoveryClientForConfig(cfg)
	} else {
		dc, err = discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	}
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	rc := dc.RESTClient()
	return &APIServerCheck{Ping: func(ctx context.Context) error {
		return rc.Get().AbsPath("/version").Do(ctx).Error()
	}}, nil
}

// Check is the Checker.
func (c *APIServerCheck) Check(req *http.Request) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	clk := c.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	interval := c.Interval
	if interval <= 0 {
		interval = APIServerCheckInterval
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = APIServerCheckTimeout
	}
	now := clk.Now()
	if c.checked && now.Sub(c.checkedAt) < interval {
		return c.last
	}
	// The answer is shared with later probes: do not let this probe's
	// caller hanging up cut it short.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), timeout)
	defer cancel()
	c.last = nil
	if err := c.Ping(ctx); err != nil {
		c.last = fmt.Errorf("API server unreachable: %w", err)
	}
	c.checked, c.checkedAt = true, now
	return c.last
}
