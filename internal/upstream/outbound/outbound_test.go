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

package outbound

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// newClient points the docswell upstream at srv.
func newClient(t *testing.T, srv *httptest.Server, opts Options) (*Client, *prometheus.Registry) {
	t.Helper()
	ups := upstream.NewSet()
	if err := ups.Set("docswell=" + srv.URL); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	opts.Registerer = reg
	c, err := New(ups, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, reg
}

func TestClassification(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		retryAfter string
		class      Class
		wantAfter  time.Duration
	}{
		{"404 is permanent (seed 001 §7.2)", 404, "", Permanent, 0},
		{"403 is permanent (seed 001 §7.2)", 403, "", Permanent, 0},
		{"400 is permanent", 400, "", Permanent, 0},
		{"410 is permanent", 410, "", Permanent, 0},
		{"500 is transient (seed 001 §7.2)", 500, "", Transient, 0},
		{"502 is transient", 502, "", Transient, 0},
		{"503 with Retry-After seconds is transient", 503, "30", Transient, 30 * time.Second},
		{"429 with Retry-After is transient", 429, "7", Transient, 7 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(`{"status": 404, "errors": "Slide not found or private"}`))
			}))
			defer srv.Close()
			c, _ := newClient(t, srv, Options{})
			_, err := c.Do(context.Background(), Request{Upstream: upstream.Docswell, Path: "/service/oembed"})
			e, ok := Classify(err)
			if !ok {
				t.Fatalf("got %v, want a classified error", err)
			}
			if e.Class != tc.class || e.Status != tc.status || e.RetryAfter != tc.wantAfter {
				t.Fatalf("got class %s status %d retryAfter %s", e.Class, e.Status, e.RetryAfter)
			}
			if !strings.Contains(string(e.Body), "Slide not found") {
				t.Fatalf("error body not kept for the caller: %q", e.Body)
			}
		})
	}
}

func TestRetryAfterAsHTTPDate(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	if d := ParseRetryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now); d != 90*time.Second {
		t.Fatalf("HTTP-date Retry-After = %s, want 90s", d)
	}
	for _, v := range []string{"", "soon", "-5", now.Add(-time.Minute).Format(http.TimeFormat)} {
		if d := ParseRetryAfter(v, now); d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %s, want 0", v, d)
		}
	}
}

func TestSuccessSendsUserAgentAndCountsMetrics(t *testing.T) {
	var ua string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua = r.Header.Get("User-Agent")
		_, _ = w.Write([]byte(`{"type":"rich"}`))
	}))
	defer srv.Close()
	c, reg := newClient(t, srv, Options{})
	resp, err := c.Do(context.Background(), Request{Upstream: upstream.Docswell, Path: "/service/oembed"})
	if err != nil || string(resp.Body) != `{"type":"rich"}` {
		t.Fatalf("resp %v err %v", resp, err)
	}
	if ua != DefaultUserAgent {
		t.Fatalf("User-Agent = %q", ua)
	}
	_, _ = c.Do(context.Background(), Request{Upstream: upstream.Docswell, Path: "/x", Timeout: time.Nanosecond})
	if n := testutil.ToFloat64(c.metrics.Requests.WithLabelValues("docswell", "success")); n != 1 {
		t.Fatalf("success count = %v", n)
	}
	if n := testutil.ToFloat64(c.metrics.Requests.WithLabelValues("docswell", "transient")); n != 1 {
		t.Fatalf("transient count = %v", n)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var observed uint64
	for _, f := range fams {
		if f.GetName() != "switchboard_upstream_request_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetLabel()[0].GetValue() == "docswell" {
				observed = m.GetHistogram().GetSampleCount()
			}
		}
	}
	if observed != 2 {
		t.Fatalf("docswell's latency histogram holds %d requests, want 2", observed)
	}
}

