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

package webhook

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-dev/switchboard/internal/reqmetrics"
)

// newMetrics labels requests by route pattern, never by raw path: paths
// can be derived from secrets, and patterns keep the label set bounded.
func newMetrics(reg prometheus.Registerer) (*reqmetrics.Metrics, error) {
	return reqmetrics.New(reg, reqmetrics.Opts{
		Requests:     "switchboard_webhook_requests_total",
		RequestsHelp: "Inbound webhook requests by route pattern and HTTP status.",
		Duration:     "switchboard_webhook_request_duration_seconds",
		DurationHelp: "Time to answer inbound webhook requests, by route pattern.",
		Key:          "route", Outcome: "code",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	})
}

// newNotionMetrics counts what the Notion routes did with each event
// they understood: queued (a PaperSync stored) or ignored, with the reason
// (LinkEmpty, NotArxiv, OtherDatabase…; reasons are the route's constants,
// so the label set is bounded). Every series a route can give exists at
// zero from the start, so rate() and alerts read them before the first.
func newNotionMetrics(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchboard_webhook_notion_events_total",
		Help: "Events the Notion routes understood, by route (automation, events), outcome (queued, ignored) and the reason one was ignored.",
	}, []string{"route", "outcome", "reason"})
	for _, route := range []string{routeAutomation, routeEvents} {
		c.WithLabelValues(route, "queued", "")
		for _, reason := range []string{reasonOtherWorkspace, reasonOtherDatabase, reasonLinkEmpty, reasonNotArxiv,
			reasonInvalid, reasonOwnWrite, reasonEventType, reasonNoIntegration, reasonNotStored} {
			c.WithLabelValues(route, "ignored", reason)
		}
	}
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return c, nil
}
