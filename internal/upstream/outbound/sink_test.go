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
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// The sink guard against server-side request forgery: see sink.go and
// the OWASP SSRF Prevention Cheat Sheet.

func TestSinkPolicyJudgesTheAddressActuallyDialed(t *testing.T) {
	policies := map[string]SinkPolicy{
		"default":               {},
		"deny-private-networks": {DenyPrivateNetworks: true},
		"allow-loopback":        {AllowLoopback: true},
	}
	var table struct {
		Cases []struct {
			Name, Policy, Addr string
			Refused            bool
		}
	}
	raw, err := os.ReadFile("testdata/sink-addresses.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &table); err != nil || len(table.Cases) < 30 {
		t.Fatalf("testdata/sink-addresses.json: %d cases, %v", len(table.Cases), err)
	}
	for _, c := range table.Cases {
		policy, ok := policies[c.Policy]
		if !ok {
			t.Fatalf("%s: no policy %q", c.Name, c.Policy)
		}
		t.Run(c.Name, func(t *testing.T) {
			err := policy.Check(netip.MustParseAddr(c.Addr))
			if (err != nil) != c.Refused {
				t.Fatalf("Check(%s) = %v, refused want %v", c.Addr, err, c.Refused)
			}
			if err != nil && !errors.Is(err, ErrSinkAddressRefused) {
				t.Fatalf("%v does not wrap ErrSinkAddressRefused", err)
			}
			// The same through the dialer's control function, which is
			// what runs at connect time, on "ip:port".
			ctlErr := policy.control(context.Background(), "tcp", netip.AddrPortFrom(netip.MustParseAddr(c.Addr), 80).String(), nil)
			if (ctlErr != nil) != c.Refused {
				t.Fatalf("control(%s) = %v, refused want %v", c.Addr, ctlErr, c.Refused)
			}
		})
	}
}

// countingServer answers 204 and counts requests.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func sinkClient(t *testing.T, p SinkPolicy) *Client {
	t.Helper()
	c, err := New(upstream.NewSet(), Options{Timeout: 2 * time.Second, Sink: p})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSinkRequestsToForbiddenAddressesAreRefusedBeforeConnecting(t *testing.T) {
	srv, hits := countingServer(t)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	at := func(host string) string {
		return "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/hook?token=s3cret"
	}
	for _, tc := range []struct{ name, url string }{
		{"loopback", at("127.0.0.1")},
		{"the cloud metadata service", "http://169.254.169.254/latest/meta-data/iam/security-credentials/?token=s3cret"},
		{"IPv6 loopback", at("::1")},
		{"IPv4-mapped IPv6 loopback", at("::ffff:127.0.0.1")},
		// Resolved by DNS (/etc/hosts): the check is on the address the
		// name resolved to, at connect time, so a name that resolves to a
		// public address when checked and to 127.0.0.1 when dialed (DNS
		// rebinding) is refused too.
		{"a host name that resolves to loopback", at("localhost")},
		{"the unspecified address", at("0.0.0.0")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sinkClient(t, SinkPolicy{})
			_, err := c.Do(context.Background(), Request{Method: http.MethodPost, SinkURL: tc.url, Body: strings.NewReader("{}")})
			if !errors.Is(err, ErrSinkAddressRefused) || !IsPermanent(err) {
				t.Fatalf("got %v, want a permanent ErrSinkAddressRefused", err)
			}
			e, _ := Classify(err)
			if e.Upstream != SinkUpstream || !strings.Contains(e.Error(), "sinks may not reach loopback, link-local or unspecified addresses") {
				t.Fatalf("error %q", e.Error())
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(e.Reason, "/hook") {
				t.Fatalf("the refusal shows the URL: %q", err.Error())
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("the server received %d requests", n)
			}
		})
	}
}