// TestEveryUpstreamsSeriesIsServedBeforeItsFirstRequest: a scrape names
// each upstream's request counter (every outcome) and latency histogram
// at zero from the start, so a dashboard or an alert's rate() reads 0,
// not an absent series.
func TestEveryUpstreamsSeriesIsServedBeforeItsFirstRequest(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, reg := newClient(t, srv, Options{})
	keys := []string{string(SinkUpstream)}
	for _, n := range upstream.Names() {
		keys = append(keys, string(n))
	}
	if n, err := testutil.GatherAndCount(reg, "switchboard_upstream_requests_total"); err != nil || n != 3*len(keys) {
		t.Fatalf("request counter series = %d (%v), want %d: every upstream and outcome", n, err, 3*len(keys))
	}
	if n, err := testutil.GatherAndCount(reg, "switchboard_upstream_request_duration_seconds"); err != nil || n != len(keys) {
		t.Fatalf("latency histogram series = %d (%v), want %d: every upstream", n, err, len(keys))
	}
	c, err := New(upstream.NewSet(), Options{Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		for _, o := range []string{"success", "transient", "permanent"} {
			if v := testutil.ToFloat64(c.metrics.Requests.WithLabelValues(k, o)); v != 0 {
				t.Errorf("%s %s = %v before any request", k, o, v)
			}
		}
	}
}

func TestTimeoutIsTransient(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, _ := newClient(t, srv, Options{Timeout: 100 * time.Millisecond})
	began := time.Now()
	_, err := c.Do(context.Background(), Request{Upstream: upstream.Docswell, Path: "/slow"})
	if !IsTransient(err) || !strings.Contains(err.Error(), "no answer within 100ms") {
		t.Fatalf("got %v, want a transient timeout", err)
	}
	if elapsed := time.Since(began); elapsed > 5*time.Second {
		t.Fatalf("timeout took %s", elapsed)
	}
}

func TestConnectionRefusedIsTransient(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	c, _ := newClient(t, srv, Options{})
	srv.Close()
	_, err := c.Do(context.Background(), Request{Upstream: upstream.Docswell, Path: "/"})
	if !IsTransient(err) || !strings.Contains(err.Error(), "connection failed") {
		t.Fatalf("got %v", err)
	}
}

func TestSizeCaps(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 1000)))
	}))
	defer srv.Close()
	c, _ := newClient(t, srv, Options{})
	if _, err := c.Do(context.Background(), Request{Upstream: upstream.Docswell, MaxBytes: 1000}); err != nil {
		t.Fatalf("a body of exactly the cap was refused: %v", err)
	}
	_, err := c.Do(context.Background(), Request{Upstream: upstream.Docswell, MaxBytes: 999})
	if !IsPermanent(err) || !strings.Contains(err.Error(), "larger than 999 bytes") {
		t.Fatalf("got %v, want a permanent size error", err)
	}
	resp, err := c.Do(context.Background(), Request{Upstream: upstream.Docswell, MaxBytes: 100, Truncate: true})
	if err != nil || len(resp.Body) != 100 || !resp.Truncated {
		t.Fatalf("truncating read: %d bytes, truncated %v, %v", len(resp.Body), resp != nil && resp.Truncated, err)
	}
}

func TestOnlyUpstreamHostsAndNoRedirectOffThem(t *testing.T) {
	reached := false
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusMovedPermanently)
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}))
	defer srv.Close()
	c, _ := newClient(t, srv, Options{})
	_, err := c.Do(context.Background(), Request{Upstream: upstream.Docswell, Path: "/away"})
	if !IsPermanent(err) || !errors.Is(err, upstream.ErrHostNotAllowed) || reached {
		t.Fatalf("off-host redirect: got %v (reached %v)", err, reached)
	}
	resp, err := c.Do(context.Background(), Request{Upstream: upstream.Docswell, Path: "/moved"})
	if err != nil || resp.URL.Path != "/here" {
		t.Fatalf("same-host redirect: %v", err)
	}
	// A client library using HTTPClient directly is held to the allowlist too.
	if _, err := c.HTTPClient().Get(other.URL); !errors.Is(err, upstream.ErrHostNotAllowed) {
		t.Fatalf("direct request to another host: %v", err)
	}
}

// Schedules shaped like the seeds' (each lives beside its controller),
// exact for the arithmetic.
var (
	notionLike   = Schedule{Base: time.Second, Retries: 3, Max: MaxRetryAfter, Jitter: NoJitter}
	calendarLike = Schedule{Base: time.Second, Retries: 5, Max: MaxRetryAfter, Jitter: NoJitter}
	slideLike    = Schedule{Base: 2 * time.Second, Retries: 3, Max: MaxRetryAfter, Jitter: 0.2}
)

func TestSchedulesDouble(t *testing.T) {
	for _, tc := range []struct {
		name  string
		s     Schedule
		delay []time.Duration
	}{
		{"1, 2, 4 s (seed 000 §7.2)", notionLike, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		{"1, 2, 4, 8, 16 s (seed 002)", calendarLike, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}},
		{"rechecks after the retries ran out", Schedule{Base: time.Hour, Max: 24 * time.Hour, Jitter: NoJitter}, []time.Duration{time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 16 * time.Hour, 24 * time.Hour, 24 * time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, want := range tc.delay {
				if got := tc.s.Delay(i + 1); got != want {
					t.Fatalf("retry %d: %v, want %v", i+1, got, want)
				}
			}
			if tc.s.Retries > 0 && (tc.s.Exhausted(len(tc.delay)) || !tc.s.Exhausted(len(tc.delay)+1)) {
				t.Fatalf("Exhausted is off by one at %d retries", len(tc.delay))
			}
		})
	}
}

