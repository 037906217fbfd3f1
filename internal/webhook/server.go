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

// Package webhook is the inbound HTTP server: Notion automations, Google
// push notifications, OAuth callbacks, session ingest and share-link
// resolves. It answers fast, authenticates and validates, and writes only to
// the Kubernetes API; controllers do everything slow.
package webhook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Defaults for Options; each has a flag in cmd/webhook.
const (
	// DefaultMaxBodyBytes caps request bodies; a larger one is refused with 413.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultReadHeaderTimeout closes a connection whose headers do not
	// arrive in time (slowloris).
	DefaultReadHeaderTimeout = 5 * time.Second
	// DefaultReadTimeout bounds reading a whole request.
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds writing the answer.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultIdleTimeout closes idle keep-alive connections.
	DefaultIdleTimeout = 120 * time.Second
	// DefaultShutdownTimeout is how long in-flight requests may finish on
	// SIGTERM.
	DefaultShutdownTimeout = 20 * time.Second
	// DefaultShutdownDelay is the --shutdown-delay default: a few of
	// kube-proxy's one-second syncs, for the endpoints to drop a stopping
	// pod before it refuses connections.
	DefaultShutdownDelay = 5 * time.Second
	// DefaultMaxHeaderBytes caps request headers.
	DefaultMaxHeaderBytes = 64 << 10
)

// Options configure the server.
type Options struct {
	// Addr is the public listener, host:port: it carries only GET / and the
	// route families, because it faces the internet.
	Addr string
	// MetricsAddr serves GET /metrics; "" or "0" serves no metrics.
	MetricsAddr string
	// ProbeAddr serves GET /healthz and GET /readyz; "" or "0" serves no
	// probes.
	ProbeAddr string
	// MaxBodyBytes caps request bodies (DefaultMaxBodyBytes when zero).
	MaxBodyBytes int64
	// Timeouts (the defaults when zero).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout, ShutdownTimeout time.Duration
	// ShutdownDelay is how long the server keeps serving after it is told
	// to stop, before it closes its listener: /readyz fails at once and
	// every answer carries "Connection: close", so that the endpoints drop
	// the pod and kube-proxy and load balancers route new connections
	// elsewhere before this one refuses them. Zero stops at once.
	ShutdownDelay time.Duration
	// RateLimit is the per-client limit; zero Rate disables it.
	RateLimit RateLimit
	// Ready reports whether the server can serve (the informer cache is
	// synced, the API server answers), for GET /readyz; nil means always
	// ready. It has controller-runtime's healthz.Checker shape.
	Ready func(*http.Request) error
	// Registerer receives the server's metrics (a fresh registry when nil).
	Registerer prometheus.Registerer
	// Gatherer serves GET /metrics on MetricsAddr (the Registerer's when it
	// is a registry).
	Gatherer prometheus.Gatherer
	// Log is the base logger.
	Log logr.Logger
}

// Server is the webhook HTTP server.
type Server struct {
	opts    Options
	mux     *http.ServeMux
	limiter *limiter
	metrics *metrics
	// draining is set once the server was told to stop (ShutdownDelay).
	draining atomic.Bool
	// after is time.After, or a test's clock.
	after func(time.Duration) <-chan time.Time
}

// NewServer builds a server serving the given route families.
func NewServer(opts Options, deps Deps, families ...Family) (*Server, error) {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opts.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&opts.ReadTimeout, DefaultReadTimeout)
	def(&opts.WriteTimeout, DefaultWriteTimeout)
	def(&opts.IdleTimeout, DefaultIdleTimeout)
	def(&opts.ShutdownTimeout, DefaultShutdownTimeout)
	if opts.Registerer == nil {
		reg := prometheus.NewRegistry()
		opts.Registerer, opts.Gatherer = reg, reg
	}
	if opts.Gatherer == nil {
		if g, ok := opts.Registerer.(prometheus.Gatherer); ok {
			opts.Gatherer = g
		} else {
			return nil, errors.New("webhook: Options.Gatherer is required with a Registerer that is not a Gatherer")
		}
	}
	if deps.Log.GetSink() == nil {
		deps.Log = opts.Log
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, mux: http.NewServeMux(), limiter: newLimiter(opts.RateLimit), metrics: m, after: time.After}

	// Seed 000 §6.1: GET / is a health check. It says only "ok": the
	// probes and metrics, which say more, are on their own listeners.
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { writeOK(w) })

	for _, f := range families {
		for _, rt := range f.Routes(deps) {
			if err := s.handle(f.Name, rt); err != nil {
				return nil, err
			}
		}
	}

	return s, nil
}

