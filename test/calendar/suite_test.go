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

// Package calendar_test runs CalendarWatch end to end on a real API
// server: the controller in a manager, the webhook server's push and OAuth
// routes, and the sandbox's Google OAuth and Calendar, whose push sender
// posts to the webhook as Google would. The webhook runs on a manager of
// its own, so a test can stop the controller's manager and start a new
// one, as an outage and a restart would.
package calendar_test

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/switchboard-dev/switchboard/internal/controller/calendarwatch"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

var (
	env      *testenv.Env
	box      *sandbox.Server
	googleEm = sandbox.NewGoogleOAuth()
	calEm    = sandbox.NewGoogleCalendar(googleEm)
	hookURL  string
	// hookLog holds what the webhook server logged.
	hookLog = &logBuffer{}
	// hookMgr is the webhook's cluster (its cache, its API reader, its
	// ServiceAccount), and ups the sandbox's upstreams, for a second
	// webhook server on the same identity (see laggingWebhook).
	hookMgr cluster.Cluster
	ups     *upstream.Set
)

// logBuffer keeps log lines, for tests that a refusal is logged (and
// nothing secret is).
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) add(prefix, args string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, prefix+" "+args)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// rbac is the chart's RBAC: the manager and the webhook run as its
// ServiceAccounts, and any request the API server refuses fails the run.
var rbac *testenv.ChartRBAC

// out reaches the sandbox; every controllers' manager shares it.
var out *outbound.Client

// stopControllers stops the running controllers' manager (the webhook's
// goes on, as its Deployment would while the manager's restarts).
var stopControllers func()

// startControllers starts a new manager running the CalendarWatch
// controller, as the manager binary does, and sets stopControllers.
func startControllers(*testenv.Env) error {
	_, stop, err := testenv.StartOperator(rbac.Manager, wire.Operator{Kinds: []wire.Kind{&calendarwatch.Controller{}},
		Deps: wire.Deps{Outbound: out, PublicURL: hookURL, StateNamespace: "default"}})
	if err != nil {
		return err
	}
	stopControllers = stop
	return nil
}

func TestMain(m *testing.M) {
	testenv.Main(m, &env, testenv.WithChartRBAC(&rbac, "default"), func(e *testenv.Env) (func(), error) {
		googleEm.AddClient("cal-client", "cal-secret")
		calEm.PushRetryBase = 20 * time.Millisecond
		box = sandbox.New(googleEm, calEm)
		srv := httptest.NewServer(box)
		ups = sandbox.Upstreams(srv.URL)
		var err error
		if out, err = outbound.New(ups, outbound.Options{Timeout: 2 * time.Second}); err != nil {
			return nil, err
		}
		hook := testenv.NewWebhook()
		hookURL = hook.URL
		// The webhook runs as the chart's webhook ServiceAccount, on its own
		// cache, as its Deployment does.
		hookMgr, err = testenv.WebhookCluster(rbac.Webhook, []string{"default"})
		if err != nil {
			return nil, err
		}
		if err := hook.Serve(hookMgr, ups, out, funcr.New(hookLog.add, funcr.Options{})); err != nil {
			return nil, err
		}
		stopHook := testenv.StartManager(hookMgr)
		if err := startControllers(e); err != nil {
			return nil, err
		}
		return func() { stopControllers(); stopHook(); calEm.Close(); hook.Close(); srv.Close() }, nil
	})
}
