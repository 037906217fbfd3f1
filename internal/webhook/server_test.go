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
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/oauth/targets"

	"github.com/go-logr/logr"
)

// testFamily is a route family like the integrations'.
var testFamily = Family{Name: "test", Routes: func(Deps) []Route {
	return []Route{
		{Pattern: "POST /test/echo", Handler: func(w http.ResponseWriter, r *http.Request) error {
			var body map[string]any
			if err := DecodeJSON(r, &body); err != nil {
				return err
			}
			WriteJSON(w, http.StatusAccepted, body)
			return nil
		}},
		{Pattern: "GET /test/conflict", Handler: func(http.ResponseWriter, *http.Request) error {
			return Errorf(http.StatusConflict, "connection is not Active").WithDetails(map[string]any{"phase": "Error"})
		}},
		{Pattern: "GET /test/broken", Handler: func(http.ResponseWriter, *http.Request) error {
			return errors.New("database password is hunter2")
		}},
		{Pattern: "GET /test/panic", Handler: func(http.ResponseWriter, *http.Request) error {
			panic("boom")
		}},
	}
}}

// start serves on a loopback port and returns its base URL.
func start(t *testing.T, opts Options) string {
	t.Helper()
	return startAll(t, opts).public
}

// bases are the base URLs of a server's three listeners.
type bases struct{ public, metrics, probes, pprof string }

// startAll serves the public, metrics, probe and pprof listeners on loopback ports.
func startAll(t *testing.T, opts Options) bases {
	t.Helper()
	opts.Log = logr.Discard()
	s, err := NewServer(opts, Deps{}, testFamily)
	if err != nil {
		t.Fatal(err)
	}
	var l Listeners
	for _, into := range []*net.Listener{&l.Public, &l.Metrics, &l.Probes, &l.Pprof} {
		if *into, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeListeners(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	url := func(ln net.Listener) string { return "http://" + ln.Addr().String() }
	return bases{public: url(l.Public), metrics: url(l.Metrics), probes: url(l.Probes), pprof: url(l.Pprof)}
}

type errorAnswer struct {
	Error struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

func decodeError(t *testing.T, resp *http.Response) errorAnswer {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q, want application/json", ct)
	}
	var e errorAnswer
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatalf("error body is not the common format: %v", err)
	}
	return e
}

func TestErrorsUseTheCommonFormat(t *testing.T) {
	base := start(t, Options{})
	for _, tc := range []struct {
		name, method, path, body, contentType string
		status                                int
		code                                  string
	}{
		{"unknown path is 404 NOT_FOUND", "GET", "/nowhere", "", "", 404, CodeNotFound},
		{"wrong method is 405 METHOD_NOT_ALLOWED", "GET", "/test/echo", "", "", 405, CodeMethodNotAllowed},
		{"unparsable JSON is 400 INVALID_REQUEST", "POST", "/test/echo", "{not json", "application/json", 400, CodeInvalidRequest},
		{"two JSON values are 400 INVALID_REQUEST", "POST", "/test/echo", "{} {}", "application/json", 400, CodeInvalidRequest},
		{"a form body is 415 UNSUPPORTED_MEDIA_TYPE", "POST", "/test/echo", "a=b", "application/x-www-form-urlencoded", 415, CodeUnsupportedMediaType},
		{"a handler's own error keeps its status and details", "GET", "/test/conflict", "", "", 409, CodeConflict},
		{"an internal error is 500 and hides its text", "GET", "/test/broken", "", "", 500, CodeInternal},
		{"a panic is 500 INTERNAL_ERROR", "GET", "/test/panic", "", "", 500, CodeInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.status)
			}
			e := decodeError(t, resp)
			if e.Error.Code != tc.code || e.Error.Message == "" {
				t.Fatalf("error = %+v, want code %s with a message", e.Error, tc.code)
			}
			if strings.Contains(e.Error.Message, "hunter2") {
				t.Fatal("internal error text reached the caller")
			}
			if tc.code == CodeConflict && e.Error.Details["phase"] != "Error" {
				t.Fatalf("details = %v", e.Error.Details)
			}
		})
	}
}

