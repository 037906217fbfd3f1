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

// Package controller wires controllers that work as a pair, so the
// manager, the tests and the benchmarks build them the same way.
package controller

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/arxiv"
	"github.com/switchboard-dev/switchboard/internal/controller/notionintegration"
	"github.com/switchboard-dev/switchboard/internal/controller/papersync"
	"github.com/switchboard-dev/switchboard/internal/notion"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
)

// NotionDeps are what the Notion pair needs.
type NotionDeps struct {
	Out        *outbound.Client
	OAuth      *oauth.Engine
	ArxivPacer *arxiv.Pacer
	// PublicURL is the webhook server's public base URL, for the OAuth
	// connect links the integrations keep in their connect Secrets.
	PublicURL string
	// SyncRetries replaces the PaperSync schedule (tests shorten it).
	SyncRetries outbound.Schedule
	// SyncRechecks replaces the schedule of the rechecks of PaperSyncs
	// whose retries ran out (papersync.DefaultRecheck; tests shorten it).
	SyncRechecks outbound.Schedule
}

// SetupNotion registers the NotionIntegration and PaperSync controllers.
func SetupNotion(mgr ctrl.Manager, d NotionDeps) error {
	nc := &notion.Client{Out: d.Out}
	if err := (&notionintegration.Reconciler{
		Client:    mgr.GetClient(),
		OAuth:     d.OAuth,
		Notion:    nc,
		Recorder:  mgr.GetEventRecorder("notionintegration-controller"),
		Backfill:  papersync.Backfill(mgr.GetClient(), nc),
		PublicURL: d.PublicURL,
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	return (&papersync.Reconciler{
		Client:   mgr.GetClient(),
		OAuth:    d.OAuth,
		Notion:   nc,
		Arxiv:    &arxiv.Client{Out: d.Out, Pacer: d.ArxivPacer},
		Recorder: mgr.GetEventRecorder("papersync-controller"),
		Retries:  d.SyncRetries,
		Recheck:  d.SyncRechecks,
	}).SetupWithManager(mgr)
}
