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

package bench

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// APIWrites sums the manager's rest_client_requests_total by method, for
// the write methods.
func APIWrites(metricsURL string) (map[string]float64, error) {
	out := map[string]float64{}
	err := Scrape(metricsURL, func(line string) {
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			return
		}
		for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			if strings.Contains(line, `method="`+method+`"`) {
				if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
					out[method] += v
				}
			}
		}
	})
	return out, err
}

// MetricValue is the value of the unlabelled metric name at metricsURL.
func MetricValue(metricsURL, name string) (float64, error) {
	v, found := 0.0, false
	err := Scrape(metricsURL, func(line string) {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			var perr error
			v, perr = strconv.ParseFloat(rest, 64)
			found = perr == nil
		}
	})
	if err == nil && !found {
		err = fmt.Errorf("%s has no %s", metricsURL, name)
	}
	return v, err
}

// Scrape hands each line of the Prometheus text at metricsURL to f; a
// page answered with another status than 200 is an error.
func Scrape(metricsURL string, f func(line string)) error {
	resp, err := http.Get(metricsURL)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", metricsURL, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f(sc.Text())
	}
	return sc.Err()
}

// QueueStats are a controller's workqueue histograms (ControllerQueue)
// (controller-runtime's metrics registry, in process): seconds waited in
// the queue once ready, and seconds reconciling, summed, and their count.
type QueueStats struct{ waitSum, workSum, waits, Works float64 }

// Since is what was added between two readings: items, mean wait, mean
// work.
func (q QueueStats) Since(before QueueStats) (items float64, wait, work time.Duration) {
	items = q.Works - before.Works
	if n := q.waits - before.waits; n > 0 {
		wait = time.Duration((q.waitSum - before.waitSum) / n * float64(time.Second))
	}
	if items > 0 {
		work = time.Duration((q.workSum - before.workSum) / items * float64(time.Second))
	}
	return items, wait, work
}

// ControllerQueue reads the workqueue histograms of the controller named
// name.
func ControllerQueue(name string) QueueStats {
	var q QueueStats
	for _, m := range gatherNamed("name", name) {
		h := m.metric.GetHistogram()
		if h == nil {
			continue
		}
		switch m.family {
		case "workqueue_queue_duration_seconds":
			q.waitSum, q.waits = h.GetSampleSum(), float64(h.GetSampleCount())
		case "workqueue_work_duration_seconds":
			q.workSum, q.Works = h.GetSampleSum(), float64(h.GetSampleCount())
		}
	}
	return q
}

// ActiveWorkers is how many workers of the controller named name are
// reconciling.
func ActiveWorkers(name string) float64 {
	for _, m := range gatherNamed("controller", name) {
		if m.family == "controller_runtime_active_workers" && m.metric.GetGauge() != nil {
			return m.metric.GetGauge().GetValue()
		}
	}
	return 0
}

// namedMetric is one series of controller-runtime's registry, with its
// family's name.
type namedMetric struct {
	family string
	metric *dto.Metric
}

// gatherNamed is every series of controller-runtime's registry (in
// process) whose label key is value.
func gatherNamed(key, value string) []namedMetric {
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return nil
	}
	var out []namedMetric
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == key && l.GetValue() == value {
					out = append(out, namedMetric{family: mf.GetName(), metric: m})
				}
			}
		}
	}
	return out
}