func TestCheckSinkURLRefusesAnIPAtOnceAndLeavesNamesToTheDialer(t *testing.T) {
	c := sinkClient(t, SinkPolicy{})
	if err := c.CheckSinkURL("http://169.254.169.254/latest/meta-data/"); !errors.Is(err, ErrSinkAddressRefused) || !strings.Contains(err.Error(), "cloud metadata service") {
		t.Fatalf("metadata service: %v", err)
	}
	if err := c.CheckSinkURL("http://[::ffff:127.0.0.1]:8080/x"); !errors.Is(err, ErrSinkAddressRefused) {
		t.Fatalf("mapped loopback: %v", err)
	}
	for _, ok := range []string{"https://appointments.example.com/hook", "http://appointments.default.svc:8080/hook", "http://10.96.0.10/hook", "localhost:bad:url"} {
		if err := c.CheckSinkURL(ok); err != nil {
			t.Fatalf("%s: %v", ok, err)
		}
	}
	if err := sinkClient(t, SinkPolicy{DenyPrivateNetworks: true}).CheckSinkURL("http://10.96.0.10/hook"); !errors.Is(err, ErrSinkAddressRefused) || !strings.Contains(err.Error(), "--sink-deny-private-networks") {
		t.Fatalf("private with deny: %v", err)
	}
}

func TestPrivateSinksAreDialedByDefaultAndRefusedWithTheDenyOption(t *testing.T) {
	// 10.255.255.1 on the discard port: with the default policy the
	// request is let through to the dial, whatever then happens on this
	// machine's network (usually nothing answers and it times out); with
	// the deny option it is refused before any packet leaves.
	target := "http://10.255.255.1:9/hook"
	c, err := New(upstream.NewSet(), Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(context.Background(), Request{SinkURL: target}); errors.Is(err, ErrSinkAddressRefused) {
		t.Fatalf("default policy refused a private address: %v", err)
	}
	began := time.Now()
	_, err = sinkClient(t, SinkPolicy{DenyPrivateNetworks: true}).Do(context.Background(), Request{SinkURL: target})
	if !errors.Is(err, ErrSinkAddressRefused) || !IsPermanent(err) || !strings.Contains(err.Error(), "--sink-deny-private-networks") {
		t.Fatalf("deny option: got %v", err)
	}
	if d := time.Since(began); d > 200*time.Millisecond {
		t.Fatalf("the refusal took %s: it waited for a connection", d)
	}
}

func TestASinkRedirectIsNeverFollowed(t *testing.T) {
	elsewhere, hits := countingServer(t)
	for _, tc := range []struct{ name, location string }{
		{"to the cloud metadata service", "http://169.254.169.254/latest/meta-data/iam/security-credentials/"},
		{"to another loopback server the policy would allow", elsewhere.URL + "/stolen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, tc.location, http.StatusTemporaryRedirect)
			}))
			defer sink.Close()
			// Loopback allowed, so that the sink itself is reachable and a
			// followed redirect to elsewhere would succeed.
			c := sinkClient(t, SinkPolicy{AllowLoopback: true})
			_, err := c.Do(context.Background(), Request{Method: http.MethodPost, SinkURL: sink.URL + "/hook", Body: strings.NewReader("{}")})
			e, ok := Classify(err)
			if !ok || e.Status != http.StatusTemporaryRedirect || e.Class != Permanent || errors.Is(err, ErrSinkAddressRefused) {
				t.Fatalf("got %v, want the 307 itself as a permanent failure", err)
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("the redirect was followed: %d requests elsewhere", n)
			}
		})
	}
}

func TestUpstreamRequestsAreNotJudgedByTheSinkPolicy(t *testing.T) {
	// The upstreams are the operator's own configuration (the sandbox is
	// on loopback): the sink policy applies to sink URLs only.
	srv, hits := countingServer(t)
	c, _ := newClient(t, srv, Options{})
	if _, err := c.Do(context.Background(), Request{Upstream: upstream.Docswell, Path: "/x"}); err != nil || hits.Load() != 1 {
		t.Fatalf("upstream on loopback: %v, %d requests", err, hits.Load())
	}
	u, _ := url.Parse(srv.URL)
	if err := sinkClient(t, SinkPolicy{}).CheckSinkURL(u.String()); !errors.Is(err, ErrSinkAddressRefused) {
		t.Fatalf("the same address as a sink: %v", err)
	}
}
