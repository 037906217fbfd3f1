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

// Package sandbox emulates every upstream API Switchboard talks to, on one
// HTTP server, one route family per upstream under its own path prefix
// (/notion, /arxiv, /speakerdeck, /docswell, /googleslides, /googleoauth,
// /googleapis, /s3). The real client libraries work against it unchanged,
// so tests and the demo run the whole system with no accounts and no
// network.
//
// Every route has a name ("googleoauth.token"), a call counter, and a fault
// that tests set from Go (SetFault) or over HTTP (PUT /_sandbox/faults/NAME):
// a status with a body and Retry-After, a delay, a malformed body, or an
// oversized one.
package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// Fault changes how a route answers until it is cleared (or for Times calls).
type Fault struct {
	// Status, when set, is answered instead of running the emulator.
	Status int `json:"status,omitempty"`
	// Body of the Status answer (the status text when empty).
	Body string `json:"body,omitempty"`
	// ContentType of the Status answer (application/json when empty).
	ContentType string `json:"contentType,omitempty"`
	// RetryAfter is sent as the Retry-After header with Status.
	RetryAfter string `json:"retryAfter,omitempty"`
	// Location is sent as the Location header with Status (a 3xx redirect).
	Location string `json:"location,omitempty"`
	// Delay is waited before answering (to provoke client timeouts).
	Delay Duration `json:"delay,omitempty"`
	// Malformed cuts the emulator's real answer in half and appends junk,
	// keeping its status and content type.
	Malformed bool `json:"malformed,omitempty"`
	// OversizedBytes pads the emulator's real answer with trailing white
	// space to at least this many bytes (still well-formed JSON or XML, so
	// only a size cap catches it).
	OversizedBytes int `json:"oversizedBytes,omitempty"`
	// Times limits the fault to the next N calls; 0 means until cleared.
	Times int `json:"times,omitempty"`
}

// Duration is a time.Duration written as "1.5s" in JSON.
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1.5s" or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		*d = Duration(v)
		return err
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration: want a string such as \"2s\": %w", err)
	}
	*d = Duration(n)
	return nil
}

// Server is the sandbox.
type Server struct {
	mux *http.ServeMux

	mu     sync.Mutex
	routes map[string]bool
	faults map[string]*Fault
	calls  map[string]int
}

// Emulator is one upstream's route family.
type Emulator interface {
	// Upstream is the --upstream name the emulator answers for; its routes
	// live under "/" + Upstream.
	Upstream() upstream.Name
	// Register adds the emulator's routes.
	Register(s *Server)
}

// unseeded are the constructors of the emulators that need no seed (a
// client to register, a workspace to consent to), each declared in its
// own file (unseeded(NewArxiv)): cmd/sandbox serves them all beside the
// ones it seeds, so a new service's emulator is its file and no line in
// cmd/sandbox.
var unseededEmulators []func() Emulator

// unseeded declares an emulator cmd/sandbox serves as it is built.
func unseeded[E Emulator](build func() E) bool {
	unseededEmulators = append(unseededEmulators, func() Emulator { return build() })
	return true
}

// WithUnseeded returns seeded and a new instance of every emulator declared
// unseeded whose upstream none of seeded answers for.
func WithUnseeded(seeded ...Emulator) []Emulator {
	out := slices.Clone(seeded)
	for _, build := range unseededEmulators {
		e := build()
		if !slices.ContainsFunc(seeded, func(s Emulator) bool { return s.Upstream() == e.Upstream() }) {
			out = append(out, e)
		}
	}
	return out
}

// New builds a sandbox serving the given emulators.
func New(emulators ...Emulator) *Server {
	s := &Server{mux: http.NewServeMux(), routes: map[string]bool{}, faults: map[string]*Fault{}, calls: map[string]int{}}
	s.mux.HandleFunc("GET /_sandbox/routes", s.adminRoutes)
	s.mux.HandleFunc("GET /_sandbox/calls", s.adminCalls)
	s.mux.HandleFunc("DELETE /_sandbox/calls", s.adminResetCalls)
	s.mux.HandleFunc("GET /_sandbox/faults", s.adminFaults)
	s.mux.HandleFunc("PUT /_sandbox/faults/{route}", s.adminSetFault)
	s.mux.HandleFunc("DELETE /_sandbox/faults/{route}", s.adminClearFault)
	s.mux.HandleFunc("DELETE /_sandbox/faults", s.adminClearFaults)
	for _, e := range emulators {
		e.Register(s)
	}
	return s
}

// HandleAdmin registers an emulator's own admin endpoint (under
// /_sandbox/), which is neither counted nor faulted.
func (s *Server) HandleAdmin(pattern string, h http.HandlerFunc) { s.mux.HandleFunc(pattern, h) }

