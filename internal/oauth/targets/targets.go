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
	"github.com/switchboard-dev/switchboard/internal/gcalendar"
	"github.com/switchboard-dev/switchboard/internal/gsheets"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// Notion connects NotionIntegrations, with each one's assumed token
// lifetime (Notion states none).
var Notion = oauth.Target{
	Name: "notion", Kind: "notionintegration", Provider: oauth.Notion,
	Resolve: oauth.Resolver(func() *v1alpha1.NotionIntegration { return &v1alpha1.NotionIntegration{} },
		func(ni *v1alpha1.NotionIntegration) v1alpha1.OAuthCredentials { return ni.Spec.OAuth },
		NotionProvider),
}

// NotionProvider is Notion with the integration's assumed token lifetime.
func NotionProvider(ni *v1alpha1.NotionIntegration) oauth.Provider {
	return oauth.Notion.WithAssumedLifetime(ni.Spec.TokenRefresh.AssumedLifetime.Duration)
}

// Calendar connects CalendarWatches to Google Calendar.
var Calendar = oauth.Target{
	Name: "calendar", Kind: "calendarwatch", Provider: gcalendar.OAuthProvider,
	Resolve: oauth.Resolver(func() *v1alpha1.CalendarWatch { return &v1alpha1.CalendarWatch{} },
		func(w *v1alpha1.CalendarWatch) v1alpha1.OAuthCredentials { return w.Spec.OAuth }, nil),
}

// Sheets connects SheetConnections to Google Sheets.
var Sheets = oauth.Target{
	Name: "sheets", Kind: "sheetconnection", Provider: gsheets.OAuthProvider,
	Resolve: oauth.Resolver(func() *v1alpha1.SheetConnection { return &v1alpha1.SheetConnection{} },
		func(c *v1alpha1.SheetConnection) v1alpha1.OAuthCredentials { return c.Spec.OAuth }, nil),
}

// All are the targets, for the manager's Receiver.
func All() []oauth.Target { return []oauth.Target{Notion, Calendar, Sheets} }