func TestErrorBodyAlwaysCarriesDetails(t *testing.T) {
	// The README documents {"error": {"code", "message", "details": {}}}:
	// a client reading error.details must find an object even when the
	// error has nothing to add.
	for _, tc := range []struct {
		name string
		err  *Error
		want string
	}{
		{"an error without details sends an empty object", Errorf(http.StatusNotFound, "no such endpoint"), `{}`},
		{"an error with details sends them", Errorf(http.StatusConflict, "x").WithDetails(map[string]any{"phase": "Error"}), `{"phase":"Error"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			WriteError(rec, tc.err)
			var body struct {
				Error map[string]json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if got := string(body.Error["details"]); got != tc.want {
				t.Fatalf("details = %s, want %s (body %s)", got, tc.want, rec.Body)
			}
		})
	}
}

func TestCodeTableMatchesSeed000(t *testing.T) {
	// Seed 000 §6.3.
	for status, code := range map[int]string{400: "INVALID_REQUEST", 401: "UNAUTHORIZED", 403: "FORBIDDEN",
		404: "NOT_FOUND", 429: "RATE_LIMIT_EXCEEDED", 500: "INTERNAL_ERROR", 502: "BAD_GATEWAY", 503: "SERVICE_UNAVAILABLE"} {
		if got := CodeFor(status); got != code {
			t.Errorf("CodeFor(%d) = %s, want %s", status, got, code)
		}
	}
}

func TestBodiesOverOneMebibyteAre413(t *testing.T) {
	base := start(t, Options{})
	big := strings.Repeat("x", 2<<20)

	t.Run("with Content-Length", func(t *testing.T) {
		resp, err := http.Post(base+"/test/echo", "application/json", strings.NewReader(`{"a":"`+big+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status = %d, want 413", resp.StatusCode)
		}
		if e := decodeError(t, resp); e.Error.Code != CodePayloadTooLarge || e.Error.Details["limitBytes"] != float64(1<<20) {
			t.Fatalf("error = %+v", e.Error)
		}
	})
	t.Run("chunked, without Content-Length", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			_, _ = pw.Write([]byte(`{"a":"` + big + `"}`))
			_ = pw.Close()
		}()
		resp, err := http.Post(base+"/test/echo", "application/json", pr)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status = %d, want 413", resp.StatusCode)
		}
		if e := decodeError(t, resp); e.Error.Code != CodePayloadTooLarge {
			t.Fatalf("error = %+v", e.Error)
		}
	})
	t.Run("a body just under the limit is served", func(t *testing.T) {
		body := `{"a":"` + strings.Repeat("x", (1<<20)-16) + `"}`
		resp, err := http.Post(base+"/test/echo", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("status = %d, want 202", resp.StatusCode)
		}
	})
}

