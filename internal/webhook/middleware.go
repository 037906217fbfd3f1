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
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/switchboard-dev/switchboard/internal/pages"
)

// The middleware chain of the public listener (Server.Handler), outermost
// first: drain, request id, recover, metrics, rate limit, body limit.

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
		ctx := pages.WithDefault(logr.NewContext(r.Context(), log), s.opts.Language)
		next.ServeHTTP(w, r.WithContext(ctx))
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
			secs := retryAfterSeconds(wait)
			if r.Method == http.MethodGet && pages.WantsHTML(r) {
				// A person's browser (a share link, a connect link): a page
				// that waits and tries again by itself.
				_ = showPage(w, r, retrying(http.StatusTooManyRequests, secs, pages.TooManyTitle, pages.Say(pages.TooManyLine)), nil)
				return
			}
			e := Errorf(http.StatusTooManyRequests, "too many requests; retry after %d seconds", secs)
			e.RetryAfter = secs
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
		s.metrics.Observe(pattern, code, elapsed)
		logr.FromContextOrDiscard(r.Context()).V(1).Info("request", "method", r.Method, "route", pattern,
			"status", rec.status, "duration", elapsed)
	})
}
