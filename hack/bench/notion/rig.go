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

package notion

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/internal/controller/notionintegration"
	"github.com/switchboard-dev/switchboard/internal/controller/papersync"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// notionRig is what the Notion benchmarks share: the rig with Notion (one
// workspace) and arXiv in its sandbox, and the Notion controllers, arXiv
// pacing off.
type notionRig struct {
	*bench.Rig
	notion *sandbox.Notion
	ws     sandbox.NotionWorkspace
	// hook is bin/webhook's process, when it serves the routes.
	hook *local.Process
}

// startNotionRig starts the rig on cfg until ctx ends; wsID names the
// workspace. close stops the sandbox.
func startNotionRig(ctx context.Context, cfg *rest.Config, wsID string) (*notionRig, error) {
	r, err := newNotionRig(ctx, cfg, wsID)
	if err != nil {
		return nil, err
	}
	return r, r.Start(ctx)
}

// newNotionRig builds the Notion rig, not yet started.
func newNotionRig(ctx context.Context, cfg *rest.Config, wsID string) (*notionRig, error) {
	r := &notionRig{notion: sandbox.NewNotion(),
		ws: sandbox.NotionWorkspace{ID: wsID, Name: "Bench", BotID: "b0000000-0000-4000-8000-" + wsID[len(wsID)-12:]}}
	r.notion.AddClient("bench-client", "bench-secret")
	r.notion.AddPage(r.ws.ID, "Bench page")
	var err error
	reports := &notionintegration.Reports{}
	// No public URL: the integrations keep no connect link.
	if r.Rig, err = bench.NewRig(ctx, cfg, sandbox.New(r.notion, sandbox.NewArxiv()), nil, func(*bench.Rig) wire.Operator {
		return wire.Operator{Kinds: []wire.Kind{&notionintegration.Controller{Reports: reports}, &papersync.Controller{Integrations: reports}}}
	}); err != nil {
		return nil, err
	}
	return r, nil
}