func TestSlowHeadersCloseTheConnection(t *testing.T) {
	base := start(t, Options{ReadHeaderTimeout: 200 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Send the request line and one header, then stall.
	if _, err := conn.Write([]byte("POST /test/echo HTTP/1.1\r\nHost: x\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = bufio.NewReader(conn).ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("server kept a connection whose headers never arrived")
	}
	if err == nil {
		// Go may answer 408 before closing; the next read must see the close.
		if _, err = io.ReadAll(conn); err != nil && !errors.Is(err, io.EOF) {
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("connection left open after the header timeout")
			}
		}
	}
}

func TestRateLimitAnswers429WithRetryAfter(t *testing.T) {
	base := start(t, Options{RateLimit: RateLimit{Rate: 1, Burst: 2}})
	statuses := []int{}
	var last *http.Response
	for range 3 {
		resp, err := http.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, resp.StatusCode)
		if resp.StatusCode != http.StatusTooManyRequests {
			resp.Body.Close()
		}
		last = resp
	}
	if statuses[0] != 200 || statuses[1] != 200 || statuses[2] != 429 {
		t.Fatalf("statuses = %v, want [200 200 429]", statuses)
	}
	if ra := last.Header.Get("Retry-After"); ra != "1" {
		t.Fatalf("Retry-After = %q, want 1", ra)
	}
	if e := decodeError(t, last); e.Error.Code != CodeRateLimitExceeded {
		t.Fatalf("error = %+v", e.Error)
	}
}

func TestRateLimitIsPerClient(t *testing.T) {
	l := newLimiter(RateLimit{Rate: 1, Burst: 1})
	now := time.Unix(1_700_000_000, 0)
	l.now = func() time.Time { return now }
	if _, ok := l.allow("10.0.0.1"); !ok {
		t.Fatal("first request of client 1 refused")
	}
	if _, ok := l.allow("10.0.0.2"); !ok {
		t.Fatal("client 2 paid for client 1")
	}
	if wait, ok := l.allow("10.0.0.1"); ok || wait != time.Second {
		t.Fatalf("second request of client 1: ok=%v wait=%s, want refused for 1s", ok, wait)
	}
	now = now.Add(time.Second)
	if _, ok := l.allow("10.0.0.1"); !ok {
		t.Fatal("client 1 still refused after its token came back")
	}
	now = now.Add(limiterIdle + 2*time.Minute)
	l.allow("10.0.0.3")
	if len(l.clients) != 1 {
		t.Fatalf("idle buckets kept: %d", len(l.clients))
	}
}

func TestRequestIDIsEchoedOrMinted(t *testing.T) {
	base := start(t, Options{})
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.Header.Set("X-Request-Id", "abc-123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Request-Id"); got != "abc-123" {
		t.Fatalf("echoed id = %q", got)
	}
	req.Header.Set("X-Request-Id", "bad id with spaces")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Request-Id"); len(got) != 24 {
		t.Fatalf("minted id = %q, want 24 hex digits", got)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestMetricsAndProbesAreNotOnThePublicListener(t *testing.T) {
	b := startAll(t, Options{})
	for _, path := range []string{"/metrics", "/healthz", "/readyz", "/debug/pprof/", "/debug/pprof/heap"} {
		resp, err := http.Get(b.public + path)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("public %s = %d, want 404", path, resp.StatusCode)
		}
		if e := decodeError(t, resp); e.Error.Code != CodeNotFound {
			t.Errorf("public %s: error = %+v, want NOT_FOUND", path, e.Error)
		}
	}
	// Seed 000 §6.1's health check stays on the public port.
	if code, body := get(t, b.public+"/"); code != 200 || body != "ok\n" {
		t.Fatalf("public / = %d %q, want 200 ok", code, body)
	}
	// Each ops listener serves only its own paths.
	for _, tc := range []struct{ base, path string }{{b.metrics, "/healthz"}, {b.probes, "/metrics"}, {b.probes, "/"},
		{b.metrics, "/debug/pprof/heap"}, {b.pprof, "/metrics"}} {
		if code, body := get(t, tc.base+tc.path); code != 404 || !strings.Contains(body, CodeNotFound) {
			t.Errorf("%s on the wrong ops listener = %d %s, want 404 NOT_FOUND", tc.path, code, body)
		}
	}
}

// The profiles are served on their own listener only.
func TestProfilesAreServedOnThePprofListener(t *testing.T) {
	b := startAll(t, Options{})
	if code, body := get(t, b.pprof+"/debug/pprof/heap?debug=1"); code != 200 || !strings.Contains(body, "heap profile") {
		t.Fatalf("heap profile = %d %.80q", code, body)
	}
	if code, body := get(t, b.pprof+"/debug/pprof/"); code != 200 || !strings.Contains(body, "goroutine") {
		t.Fatalf("profile index = %d %.80q", code, body)
	}
}

func TestProbesReportReadiness(t *testing.T) {
	ready := errors.New("informer cache not synced")
	b := startAll(t, Options{Ready: func(*http.Request) error { return ready }})
	if code, _ := get(t, b.probes+"/healthz"); code != 200 {
		t.Fatalf("/healthz = %d", code)
	}
	if code, body := get(t, b.probes+"/readyz"); code != 503 || !strings.Contains(body, "SERVICE_UNAVAILABLE") ||
		!strings.Contains(body, "informer cache not synced") {
		t.Fatalf("/readyz before sync = %d %s", code, body)
	}
	ready = nil
	if code, _ := get(t, b.probes+"/readyz"); code != 200 {
		t.Fatalf("/readyz after sync = %d", code)
	}
}

func TestMetricsLabelRequestsByRoutePattern(t *testing.T) {
	b := startAll(t, Options{})
	get(t, b.public+"/nowhere/secret-derived-path")
	_, metrics := get(t, b.metrics+"/metrics")
	if !strings.Contains(metrics, `switchboard_webhook_requests_total{code="404",route="unmatched"} 1`) {
		t.Fatalf("metrics lack the 404 by route pattern:\n%s", metrics)
	}
	if strings.Contains(metrics, "secret-derived-path") {
		t.Fatal("a raw path reached a metric label")
	}
}

func TestListenAndServeFailsWhenAnOpsAddressIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	s, err := NewServer(Options{Log: logr.Discard(), Addr: "127.0.0.1:0", MetricsAddr: "0", ProbeAddr: taken.Addr().String()}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.ListenAndServe(ctx); err == nil || !strings.Contains(err.Error(), "probe listener") {
		t.Fatalf("err = %v, want the probe listener's error", err)
	}
}

// The OAuth routes connect the targets of the families the server was
// built with, and no others.
func TestOAuthRoutesKnowTheTargetsOfTheirFamilies(t *testing.T) {
	connect := func(families ...Family) int {
		t.Helper()
		s, err := NewServer(Options{Log: logr.Discard()}, Deps{}, families...)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/oauth/notion/connect?namespace=a&name=b", nil))
		return rec.Code
	}
	// Without a token the answer is the one refusal, before any read.
	if got := connect(familyNamed("oauth"), familyNamed("notion")); got != http.StatusForbidden {
		t.Errorf("with the notion family: %d, want 403", got)
	}
	if got := connect(familyNamed("oauth"), familyNamed("calendar")); got != http.StatusNotFound {
		t.Errorf("without the notion family: %d, want 404", got)
	}
	extra := Family{Name: "extra", OAuth: &OAuthTarget{Target: familyNamed("notion").OAuth.Target}}
	if got := connect(familyNamed("oauth"), extra); got != http.StatusForbidden {
		t.Errorf("with a family that brings only the target: %d, want 403", got)
	}
	if _, err := NewServer(Options{Log: logr.Discard()}, Deps{}, familyNamed("oauth"), familyNamed("notion"), extra); err == nil {
		t.Error("two families carrying one OAuth target were accepted")
	}
}

// Families names each family once, and the server builds from them.
func TestFamilies(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Families() {
		if seen[f.Name] {
			t.Errorf("family %s listed twice", f.Name)
		}
		seen[f.Name] = true
	}
	for _, name := range []string{"calendar", "notion", "oauth", "receive", "sheets", "signin", "signup"} {
		if !seen[name] {
			t.Errorf("family %s is not listed", name)
		}
	}
	// Every kind the OAuth routes connect is served: a target declared in
	// internal/oauth/targets whose family is missing could never connect.
	for _, target := range targets.All() {
		if !slices.ContainsFunc(Families(), func(f Family) bool { return f.OAuth != nil && f.OAuth.Name == target.Name }) {
			t.Errorf("no family carries the OAuth target %s", target.Name)
		}
	}
	if _, err := NewServer(Options{Log: logr.Discard()}, Deps{}, Families()...); err != nil {
		t.Fatal(err)
	}
}

func TestConflictingRoutesAreAnError(t *testing.T) {
	dup := Family{Name: "dup", Routes: func(Deps) []Route {
		h := func(http.ResponseWriter, *http.Request) error { return nil }
		return []Route{{Pattern: "GET /x", Handler: h}, {Pattern: "GET /x", Handler: h}}
	}}
	if _, err := NewServer(Options{Log: logr.Discard()}, Deps{}, dup); err == nil {
		t.Fatal("two families claiming one pattern were accepted")
	}
}

func TestShutdownLetsInFlightRequestsFinish(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	slow := Family{Name: "slow", Routes: func(Deps) []Route {
		return []Route{{Pattern: "GET /slow", Handler: func(w http.ResponseWriter, r *http.Request) error {
			close(arrived)
			<-release
			WriteJSON(w, 200, map[string]bool{"done": true})
			return nil
		}}}
	}}
	s, err := NewServer(Options{Log: logr.Discard()}, Deps{}, slow)
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()

	got := make(chan int, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/slow")
		if err != nil {
			got <- -1
			return
		}
		resp.Body.Close()
		got <- resp.StatusCode
	}()
	<-arrived
	cancel()
	// The listener closes when the shutdown begins: new connections are
	// refused while the request is still in flight.
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepts connections 30s after the shutdown began")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	if code := <-got; code != 200 {
		t.Fatalf("in-flight request got %d, want 200", code)
	}
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// On SIGTERM the server first drains for ShutdownDelay: /readyz fails so
// the endpoints drop the pod, requests are still served but each closes its
// connection, and only then does the listener close.
func TestShutdownDelayServesNotReadyThenStops(t *testing.T) {
	s, err := NewServer(Options{Log: logr.Discard(), ShutdownDelay: time.Hour}, Deps{}, testFamily)
	if err != nil {
		t.Fatal(err)
	}
	delayed := make(chan time.Duration, 1)
	fire := make(chan time.Time)
	s.after = func(d time.Duration) <-chan time.Time { delayed <- d; return fire }
	var l Listeners
	for _, into := range []*net.Listener{&l.Public, &l.Probes} {
		if *into, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	public, probes := "http://"+l.Public.Addr().String(), "http://"+l.Probes.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeListeners(ctx, l) }()
	if code, _ := get(t, probes+"/readyz"); code != 200 {
		t.Fatalf("/readyz before SIGTERM = %d", code)
	}
	resp, err := http.Get(public + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Close {
		t.Fatal("a request before SIGTERM was told to close its connection")
	}

	cancel()
	if d := <-delayed; d != time.Hour {
		t.Fatalf("the drain waits %s, want ShutdownDelay", d)
	}
	if code, body := get(t, probes+"/readyz"); code != 503 || !strings.Contains(body, "shutting down") {
		t.Fatalf("/readyz while draining = %d %s, want 503 shutting down", code, body)
	}
	resp, err = http.Get(public + "/")
	if err != nil {
		t.Fatalf("a request while draining: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !resp.Close {
		t.Fatalf("a request while draining = %d (close %v), want 200 with Connection: close", resp.StatusCode, resp.Close)
	}
	select {
	case err := <-done:
		t.Fatalf("the server stopped before ShutdownDelay: %v", err)
	default:
	}

	close(fire)
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if c, err := net.Dial("tcp", l.Public.Addr().String()); err == nil {
		c.Close()
		t.Fatal("the public listener accepts connections after the shutdown")
	}
}

// familyNamed is the declared family of that name (the families are
// declared in their files as var _ = family(…)).
func familyNamed(name string) Family {
	for _, f := range Families() {
		if f.Name == name {
			return f
		}
	}
	panic("no family " + name)
}
