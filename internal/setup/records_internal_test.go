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
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// tlsServer is a TLS server offering HTTP/2 and HTTP/1.1, as the API
// server does, and a rest.Config that trusts it.
func tlsServer(t *testing.T, h http.HandlerFunc) *rest.Config {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: pemOf(srv)}}
}

// pemOf is srv's certificate, PEM-encoded.
func pemOf(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// get sends a GET to cfg's server with c and reads the answer.
func get(ctx context.Context, c *http.Client, cfg *rest.Config) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/records", nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// The record creates go over HTTP/1.1 to a server that offers HTTP/2,
// which client-go's own client of the same config takes.
func TestRecordCreatesGoOverHTTP11(t *testing.T) {
	protos := make(chan string, 2)
	cfg := tlsServer(t, func(w http.ResponseWriter, r *http.Request) { protos <- r.Proto })
	records, err := recordsHTTPClient(cfg, 4)
	if err != nil {
		t.Fatal(err)
	}
	usual, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		httpc *http.Client
		want  string
	}{{"the records client", records, "HTTP/1.1"}, {"client-go's client", usual, "HTTP/2.0"}} {
		if err := get(context.Background(), c.httpc, cfg); err != nil {
			t.Fatal(err)
		}
		if got := <-protos; got != c.want {
			t.Errorf("%s spoke %s, want %s", c.name, got, c.want)
		}
	}
}

// With every connection busy, a create waits for one: one whose request
// is already over fails without reaching the server; once an answer is
// read, the next create goes.
func TestRecordCreatesWaitForAFreeConnection(t *testing.T) {
	entered, release, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	cfg := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
		case <-stop:
			return
		}
		select {
		case <-release:
		case <-stop:
		}
	})
	t.Cleanup(func() { close(stop) }) // before the server closes: a failed test leaves no handler waiting
	c, err := recordsHTTPClient(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 3)
	for range 2 {
		go func() { done <- get(context.Background(), c, cfg) }()
		<-entered
	}
	over, cancel := context.WithCancel(context.Background())
	cancel()
	if err := get(over, c, cfg); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting for one of 2 connections") {
		t.Fatalf("a third create with both connections busy, its request over: %v, want it refused while waiting for a connection", err)
	}
	release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	go func() { done <- get(context.Background(), c, cfg) }()
	<-entered // the third reached the server once a connection was free
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// The records client keeps as many idle connections as it may open: a
// burst of creates leaves them for the next, which opens none (client-go
// keeps 25). Read off the transport: whether a connection is back in the
// pool before the next burst asks for it is a race the test cannot order.
func TestRecordCreatesKeepTheirConnections(t *testing.T) {
	const limit = 32
	cfg := tlsServer(t, func(http.ResponseWriter, *http.Request) {})
	c, err := recordsHTTPClient(cfg, limit)
	if err != nil {
		t.Fatal(err)
	}
	tr := transportUnder(c.Transport)
	if tr == nil {
		t.Fatalf("no *http.Transport under the records client's %T", c.Transport)
	}
	if tr.MaxIdleConnsPerHost < limit {
		t.Fatalf("the records transport keeps %d idle connections, want %d", tr.MaxIdleConnsPerHost, limit)
	}
	if err := get(context.Background(), c, cfg); err != nil {
		t.Fatal(err)
	}
}
