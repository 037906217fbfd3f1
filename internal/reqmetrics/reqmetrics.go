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

// Package reqmetrics is the pair of Prometheus metrics kept of the
// requests on either side of the operator (the webhook's inbound routes,
// the outbound calls to the upstreams): a counter by key and outcome, and
// a latency histogram by key. The label sets stay small and fixed, route
// patterns or upstream names and an outcome, so that no label carries a
// raw path or a token.
package reqmetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Opts names the two metrics and their labels.
type Opts struct {
	// Requests and RequestsHelp name the counter; Duration and
	// DurationHelp the histogram.
	Requests, RequestsHelp, Duration, DurationHelp string
	// Key and Outcome are the label names: the counter has both, the
	// histogram Key alone.
	Key, Outcome string
	// Buckets are the histogram's, in seconds.
	Buckets []float64
}

// Metrics are a request counter and a latency histogram.
type Metrics struct {
	Requests *prometheus.CounterVec
	Duration *prometheus.HistogramVec
}

// New builds the metrics and registers them with reg (nowhere when reg is
// nil).
func New(reg prometheus.Registerer, o Opts) (*Metrics, error) {
	m := &Metrics{
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: o.Requests, Help: o.RequestsHelp}, []string{o.Key, o.Outcome}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: o.Duration, Help: o.DurationHelp, Buckets: o.Buckets}, []string{o.Key}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.Requests, m.Duration} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// Observe counts one request of key with its outcome and records how long
// it took.
func (m *Metrics) Observe(key, outcome string, d time.Duration) {
	m.Requests.WithLabelValues(key, outcome).Inc()
	m.Duration.WithLabelValues(key).Observe(d.Seconds())
}

// Init makes the series of every key and outcome given, at zero, so that a
// scrape names them before the first request: a dashboard's panel and an
// alert's rate() see 0, not an absent series (Prometheus's instrumentation
// practice: "avoid missing metrics").
func (m *Metrics) Init(keys []string, outcomes ...string) {
	for _, k := range keys {
		for _, o := range outcomes {
			m.Requests.WithLabelValues(k, o)
		}
		m.Duration.WithLabelValues(k)
	}
}