// ServeHTTP serves every emulator and the admin endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Handle registers one named route. pattern is a ServeMux pattern whose
// path starts with the emulator's prefix.
func (s *Server) Handle(name, pattern string, h http.HandlerFunc) {
	s.mu.Lock()
	s.routes[name] = true
	s.mu.Unlock()
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		f := s.take(name)
		if f == nil {
			h(w, r)
			return
		}
		s.apply(f, h, w, r)
	})
}

// take counts a call and returns the fault to apply, if any.
func (s *Server) take(name string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[name]++
	f, ok := s.faults[name]
	if !ok {
		return nil
	}
	applied := *f
	if f.Times > 0 {
		f.Times--
		if f.Times == 0 {
			delete(s.faults, name)
		}
	}
	return &applied
}

func (s *Server) apply(f *Fault, h http.HandlerFunc, w http.ResponseWriter, r *http.Request) {
	if f.Delay > 0 {
		select {
		case <-time.After(time.Duration(f.Delay)):
		case <-r.Context().Done():
			return
		}
	}
	if f.Status != 0 {
		ct := f.ContentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		if f.Location != "" {
			w.Header().Set("Location", f.Location)
		}
		w.WriteHeader(f.Status)
		body := f.Body
		if body == "" {
			body = http.StatusText(f.Status)
		}
		_, _ = w.Write([]byte(body))
		return
	}
	if !f.Malformed && f.OversizedBytes == 0 {
		h(w, r)
		return
	}
	rec := httptest.NewRecorder()
	h(rec, r)
	body := rec.Body.Bytes()
	if f.Malformed {
		body = append(append([]byte(nil), body[:len(body)/2]...), []byte("\x00<<garbled")...)
	}
	if pad := f.OversizedBytes - len(body); pad > 0 {
		body = append(body, bytes.Repeat([]byte(" "), pad)...)
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

// SetFault makes a route misbehave; it panics on an unknown route name so
// that a typo fails the test rather than silently testing nothing.
func (s *Server) SetFault(route string, f Fault) {
	if err := s.setFault(route, f); err != nil {
		panic(err)
	}
}

func (s *Server) setFault(route string, f Fault) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.routes[route] {
		return fmt.Errorf("sandbox: no route named %q (have %s)", route, strings.Join(s.routeNamesLocked(), ", "))
	}
	s.faults[route] = &f
	return nil
}

// ClearFault restores one route.
func (s *Server) ClearFault(route string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.faults, route)
}

// ClearFaults restores every route.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = map[string]*Fault{}
}

// Calls returns how many requests a route received (faulted ones included).
func (s *Server) Calls(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.routes[route] {
		panic(fmt.Sprintf("sandbox: no route named %q", route))
	}
	return s.calls[route]
}

// ResetCalls zeroes every counter.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = map[string]int{}
}

// Routes lists the route names.
func (s *Server) Routes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.routeNamesLocked()
}

func (s *Server) routeNamesLocked() []string {
	names := make([]string, 0, len(s.routes))
	for n := range s.routes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// UpstreamFlags returns the --upstream values that point every upstream at
// a sandbox reachable at baseURL.
func UpstreamFlags(baseURL string) []string {
	flags := make([]string, 0, len(upstream.Names()))
	for _, n := range upstream.Names() {
		flags = append(flags, fmt.Sprintf("%s=%s/%s", n, strings.TrimSuffix(baseURL, "/"), n))
	}
	return flags
}

// Upstreams is an upstream set with every upstream pointed at a sandbox
// reachable at baseURL.
func Upstreams(baseURL string) *upstream.Set {
	ups := upstream.NewSet()
	for _, f := range UpstreamFlags(baseURL) {
		if err := ups.Set(f); err != nil {
			panic(err) // the flags are built from a valid URL
		}
	}
	return ups
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) adminRoutes(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Routes())
}

func (s *Server) adminCalls(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	calls := make(map[string]int, len(s.routes))
	for n := range s.routes {
		calls[n] = s.calls[n]
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, calls)
}

func (s *Server) adminResetCalls(w http.ResponseWriter, _ *http.Request) {
	s.ResetCalls()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) adminFaults(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	faults := make(map[string]Fault, len(s.faults))
	for n, f := range s.faults {
		faults[n] = *f
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, faults)
}

func (s *Server) adminSetFault(w http.ResponseWriter, r *http.Request) {
	var f Fault
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "fault body: " + err.Error()})
		return
	}
	if err := s.setFault(r.PathValue("route"), f); err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) adminClearFault(w http.ResponseWriter, r *http.Request) {
	s.ClearFault(r.PathValue("route"))
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) adminClearFaults(w http.ResponseWriter, _ *http.Request) {
	s.ClearFaults()
	w.WriteHeader(http.StatusNoContent)
}
