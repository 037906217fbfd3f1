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

package oauth

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/switchboard-dev/switchboard/internal/clocks"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// RateLimits remembers, per provider bucket, until when a provider asked
// not to be called (429), so that no request is sent into a limit that
// has not reset: Discord bans clients that keep making requests it
// answers 429 (https://discord.com/developers/docs/topics/rate-limits,
// "Invalid Request Limit"). Buckets are Discord's X-RateLimit-Bucket when
// an answer names one (several routes may share it), else the route
// itself (the token endpoint names none); a global limit holds every
// route of the upstream. The memory is the process's: each replica learns
// its own limits. The zero value is ready to use.
type RateLimits struct {
	// Clock is the wall clock when nil.
	Clock clock.PassiveClock

	mu      sync.Mutex
	until   map[string]time.Time // bucket key → reset
	buckets map[string]string    // route key → bucket key
}

func (l *RateLimits) now() time.Time {
	return clocks.Now(l.Clock)
}

func routeKey(u upstream.Name, route string) string { return string(u) + " " + route }
func globalKey(u upstream.Name) string              { return string(u) + " *global*" }

// Wait is how long a call of route on u must wait for a limit to reset
// (0: it may be sent now).
func (l *RateLimits) Wait(u upstream.Name, route string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	rk := routeKey(u, route)
	bucket := rk
	if b, ok := l.buckets[rk]; ok {
		bucket = b
	}
	var wait time.Duration
	for _, k := range []string{bucket, globalKey(u)} {
		if t, ok := l.until[k]; ok {
			if d := t.Sub(now); d > 0 {
				wait = max(wait, d)
			} else {
				delete(l.until, k)
			}
		}
	}
	return wait
}

// Observe learns from an answer of route on u: a 429 holds its bucket
// (or, global, the whole upstream) for the wait it states; a 2xx that
// leaves the bucket with X-RateLimit-Remaining: 0 holds it until
// X-RateLimit-Reset-After. It returns the wait a 429 stated (0 for any
// other answer).
func (l *RateLimits) Observe(u upstream.Name, route string, status int, header http.Header, body []byte) time.Duration {
	rk := routeKey(u, route)
	bucket := rk
	if b := header.Get("X-RateLimit-Bucket"); b != "" {
		bucket = string(u) + " bucket " + b
	}
	var wait time.Duration
	global := false
	switch {
	case status == http.StatusTooManyRequests:
		wait, global = limitOf(header, body, l.now())
	case status >= 200 && status < 300 && header.Get("X-RateLimit-Remaining") == "0":
		wait = seconds(header.Get("X-RateLimit-Reset-After"))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.until == nil {
		l.until, l.buckets = map[string]time.Time{}, map[string]string{}
	}
	if bucket != rk {
		l.buckets[rk] = bucket
	}
	if wait <= 0 {
		return 0
	}
	key := bucket
	if global {
		key = globalKey(u)
	}
	if t := l.now().Add(wait); t.After(l.until[key]) {
		l.until[key] = t
	}
	if status != http.StatusTooManyRequests {
		return 0
	}
	return wait
}

// limitOf reads a 429: the JSON body's retry_after (float seconds) and
// global flag, else X-RateLimit-Reset-After (float seconds), else
// Retry-After; one second when none says (a 429 is never retried at
// once). X-RateLimit-Global marks a global limit too.
func limitOf(header http.Header, body []byte, now time.Time) (time.Duration, bool) {
	var b struct {
		RetryAfter *float64 `json:"retry_after"`
		Global     bool     `json:"global"`
	}
	_ = json.Unmarshal(body, &b)
	global := b.Global || strings.EqualFold(header.Get("X-RateLimit-Global"), "true")
	var wait time.Duration
	switch {
	case b.RetryAfter != nil && *b.RetryAfter > 0 && *b.RetryAfter < 1e6:
		wait = time.Duration(math.Ceil(*b.RetryAfter * float64(time.Second)))
	case seconds(header.Get("X-RateLimit-Reset-After")) > 0:
		wait = seconds(header.Get("X-RateLimit-Reset-After"))
	default:
		wait = outbound.ParseRetryAfter(header.Get("Retry-After"), now)
	}
	return max(wait, time.Second), global
}

// seconds reads a header of (possibly fractional) seconds; 0 when absent,
// unreadable, negative or absurd.
func seconds(v string) time.Duration {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f <= 0 || f > 1e6 || math.IsNaN(f) {
		return 0
	}
	return time.Duration(math.Ceil(f * float64(time.Second)))
}

// RateLimited is the error of a call not sent, or answered 429, because
// of a limit: transient, carrying the wait (outbound.RetryAfterOf reads
// it).
func RateLimited(u upstream.Name, route string, wait time.Duration, sent bool) error {
	reason := fmt.Sprintf("rate limited on %s for %s more; not sent", route, wait.Round(time.Millisecond))
	if sent {
		reason = fmt.Sprintf("HTTP 429 on %s: rate limited for %s", route, wait.Round(time.Millisecond))
	}
	return &outbound.Error{Upstream: u, Class: outbound.Transient, Status: http.StatusTooManyRequests, RetryAfter: wait, Reason: reason}
}

// IsRateLimited reports whether err is a call refused by a rate limit
// (answered 429, or not sent because of one), and how long to wait.
func IsRateLimited(err error) (time.Duration, bool) {
	oe, ok := outbound.Classify(err)
	if !ok || oe.Status != http.StatusTooManyRequests {
		return 0, false
	}
	return max(oe.RetryAfter, time.Second), true
}
