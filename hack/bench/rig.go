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

package main

import (
	"context"
	"net/http/httptest"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/switchboard-dev/switchboard/internal/arxiv"
	"github.com/switchboard-dev/switchboard/internal/controller"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// notionRig is what the Notion benchmarks share: an instant sandbox
// (Notion with one workspace, arXiv) and an in-process manager running the
// Notion controllers against it, arXiv pacing off.
type notionRig struct {
	notion *sandbox.Notion
	box    *sandbox.Server
	ws     sandbox.NotionWorkspace
	ups    *upstream.Set
	out    *outbound.Client
	mgr    ctrl.Manager
	close  func()
}

// startNotionRig starts the rig on cfg until ctx ends; wsID names the
// workspace. close stops the sandbox.
func startNotionRig(ctx context.Context, cfg *rest.Config, wsID string) (*notionRig, error) {
	r := &notionRig{notion: sandbox.NewNotion(),
		ws: sandbox.NotionWorkspace{ID: wsID, Name: "Bench", BotID: "b0000000-0000-4000-8000-" + wsID[len(wsID)-12:]}}
	r.notion.AddClient("bench-client", "bench-secret")
	r.notion.AddPage(r.ws.ID, "Bench page")
	r.box = sandbox.New(r.notion, sandbox.NewArxiv())
	sbx := httptest.NewServer(r.box)
	r.close = sbx.Close
	r.ups = sandbox.Upstreams(sbx.URL)
	var err error
	if r.out, err = outbound.New(r.ups, outbound.Options{}); err != nil {
		r.close()
		return nil, err
	}
	r.mgr, err = ctrl.NewManager(cfg, ctrl.Options{Scheme: setupScheme(), Metrics: metricsserver.Options{BindAddress: "0"}, Logger: logr.Discard()})
	if err == nil {
		err = index.Register(ctx, r.mgr.GetFieldIndexer())
	}
	if err == nil {
		engine := &oauth.Engine{Store: &oauth.Store{Reader: r.mgr.GetAPIReader(), Writer: r.mgr.GetClient()}, Out: r.out}
		err = controller.SetupNotion(r.mgr, controller.NotionDeps{Out: r.out, OAuth: engine, ArxivPacer: &arxiv.Pacer{Interval: 0}})
	}
	if err != nil {
		r.close()
		return nil, err
	}
	go func() { _ = r.mgr.Start(ctx) }()
	return r, nil
}
