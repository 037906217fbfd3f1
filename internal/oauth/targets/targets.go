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
//
// Each target is declared once, through add, and All is the targets so
// declared: a new OAuth kind's target is its declaration (in this file or
// a file of its own here), not also a line in a list. The wire package's
// tests fail on a kind that implements v1alpha1.OAuthObject with no
// target here.
package targets

import (
	"slices"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// Notion connects NotionIntegrations, with each one's assumed token
// lifetime (Notion states none).
var Notion = add(oauth.Target{
	Name: "notion", Kind: "notionintegration", Provider: oauth.Notion,
	Resolve: oauth.Resolver(func() *v1alpha1.NotionIntegration { return &v1alpha1.NotionIntegration{} }, NotionProvider),
})

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
var Calendar = add(oauth.Target{
	Name: "calendar", Kind: "calendarwatch", Provider: oauth.Google.WithScopes(CalendarScope),
	Resolve: oauth.Resolver(func() *v1alpha1.CalendarWatch { return &v1alpha1.CalendarWatch{} }, nil),
})

// Sheets connects SheetConnections to Google Sheets.
var Sheets = add(oauth.Target{
	// openid makes the token answer carry an id_token whose sub is the
	// Google user id.
	Name: "sheets", Kind: "sheetconnection", Provider: oauth.Google.WithScopes("openid", SheetsScope),
	Resolve: oauth.Resolver(func() *v1alpha1.SheetConnection { return &v1alpha1.SheetConnection{} }, nil),
})

// declared are the targets add declared, in the order of their
// declarations (Go initializes a package's variables in that order, file
// by file).
var declared []oauth.Target

// add declares t a target: All includes it.
func add(t oauth.Target) oauth.Target {
	declared = append(declared, t)
	return t
}

// All are the targets, for the manager's Receiver.
func All() []oauth.Target { return slices.Clone(declared) }
