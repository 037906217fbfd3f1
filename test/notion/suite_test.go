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

// Package notion_test runs the Notion × arXiv flow end to end on a real API
// server: the NotionIntegration and PaperSync controllers in a manager,
// the webhook server's routes (on a manager of their own, so that a test
// can stop the controllers and start them again), and the sandbox's
// Notion and arXiv.
package notion_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/controller/notionintegration"
	"github.com/switchboard-dev/switchboard/internal/controller/notionsignup"
	"github.com/switchboard-dev/switchboard/internal/controller/papersync"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

var (
	env       *testenv.Env
	box       *sandbox.Server
	notionEmu = sandbox.NewNotion()
	arxivEmu  = sandbox.NewArxiv()
	hookURL   string
	// hookView reads what the webhook's cache holds: a test that asks the
	// webhook about an object it just saw on the API server waits here
	// first, as the cache follows the API server a moment later.
	hookView client.Reader
	// rbac is the chart's RBAC: the manager and the webhook run as its
	// ServiceAccounts, and any request the API server refuses fails the run.
	rbac *testenv.ChartRBAC
	// out reaches the sandbox; every controllers' manager shares it.
	out *outbound.Client
	// stopControllers stops the running controllers' manager.
	stopControllers func()
)

// syncRetries is seed 000's 1, 2, 4 s schedule scaled down a hundredfold,
// so the flows run the real retries quickly; the delays themselves are
// asserted by the PaperSync controller's unit tests.
var syncRetries = outbound.Schedule{Base: 10 * time.Millisecond, Retries: papersync.DefaultRetries.Retries, Max: outbound.MaxRetryAfter}

// syncRechecks is the rechecks' 1 minute to half an hour scaled down, so
// that a sync whose retries ran out is looked at again within the test.
var syncRechecks = outbound.Schedule{Base: 200 * time.Millisecond, Max: 2 * time.Second, Jitter: outbound.DefaultJitter}

// startControllers starts a new manager running the NotionIntegration and
// PaperSync controllers, as the manager binary does, and sets
// stopControllers: a test stops it and starts another, as a restart of
// the manager would (restore_test.go).
func startControllers(*testenv.Env) error {
	reports := &notionintegration.Reports{}
	_, stop, err := testenv.StartOperator(rbac.Manager, wire.Operator{
		Kinds: []wire.Kind{&notionintegration.Controller{Reports: reports},
			&papersync.Controller{Integrations: reports, Retries: syncRetries, Recheck: syncRechecks}, &notionsignup.Controller{}},
		Deps: wire.Deps{Outbound: out, StateNamespace: "default"},
		// Every index, as before the builder: with the manager's alone the
		// sign-up test's deleted sign-up is still "closed" to the webhook
		// (reported on issue 39).
		Indexes: index.Both})
	if err != nil {
		return err
	}
	stopControllers = stop
	return nil
}

func TestMain(m *testing.M) {
	testenv.Main(m, &env, testenv.WithChartRBAC(&rbac, "default"), func(e *testenv.Env) (func(), error) {
		// controller-runtime's own logger (a restarted manager's builder
		// logs through it): silent, as the managers are.
		ctrl.SetLogger(logr.Discard())
		notionEmu.AddClient("notion-client", "notion-secret")
		box = sandbox.New(notionEmu, arxivEmu)
		srv := httptest.NewServer(box)
		ups := sandbox.Upstreams(srv.URL)
		var err error
		if out, err = outbound.New(ups, outbound.Options{Timeout: 2 * time.Second}); err != nil {
			return nil, err
		}
		hookMgr, err := testenv.WebhookCluster(rbac.Webhook, []string{"default"})
		if err != nil {
			return nil, err
		}
		hookView = hookMgr.GetClient()
		hook := testenv.NewWebhook()
		hookURL = hook.URL
		if err := hook.Serve(hookMgr, ups, out, logr.Discard()); err != nil {
			return nil, err
		}
		stopHook := testenv.StartManager(hookMgr)
		if err := startControllers(e); err != nil {
			return nil, err
		}
		return func() { stopControllers(); stopHook(); hook.Close(); srv.Close() }, nil
	})
}
