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
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/clocks"
	"github.com/switchboard-dev/switchboard/internal/pages"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// HandlerFunc serves one route. Returning an error writes it in the common
// error format: an *Error as it is, anything else as a 500 whose text goes
// only to the log.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Route is one method and path, in net/http ServeMux pattern syntax
// ("POST /notion/webhook/{path}").
type Route struct {
	Pattern string
	Handler HandlerFunc
	// Page, when set, is the page a browser gets for an error the handler
	// returns (a person opening a share link is not an API client); a
	// request whose Accept does not name text/html keeps the JSON error.
	Page func(*Error) pages.Page
}

// Deps is what a route family may use. The webhook server writes only to
// the Kubernetes API, and Secrets only in its own namespace (OAuth states,
// handovers, sessions); its only outbound calls are a Discord sign-in's
// code exchange, user lookup and the session's token refresh, through
// Outbound. The OAuth callbacks of the integrations hand their code to the
// manager (oauth.Handover), which holds the client secrets.
type Deps struct {
	// Client reads through the informer cache (with the field indexes of
	// package index; Secrets only the managed-by ones of the webhook's own
	// and the link namespace) and writes to the API server. Built by
	// setup.WebhookCluster, it stores a route's records (PaperSync,
	// SheetSync) without reading them back: the object created keeps what
	// was sent.
	Client client.Client
	// APIReader reads straight from the API server: what must be seen the
	// moment it was written (a resource just applied, a state, a session).
	APIReader client.Reader
	// Upstreams are the configured outside APIs.
	Upstreams *upstream.Set
	// Outbound is the one outbound HTTP policy (only the upstreams' hosts).
	Outbound *outbound.Client
	// PublicURL is the externally visible base URL of this server, for
	// OAuth redirect URIs and the webhook URLs shown to people.
	PublicURL string
	// StateNamespace holds the OAuth state Secrets (the webhook's own
	// namespace).
	StateNamespace string
	// HandoverWait is how long an OAuth callback waits for the manager to
	// receive the grant (oauth.DefaultHandoverWait when zero).
	HandoverWait time.Duration
	// SignIn is the Discord sign-in of share-link receivers (signin.go);
	// nil when this server offers none.
	SignIn *SignIn
	// Links serves the share-link routes (nil: every short link is 404).
	Links *Links
	// Log is the server's logger; handlers should prefer
	// logr.FromContextOrDiscard(r.Context()), which carries the request id.
	Log logr.Logger
	// Clock tells the time the connect links' expiry is judged by; the
	// wall clock when nil.
	Clock clock.PassiveClock
	// Recorder records the Warning Events a person can act on (a Notion
	// page whose Link is not an arXiv link); none when nil.
	Recorder events.EventRecorder

	// oauthTargets are the OAuth targets of the families the Server was
	// built with, by name (NewServer sets them).
	oauthTargets map[string]OAuthTarget
	// signUpLimits bound the sign-ups' starts (NewServer sets them from
	// Options.SignUp).
	signUpLimits *signUpLimiters
	// notionEvents counts the Notion routes' events by outcome (NewServer
	// sets it).
	notionEvents *prometheus.CounterVec
}

// countNotion counts one event of a Notion route.
func (d Deps) countNotion(route, outcome, reason string) {
	if d.notionEvents != nil {
		d.notionEvents.WithLabelValues(route, outcome, reason).Inc()
	}
}

func (d Deps) now() time.Time {
	return clocks.Now(d.Clock)
}

// routed lists into list, from the cache, the objects whose index field
// holds value in any namespace: how a request finds its object. The items
// are the cache's own objects, not copies: a route only reads them (its
// writes go to objects of their own), and at thousands of requests a
// second the copies were a fair share of the route's CPU, which the API
// server on the same nodes needs. The webhook's client answers this List
// from the informer's index (setup's indexedLists).
func (d Deps) routed(ctx context.Context, list client.ObjectList, field, value string) error {
	return d.Client.List(ctx, list, client.MatchingFields{field: value}, client.UnsafeDisableDeepCopy)
}

// Family is the set of routes one integration serves, and the OAuth
// target it connects, if any. Each family is a value in a file of its own
// (the notion family in notion.go…), declared there (family), and Families
// lists them all, so adding an integration adds a file, not a line to a
// list or a case to a switch.
type Family struct {
	// Name labels the family in logs (notion, calendar, receive, sheets…).
	Name string
	// Routes builds the family's routes (nil: none, as for a family that
	// only brings an OAuth target).
	Routes func(Deps) []Route
	// OAuth is the target the oauth family connects under
	// /oauth/{OAuth.Name}/… (nil: none). The OAuth routes know the targets
	// of the families the Server was built with, and no others.
	OAuth *OAuthTarget
}

// declared are the families of the files of this package, each added
// where it is written (var _ = family(Family{…})).
var declared []Family

// family declares f as one of the families cmd/webhook serves.
func family(f Family) bool { //nolint:unparam // its result lets a file declare a family as var _ = family(…), without an init function
	declared = append(declared, f)
	return true
}

// Families are the route families cmd/webhook serves, in name order:
// every family declared in this package, so a new integration's file is
// the whole of its registration.
func Families() []Family {
	fs := slices.Clone(declared)
	slices.SortFunc(fs, func(a, b Family) int { return strings.Compare(a.Name, b.Name) })
	return fs
}

// oneRoute is the Routes of a family of one route, the one its service
// calls (pattern, served by the handler built from Deps).
func oneRoute(pattern string, handler func(Deps) HandlerFunc) func(Deps) []Route {
	return func(d Deps) []Route {
		return []Route{{Pattern: pattern, Handler: handler(d)}}
	}
}