// httpServer is an http.Server with the configured timeouts.
func (s *Server) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ReadTimeout:       s.opts.ReadTimeout,
		WriteTimeout:      s.opts.WriteTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    DefaultMaxHeaderBytes,
	}
}

func (s *Server) handle(family string, rt Route) (err error) {
	defer func() {
		// ServeMux panics on a conflicting pattern; report it as an error.
		if p := recover(); p != nil {
			err = fmt.Errorf("webhook: route family %s: %v", family, p)
		}
	}()
	h := rt.Handler
	s.mux.HandleFunc(rt.Pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			e := asError(err)
			if e.Status >= 500 {
				logr.FromContextOrDiscard(r.Context()).Error(e.Cause, "request failed", "family", family, "code", e.Code)
			}
			WriteError(w, e)
		}
	})
	return nil
}

// Handler is the public listener's handler: the whole middleware chain
// around GET / and the route families.
func (s *Server) Handler() http.Handler {
	return s.withDrain(s.withRequestID(s.withRecover(s.withMetrics(s.withRateLimit(s.withBodyLimit(http.HandlerFunc(s.route)))))))
}

// withDrain asks each client to close its connection once the server is
// draining, so that its next request opens a new one, which the Service
// sends to a pod that is not stopping.
func (s *Server) withDrain(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// route dispatches to the mux, answering unknown paths and wrong methods in
// the common error format rather than ServeMux's plain text.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern == "" {
		// Let the mux say whether it is a 404 or a 405 (it sets Allow).
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if allow := rec.Header().Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		switch rec.Code {
		case http.StatusMethodNotAllowed:
			WriteError(w, Errorf(http.StatusMethodNotAllowed, "method %s is not allowed here", r.Method))
		default:
			WriteError(w, Errorf(http.StatusNotFound, "no such endpoint"))
		}
		return
	}
	s.mux.ServeHTTP(w, r)
}

// MetricsHandler serves GET /metrics, for MetricsAddr.
func (s *Server) MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.opts.Gatherer, promhttp.HandlerOpts{}))
	return opsHandler(mux)
}

// ProbeHandler serves GET /healthz (the process answers) and GET /readyz
// (Options.Ready), for ProbeAddr.
func (s *Server) ProbeHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { writeOK(w) })
	mux.HandleFunc("GET /readyz", s.readyz)
	return opsHandler(mux)
}

// opsHandler answers what mux does not serve in the common error format.
func opsHandler(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern == "" {
			WriteError(w, Errorf(http.StatusNotFound, "no such endpoint"))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		WriteError(w, Errorf(http.StatusServiceUnavailable, "shutting down"))
		return
	}
	if s.opts.Ready != nil {
		if err := s.opts.Ready(r); err != nil {
			WriteError(w, Errorf(http.StatusServiceUnavailable, "not ready: %v", err))
			return
		}
	}
	writeOK(w)
}

