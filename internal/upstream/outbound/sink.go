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
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// A sink URL is chosen by whoever may write the resource in a namespace,
// and the manager posts to it from inside the cluster, with the manager's
// network position: server-side request forgery. The classic target is the
// cloud metadata service at 169.254.169.254, which hands out the node's or
// the pod's cloud credentials to whoever asks from inside (OWASP Server-Side
// Request Forgery Prevention Cheat Sheet, "Case 2": an application that
// must reach arbitrary external addresses blocks private, loopback and
// link-local destinations, and checks the address after DNS resolution, at
// connection time, so that DNS rebinding cannot swap it:
// https://cheatsheetseries.owasp.org/cheatsheets/Server_Side_Request_Forgery_Prevention_Cheat_Sheet.html).
//
// So the sink transport's dialer checks every address it is about to
// connect to — after DNS, after Happy Eyeballs picked it — and refuses
// loopback, link-local and unspecified addresses (and, on request, the
// private ranges). Redirects are not followed at all (see New), and the
// sink transport uses no proxy: through a proxy the address dialed would
// be the proxy's, and the check would guard nothing.

// ErrSinkAddressRefused is wrapped by the error of a sink request whose
// address the SinkPolicy refuses; no connection was opened.
var ErrSinkAddressRefused = errors.New("sink address refused")

// SinkPolicy says which addresses a Request.SinkURL may reach. The zero
// value is the production policy: loopback, link-local and unspecified
// addresses refused, private ranges allowed (a cluster-local Service is a
// documented sink).
type SinkPolicy struct {
	// DenyPrivateNetworks also refuses the private ranges (10.0.0.0/8,
	// 172.16.0.0/12, 192.168.0.0/16, fc00::/7): the manager's
	// --sink-deny-private-networks, for clusters whose sinks are all
	// outside.
	DenyPrivateNetworks bool
	// AllowLoopback lets sinks reach loopback addresses. Only tests and
	// the demo set it, whose servers all listen on 127.0.0.1; no flag or
	// chart value exposes it.
	AllowLoopback bool
}

// SinkAddressError is why a sink address was refused. Its text names the
// IP address only, never the URL (whose query may carry a secret).
type SinkAddressError struct {
	Addr netip.Addr
	// What the address is: "loopback", "link-local", …
	What string
	// Rule is the rule that refuses it.
	Rule string
}

func (e *SinkAddressError) Error() string {
	return fmt.Sprintf("the address %s is %s: %s", e.Addr, e.What, e.Rule)
}

// Is makes errors.Is(err, ErrSinkAddressRefused) true.
func (e *SinkAddressError) Is(target error) bool { return target == ErrSinkAddressRefused }

const (
	alwaysRefused  = "sinks may not reach loopback, link-local or unspecified addresses"
	privateRefused = "the manager runs with --sink-deny-private-networks"
)

// metadataAddr is the cloud metadata service of AWS, GCP, Azure and
// others, named in the refusal because it is the usual target.
var metadataAddr = netip.MustParseAddr("169.254.169.254")

// thisNetwork is 0.0.0.0/8 (RFC 791 "this network"): Linux connects
// 0.0.0.0 to the local host, and the rest is no destination.
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// nat64 is the NAT64 well-known prefix (RFC 6052 §2.1): on an IPv6-only
// network with DNS64, 64:ff9b::a9fe:a9fe is translated to 169.254.169.254,
// so an address in it is judged as the IPv4 address it embeds (its last 32
// bits, RFC 6052 §2.2). nat64Local is the local-use prefix (RFC 8215),
// whose translation the network's operator chooses: treated as private.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
)

// Check returns a *SinkAddressError when the policy refuses ip, nil when
// a sink may connect to it. An IPv4-mapped IPv6 address (::ffff:127.0.0.1)
// and a NAT64 address (64:ff9b::7f00:1) are judged as the IPv4 address
// they reach.
func (p SinkPolicy) Check(ip netip.Addr) error {
	ip = ip.Unmap().WithZone("")
	if ip.Is6() && nat64.Contains(ip) {
		b := ip.As16()
		var e *SinkAddressError
		if errors.As(p.Check(netip.AddrFrom4([4]byte(b[12:]))), &e) {
			return &SinkAddressError{Addr: ip, What: e.What + ", through NAT64", Rule: e.Rule}
		}
		return nil
	}
	what, rule := "", alwaysRefused
	switch {
	case !ip.IsValid():
		what = "not an IP address"
	case ip.IsUnspecified() || thisNetwork.Contains(ip):
		what = "unspecified (it reaches the manager's own host)"
	case ip.IsLoopback():
		if p.AllowLoopback {
			return nil
		}
		what = "loopback"
	case ip == metadataAddr:
		what = "link-local (the cloud metadata service)"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		what = "link-local"
	case (ip.IsPrivate() || nat64Local.Contains(ip)) && p.DenyPrivateNetworks:
		what, rule = "private", privateRefused
	default:
		return nil
	}
	return &SinkAddressError{Addr: ip, What: what, Rule: rule}
}

// control is the sink dialer's check of the address it is about to
// connect to: address is the resolved "ip:port", never a host name.
func (p SinkPolicy) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &SinkAddressError{What: "not an IP address", Rule: alwaysRefused}
	}
	return p.Check(ap.Addr())
}

// sinkTransport is the transport of sink requests: http.DefaultTransport's
// settings, no proxy, and a dialer that refuses what p refuses.
func sinkTransport(p SinkPolicy) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, ControlContext: p.control}
	t.DialContext = d.DialContext
	return t
}

// CheckSinkURL refuses at once a sink URL whose host is an IP address the
// policy refuses, so that a resource can say so before it has anything to
// deliver. A host name passes: its addresses are checked when a request
// dials them (a name can resolve differently each time). Nil for URLs it
// cannot parse: the request reports those.
func (c *Client) CheckSinkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	ip, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return nil
	}
	if err := c.sinkPolicy.Check(ip); err != nil {
		return sinkRefused(err)
	}
	return nil
}

func sinkRefused(err error) *Error {
	return &Error{Upstream: SinkUpstream, Class: Permanent, Reason: "refused: " + refusal(err), Err: err}
}

// refusal is the SinkAddressError's text, without the dial's wrapping
// (which repeats the address and port).
func refusal(err error) string {
	var se *SinkAddressError
	if errors.As(err, &se) {
		return se.Error()
	}
	return ErrSinkAddressRefused.Error()
}
