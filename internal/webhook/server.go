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
// the Kubernetes API; controllers do everything slow. The one upstream it
// talks to is Discord, for a share-link receiver's sign-in (the code
// exchange, the user lookup and the session's token refresh); it imports
// internal/upstream/blob only to presign a share link's download URL, which signs
// locally and calls no S3, and no other upstream client.
package webhook

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/switchboard-dev/switchboard/internal/pages"
	"github.com/switchboard-dev/switchboard/internal/reqmetrics"
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
	// PprofAddr serves Go's profiles under /debug/pprof/; "" or "0" (the
	// default) serves none.
	PprofAddr string
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
	// Language is the language of the pages a person's browser gets when
	// its Accept-Language names none served (pages.En when empty).
	Language pages.Lang
	// SignUp bounds the starts of self-service sign-ups (signup.go).
	SignUp SignUpLimits
}

// Server is the webhook HTTP server.
type Server struct {
	opts    Options
	mux     *http.ServeMux
	limiter *limiter
	metrics *reqmetrics.Metrics
	// draining is set once the server was told to stop (ShutdownDelay).
	draining atomic.Bool
	// after is time.After, or a test's clock.
	after func(time.Duration) <-chan time.Time
}

// NewServer builds a server serving the given route families (Families in
// cmd/webhook); the OAuth routes, when one of them is the oauth family,
// connect the OAuth targets they carry.
func NewServer(opts Options, deps Deps, families ...Family) (s *Server, err error) {
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
	if deps.oauthTargets, err = oauthTargetsOf(families); err != nil {
		return nil, err
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	if deps.notionEvents, err = newNotionMetrics(opts.Registerer); err != nil {
		return nil, err
	}
	deps.signUpLimits = newSignUpLimiters(opts.SignUp, opts.RateLimit.TrustForwardedFor)
	s = &Server{opts: opts, mux: http.NewServeMux(), limiter: newLimiter(opts.RateLimit), metrics: m, after: time.After}

	// Seed 000 §6.1: GET / is a health check. It says only "ok": the
	// probes and metrics, which say more, are on their own listeners.
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { writeOK(w) })

	for _, f := range families {
		if f.Routes == nil {
			continue
		}
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
			if rt.Page != nil && pages.WantsHTML(r) {
				_ = showPage(w, r, rt.Page(e), nil)
				return
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

// PprofHandler serves Go's profiles under GET /debug/pprof/, for
// PprofAddr.
func (s *Server) PprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
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
