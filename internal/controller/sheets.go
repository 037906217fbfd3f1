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

package controller

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetsync"
	"github.com/switchboard-dev/switchboard/internal/gsheets"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
)

// SheetsDeps are what the Sheets pair needs.
type SheetsDeps struct {
	Out   *outbound.Client
	OAuth *oauth.Engine
	// PublicURL is the webhook server's public base URL, for the OAuth
	// connect links.
	PublicURL string
	// SyncRetries replaces the SheetSync schedule (tests shorten it).
	SyncRetries outbound.Schedule
}

// SetupSheets registers the SheetConnection and SheetSync controllers.
func SetupSheets(mgr ctrl.Manager, d SheetsDeps) error {
	sc, err := gsheets.New(context.Background(), d.Out)
	if err != nil {
		return err
	}
	if err := (&sheetconnection.Reconciler{
		Client: mgr.GetClient(), OAuth: d.OAuth, Sheets: sc,
		Recorder: mgr.GetEventRecorder("sheetconnection-controller"), PublicURL: d.PublicURL,
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	return (&sheetsync.Reconciler{
		Client: mgr.GetClient(), OAuth: d.OAuth, Sheets: sc,
		Recorder: mgr.GetEventRecorder("sheetsync-controller"), Retries: d.SyncRetries,
	}).SetupWithManager(mgr)
}
