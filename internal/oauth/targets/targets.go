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

// Package targets lists the kinds the OAuth routes connect. The webhook
// server starts their flows and the manager finishes them (oauth.Receiver);
// both read this one list, so they resolve a resource the same way.
package targets

import (
	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// Notion connects NotionIntegrations, with each one's assumed token
// lifetime (Notion states none).
var Notion = oauth.Target{
	Name: "notion", Kind: "notionintegration", Provider: oauth.Notion,
	Resolve: oauth.Resolver(func() *v1alpha1.NotionIntegration { return &v1alpha1.NotionIntegration{} }, NotionProvider),
}

// NotionProvider is Notion with the integration's assumed token lifetime.
func NotionProvider(ni *v1alpha1.NotionIntegration) oauth.Provider {
	return oauth.Notion.WithAssumedLifetime(ni.Spec.TokenRefresh.AssumedLifetime.Duration)
}

// The Google scopes the connect flows ask for. They are the APIs', but
// they live here, not in the clients, so the webhook, which starts the
// flows, links no upstream client.
const (
	// CalendarScope is the one scope a CalendarWatch needs: reading
	// events.
	CalendarScope = "https://www.googleapis.com/auth/calendar.readonly"
	// SheetsScope lets the operator read and append to the person's
	// spreadsheets
	// (https://developers.google.com/sheets/api/reference/rest/v4/spreadsheets.values/append,
	// "Authorization scopes").
	SheetsScope = "https://www.googleapis.com/auth/spreadsheets"
)

// Calendar connects CalendarWatches to Google Calendar.
var Calendar = oauth.Target{
	Name: "calendar", Kind: "calendarwatch", Provider: oauth.Google.WithScopes(CalendarScope),
	Resolve: oauth.Resolver(func() *v1alpha1.CalendarWatch { return &v1alpha1.CalendarWatch{} }, nil),
}

// Sheets connects SheetConnections to Google Sheets.
var Sheets = oauth.Target{
	// openid makes the token answer carry an id_token whose sub is the
	// Google user id.
	Name: "sheets", Kind: "sheetconnection", Provider: oauth.Google.WithScopes("openid", SheetsScope),
	Resolve: oauth.Resolver(func() *v1alpha1.SheetConnection { return &v1alpha1.SheetConnection{} }, nil),
}

// All are the targets, for the manager's Receiver.
func All() []oauth.Target { return []oauth.Target{Notion, Calendar, Sheets} }