func writeOK(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// requestIDHeader carries the request id in and out.
const requestIDHeader = "X-Request-Id"

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(requestIDHeader)
		if !validRequestID.MatchString(id) {
			id = newRequestID()
		}
		w.Header().Set(requestIDHeader, id)
		// The logger carries the request id and the route pattern, never the
		// raw path: some paths are derived from secrets.
		log := s.opts.Log.WithValues("requestID", id)
		next.ServeHTTP(w, r.WithContext(logr.NewContext(r.Context(), log)))
	})
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Server) withRecover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if err, ok := p.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(p)
				}
				logr.FromContextOrDiscard(r.Context()).Error(fmt.Errorf("panic: %v", p), "handler panicked")
				WriteError(w, Errorf(http.StatusInternalServerError, "internal error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func (s *Server) withBodyLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.opts.MaxBodyBytes {
			// Refuse before reading; close so the client stops sending.
			w.Header().Set("Connection", "close")
			WriteError(w, tooLargeError(s.opts.MaxBodyBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

func (s *Server) withRateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wait, ok := s.limiter.allow(clientIP(r, s.opts.RateLimit.TrustForwardedFor)); !ok {
			e := Errorf(http.StatusTooManyRequests, "too many requests; retry after %d seconds", retryAfterSeconds(wait))
			e.RetryAfter = retryAfterSeconds(wait)
			WriteError(w, e)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func retryAfterSeconds(d time.Duration) int {
	secs := int((d + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return secs
}

// clientIP is the peer address, or the first X-Forwarded-For hop when the
// server sits behind a trusted proxy.
func clientIP(r *http.Request, trustForwarded bool) string {
	if trustForwarded {
		if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
			first, _, _ := strings.Cut(xff, ",")
			if ip := net.ParseIP(strings.TrimSpace(first)); ip != nil {
				return ip.String()
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (s *Server) withMetrics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		_, pattern := s.mux.Handler(r)
		if pattern == "" {
			pattern = "unmatched"
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		code := strconv.Itoa(rec.status)
		elapsed := time.Since(began)
		s.metrics.requests.WithLabelValues(pattern, code).Inc()
		s.metrics.duration.WithLabelValues(pattern).Observe(elapsed.Seconds())
		logr.FromContextOrDiscard(r.Context()).V(1).Info("request", "method", r.Method, "route", pattern,
			"status", rec.status, "duration", elapsed)
	})
}

// Listeners are the server's open listeners. Metrics and Probes may be
// nil: that listener is not served.
type Listeners struct {
	Public, Metrics, Probes net.Listener
}

func (l Listeners) close() {
	for _, ln := range []net.Listener{l.Public, l.Metrics, l.Probes} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// ListenAndServe listens on Addr, MetricsAddr and ProbeAddr and serves
// until ctx is done, then shuts down gracefully: new connections are
// refused and in-flight requests get ShutdownTimeout to finish.
func (s *Server) ListenAndServe(ctx context.Context) error {
	var l Listeners
	for _, ln := range []struct {
		what, addr string
		into       *net.Listener
	}{
		{"public", s.opts.Addr, &l.Public},
		{"metrics", s.opts.MetricsAddr, &l.Metrics},
		{"probe", s.opts.ProbeAddr, &l.Probes},
	} {
		if ln.what != "public" && (ln.addr == "" || ln.addr == "0") {
			continue
		}
		var err error
		if *ln.into, err = (&net.ListenConfig{}).Listen(ctx, "tcp", ln.addr); err != nil {
			l.close()
			return fmt.Errorf("%s listener on %q: %w", ln.what, ln.addr, err)
		}
	}
	return s.ServeListeners(ctx, l)
}

// drain keeps serving for ShutdownDelay with /readyz failing and every
// answer closing its connection; a listener that fails meanwhile ends it
// early, with its error.
func (s *Server) drain(errc <-chan error) error {
	s.draining.Store(true)
	if s.opts.ShutdownDelay <= 0 {
		return nil
	}
	s.opts.Log.Info("draining webhook server: not ready, still serving", "delay", s.opts.ShutdownDelay)
	select {
	case err := <-errc:
		return err
	case <-s.after(s.opts.ShutdownDelay):
		return nil
	}
}

// Serve serves the public routes on ln only (no metrics, no probes), as
// tests and benchmarks that embed the server need.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return s.ServeListeners(ctx, Listeners{Public: ln})
}

// ServeListeners is ListenAndServe on listeners already open.
func (s *Server) ServeListeners(ctx context.Context, l Listeners) error {
	type served struct {
		name string
		srv  *http.Server
		ln   net.Listener
	}
	// The public listener answers net/http's own refusals in the common
	// error format too (rawerrors.go).
	all := []served{{"public", s.httpServer(s.Handler()), formattedListener{l.Public}}}
	if l.Metrics != nil {
		all = append(all, served{"metrics", s.httpServer(s.MetricsHandler()), l.Metrics})
	}
	if l.Probes != nil {
		all = append(all, served{"probe", s.httpServer(s.ProbeHandler()), l.Probes})
	}
	errc := make(chan error, len(all))
	for _, sv := range all {
		go func() {
			err := sv.srv.Serve(sv.ln)
			if !errors.Is(err, http.ErrServerClosed) {
				err = fmt.Errorf("%s listener: %w", sv.name, err)
			}
			errc <- err
		}()
		s.opts.Log.Info("webhook server listening", "listener", sv.name, "addr", sv.ln.Addr().String())
	}
	var first error
	select {
	case first = <-errc:
		// A listener failed: stop the others too.
	case <-ctx.Done():
		first = s.drain(errc)
		s.opts.Log.Info("shutting down webhook server", "timeout", s.opts.ShutdownTimeout)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	var errs []error
	for _, sv := range all {
		if err := sv.srv.Shutdown(shutdownCtx); err != nil {
			errs = append(errs, fmt.Errorf("graceful shutdown of the %s listener: %w", sv.name, err))
		}
	}
	pending := len(all)
	if first != nil {
		errs = append(errs, first)
		pending--
	}
	for range pending {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
