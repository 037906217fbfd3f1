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

package outbound

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-dev/switchboard/internal/reqmetrics"
	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// metrics label by upstream name and outcome only: both sets are small and
// fixed, and neither can carry a token.
type metrics struct {
	*reqmetrics.Metrics
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m, err := reqmetrics.New(reg, reqmetrics.Opts{
		Requests:     "switchboard_upstream_requests_total",
		RequestsHelp: "Outbound requests by upstream and outcome (success, transient, permanent).",
		Duration:     "switchboard_upstream_request_duration_seconds",
		DurationHelp: "Outbound request latency by upstream, failures included.",
		Key:          "upstream", Outcome: "outcome",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	})
	if err != nil {
		return nil, err
	}
	keys := []string{string(SinkUpstream)}
	for _, n := range upstream.Names() {
		keys = append(keys, string(n))
	}
	m.Init(keys, outcomeSuccess, Transient.String(), Permanent.String())
	return &metrics{Metrics: m}, nil
}

func (m *metrics) observe(u upstream.Name, outcome string, d time.Duration) {
	m.Observe(string(u), outcome, d)
}
