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

package webhook

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit is a token bucket per client address.
type RateLimit struct {
	// Rate in requests per second; zero disables limiting.
	Rate float64
	// Burst is how many requests a client may make at once.
	Burst int
	// TrustForwardedFor keys clients by the first X-Forwarded-For hop; set
	// it only behind a proxy that overwrites the header.
	TrustForwardedFor bool
}

// Defaults for RateLimit. Notion automations and Google push notifications
// arrive from a few shared addresses, so the per-client limit is generous:
// it stops a runaway or hostile client, not normal traffic.
const (
	DefaultRateLimit = 100.0
	DefaultBurst     = 200
	// limiterIdle is how long a client's bucket is kept without requests.
	limiterIdle = 5 * time.Minute
	// maxClients bounds the memory the limiter may hold.
	maxClients = 100_000
)

type limiter struct {
	cfg       RateLimit
	mu        sync.Mutex
	clients   map[string]*clientBucket
	lastSweep time.Time
	now       func() time.Time
}

type clientBucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiter(cfg RateLimit) *limiter {
	if cfg.Burst <= 0 {
		cfg.Burst = max(1, int(cfg.Rate))
	}
	return &limiter{cfg: cfg, clients: map[string]*clientBucket{}, now: time.Now}
}

// allow takes a token for the client, or says how long until one is free.
func (l *limiter) allow(client string) (time.Duration, bool) {
	if l.cfg.Rate <= 0 {
		return 0, true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > time.Minute || len(l.clients) >= maxClients {
		l.sweep(now)
	}
	b, ok := l.clients[client]
	if !ok {
		b = &clientBucket{lim: rate.NewLimiter(rate.Limit(l.cfg.Rate), l.cfg.Burst)}
		l.clients[client] = b
	}
	b.seen = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// sweep drops idle buckets; if the map is still full, it starts over, which
// at worst lets a burst through rather than growing without bound.
func (l *limiter) sweep(now time.Time) {
	l.lastSweep = now
	for k, b := range l.clients {
		if now.Sub(b.seen) > limiterIdle {
			delete(l.clients, k)
		}
	}
	if len(l.clients) >= maxClients {
		l.clients = map[string]*clientBucket{}
	}
}
