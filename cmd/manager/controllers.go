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

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/arxiv"
	"github.com/switchboard-dev/switchboard/internal/controller"
	"github.com/switchboard-dev/switchboard/internal/controller/calendarwatch"
	"github.com/switchboard-dev/switchboard/internal/controller/slidestock"
	"github.com/switchboard-dev/switchboard/internal/gcalendar"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oembed"
	"github.com/switchboard-dev/switchboard/internal/outbound"
)

// Deps is what every controller is built from.
type Deps struct {
	// Outbound is the one outbound HTTP policy.
	Outbound *outbound.Client
	// OAuth is the one OAuth engine.
	OAuth *oauth.Engine
	// ArxivPacer spaces arXiv requests (one per 3 s by default).
	ArxivPacer *arxiv.Pacer
	// PublicURL is the webhook server's public base URL (OAuth connect links).
	PublicURL string
	// Links configure the ReceiveLink controller.
	Links controller.LinksDeps
}

// controllers lists each kind's controller; each integration issue adds
// one line here, pointing at its package under internal/controller.
var controllers = []struct {
	name  string
	setup func(ctrl.Manager, Deps) error
}{
	{"slidestock", func(mgr ctrl.Manager, d Deps) error {
		return (&slidestock.Reconciler{
			Client:   mgr.GetClient(),
			Fetcher:  &oembed.Client{Out: d.Outbound},
			Recorder: mgr.GetEventRecorder("slidestock-controller"),
		}).SetupWithManager(mgr)
	}},
	{"notionintegration and papersync", func(mgr ctrl.Manager, d Deps) error {
		return controller.SetupNotion(mgr, controller.NotionDeps{Out: d.Outbound, OAuth: d.OAuth, ArxivPacer: d.ArxivPacer, PublicURL: d.PublicURL})
	}},
	{"calendarwatch", func(mgr ctrl.Manager, d Deps) error {
		cal, err := gcalendar.New(context.Background(), d.Outbound)
		if err != nil {
			return err
		}
		return (&calendarwatch.Reconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), OAuth: d.OAuth, Calendar: cal, Out: d.Outbound,
			Recorder: mgr.GetEventRecorder("calendarwatch-controller"), PublicURL: d.PublicURL,
		}).SetupWithManager(mgr)
	}},
	{"sheetconnection and sheetsync", func(mgr ctrl.Manager, d Deps) error {
		return controller.SetupSheets(mgr, controller.SheetsDeps{Out: d.Outbound, OAuth: d.OAuth, PublicURL: d.PublicURL})
	}},
	{"receivelink", func(mgr ctrl.Manager, d Deps) error {
		l := d.Links
		l.Out, l.PublicURL = d.Outbound, d.PublicURL
		return controller.SetupLinks(mgr, l)
	}},
}

func ctrlClientOptions(cache client.CacheOptions) client.Options {
	return client.Options{Cache: &cache}
}
