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

// Package sheets_test runs SheetConnection and SheetSync end to end on a
// real API server (seed 004, issue 10): the two controllers in a manager
// (sheetconnection.Controller and sheetsync.Controller), the webhook server's ingest and OAuth routes,
// and the sandbox's Google OAuth and Sheets over HTTP. The webhook runs on
// a manager of its own, so a test can stop the controllers' manager in the
// middle of an append and start a new one, as a crash and a restart would.
package sheets_test

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetsync"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

var (
	env      *testenv.Env
	box      *sandbox.Server
	googleEm = sandbox.NewGoogleOAuth()
	sheetsEm = sandbox.NewGoogleSheets(googleEm)
	// boxURL is the sandbox's base URL, hookURL the webhook server's.
	boxURL, hookURL string
	// laggingURL is a second webhook server on the same manager whose
	// cache shows every SheetConnection as it was before its grant
	// (lagging.go).
	laggingURL string
	// logs holds what the controllers' managers and the webhook logged.
	logs = &lineLog{}

	// out reaches the sandbox; every controllers' manager shares it.
	out *outbound.Client
	// stopControllers stops the running controllers' manager.
	stopControllers func()
)

// syncRetries is the SheetSync schedule (1 s doubling, seven retries)
// scaled down fiftyfold, so a retried append does not slow a test; the
// delays themselves are the controller's unit tests' business.
var syncRetries = outbound.Schedule{Base: 20 * time.Millisecond, Retries: sheetsync.DefaultRetries.Retries, Max: outbound.MaxRetryAfter}

// lineLog keeps log lines, so a test can look for secrets in them.
type lineLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lineLog) sink(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(prefix + " " + args + "\n")
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func logger() logr.Logger { return funcr.New(logs.sink, funcr.Options{Verbosity: 5}) }

// startControllers starts a new manager running the real SheetConnection
// and SheetSync controllers, as the manager binary does, and sets
// stopControllers.
func startControllers(*testenv.Env) error {
	reports := &sheetconnection.Reports{}
	_, stop, err := testenv.StartOperator(rbac.Manager, wire.Operator{
		Kinds: []wire.Kind{&sheetconnection.Controller{Reports: reports}, &sheetsync.Controller{Connections: reports, Retries: syncRetries}},
		Deps:  wire.Deps{Outbound: out, PublicURL: hookURL, StateNamespace: "default"},
		// The scanned lines hold what the controllers log.
		Options: func(o *ctrl.Options) { o.Logger = logger() }})
	if err != nil {
		return err
	}
	stopControllers = stop
	return nil
}

// rbac is the chart's RBAC: the manager and the webhook run as its
// ServiceAccounts, and any request the API server refuses fails the run.
var rbac *testenv.ChartRBAC

func TestMain(m *testing.M) {
	testenv.Main(m, &env, testenv.WithChartRBAC(&rbac, "default"), func(e *testenv.Env) (func(), error) {
		// controller-runtime's own logger (informers, the webhook's
		// manager) writes to the scanned lines too.
		ctrl.SetLogger(logger())
		googleEm.AddClient("sheet-client", "sheet-secret")
		box = sandbox.New(googleEm, sheetsEm)
		srv := httptest.NewServer(box)
		boxURL = srv.URL
		set := sandbox.Upstreams(srv.URL)
		var err error
		if out, err = outbound.New(set, outbound.Options{Timeout: 5 * time.Second}); err != nil {
			return nil, err
		}
		// The webhook server's manager: a cache and its indexes, no
		// controllers, as the chart's webhook ServiceAccount.
		hookMgr, err := testenv.WebhookCluster(rbac.Webhook, []string{"default"})
		if err != nil {
			return nil, err
		}
		hook := testenv.NewWebhook()
		hookURL = hook.URL
		if err := hook.Serve(hookMgr, set, out, logger()); err != nil {
			return nil, err
		}
		lagging := testenv.NewWebhook()
		lagging.Cache = func(c client.Client) client.Client { return laggingCache{c} }
		laggingURL = lagging.URL
		if err := lagging.Serve(hookMgr, set, out, logger()); err != nil {
			return nil, err
		}
		stopHook := testenv.StartManager(hookMgr)
		if err := startControllers(e); err != nil {
			return nil, err
		}
		return func() { stopControllers(); stopHook(); lagging.Close(); hook.Close(); srv.Close() }, nil
	})
}
