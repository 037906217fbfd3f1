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
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
)

// Listeners are the server's open listeners. Metrics, Probes and Pprof
// may be nil: that listener is not served.
type Listeners struct {
	Public, Metrics, Probes, Pprof net.Listener
}

func (l Listeners) close() {
	for _, ln := range []net.Listener{l.Public, l.Metrics, l.Probes, l.Pprof} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// ListenAndServe listens on Addr, MetricsAddr, ProbeAddr and PprofAddr and serves
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
		{"pprof", s.opts.PprofAddr, &l.Pprof},
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
	if l.Pprof != nil {
		// No write timeout: a CPU profile or trace takes its ?seconds=.
		all = append(all, served{"pprof", &http.Server{Handler: s.PprofHandler(), ReadHeaderTimeout: s.opts.ReadHeaderTimeout}, l.Pprof})
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