func TestSchedulesAreJitteredUnlessTheySayNot(t *testing.T) {
	seen := map[time.Duration]bool{}
	for range 50 {
		d := Schedule{Base: 10 * time.Second}.Delay(1)
		if d < 9*time.Second || d > 11*time.Second {
			t.Fatalf("a schedule without a Jitter gave %v, want 10s ±10 %%", d)
		}
		seen[d] = true
	}
	if len(seen) < 2 {
		t.Fatal("a schedule without a Jitter is not spread: it should default to ±10 %")
	}
	if d := (Schedule{Base: 10 * time.Second, Jitter: NoJitter}).Delay(1); d != 10*time.Second {
		t.Fatalf("NoJitter gave %v", d)
	}
}

func TestJitterStaysWithinItsBand(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 2 * time.Second, 2: 4 * time.Second, 3: 8 * time.Second} {
		lo, hi := want, want
		for range 200 {
			d := slideLike.Delay(n)
			lo, hi = min(lo, d), max(hi, d)
			if d < want*8/10 || d > want*12/10 {
				t.Fatalf("retry %d: %s outside %s ±20%%", n, d, want)
			}
		}
		if lo == hi {
			t.Fatalf("retry %d: 200 delays all %s: no jitter", n, lo)
		}
	}
}

func TestJitterLaterIsNeverEarlyAndAtMostASecondLate(t *testing.T) {
	for _, d := range []time.Duration{500 * time.Millisecond, time.Minute, 14 * 24 * time.Hour} {
		spread := min(time.Duration(float64(d)*DefaultJitter), MaxDeadlineSpread)
		lo, hi := 2*d, time.Duration(0)
		for range 200 {
			got := JitterLater(d, DefaultJitter)
			lo, hi = min(lo, got), max(hi, got)
			if got < d || got > d+spread {
				t.Fatalf("JitterLater(%s) = %s, want within [%s, %s]", d, got, d, d+spread)
			}
		}
		if lo == hi {
			t.Fatalf("JitterLater(%s): 200 delays all %s: no spread", d, lo)
		}
	}
	if got := JitterLater(0, DefaultJitter); got != 0 {
		t.Fatalf("JitterLater(0) = %s", got)
	}
}

func TestRetryAfterIsHonouredAndClamped(t *testing.T) {
	for _, tc := range []struct {
		retryAfter, want time.Duration
	}{
		{20 * time.Second, 20 * time.Second},
		{time.Hour, MaxRetryAfter},
		{100 * time.Millisecond, time.Second}, // at least MinRetryAfter, and the schedule's 1 s
	} {
		err := &Error{Class: Transient, RetryAfter: tc.retryAfter}
		if got := notionLike.After(1, err); got != tc.want {
			t.Fatalf("Retry-After %v gave %v, want %v", tc.retryAfter, got, tc.want)
		}
	}
	if got := notionLike.After(3, &Error{Class: Transient, RetryAfter: time.Second}); got != 4*time.Second {
		t.Fatalf("a short Retry-After shortened the schedule: %v", got)
	}
}

func TestNextIsTheEarliestDeadline(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	if _, ok := Next(now); ok {
		t.Fatal("no deadline, yet one")
	}
	d, ok := Next(now, time.Time{}, now.Add(time.Hour), now.Add(15*time.Minute), now.Add(24*time.Hour))
	if !ok || d != 15*time.Minute {
		t.Fatalf("got %v %v, want 15m", d, ok)
	}
	if d, _ := Next(now, now.Add(-time.Minute)); d != 0 {
		t.Fatalf("a passed deadline gave %v, want 0", d)
	}
}

func TestAfterOrFallsBackToTheNormalTimerOnceTheScheduleIsSpent(t *testing.T) {
	s := calendarLike
	for n, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second} {
		if got := s.AfterOr(n+1, nil, 15*time.Minute); got != want {
			t.Fatalf("retry %d: %s, want %s", n+1, got, want)
		}
	}
	for _, n := range []int{6, 7, 50} {
		if got := s.AfterOr(n, nil, 15*time.Minute); got < 13*time.Minute+30*time.Second || got > 16*time.Minute+30*time.Second {
			t.Fatalf("retry %d: %s, want the 15-minute timer ±10 %%", n, got)
		}
	}
	throttled := &Error{Class: Transient, RetryAfter: 4 * time.Minute}
	if got := (Schedule{Base: time.Second, Retries: 1, Jitter: NoJitter}).AfterOr(2, throttled, time.Second); got != 4*time.Minute {
		t.Fatalf("after the schedule, Retry-After 4m gave %s", got)
	}
}
