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

package calendarwatch

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Whoever may write a CalendarWatch in a namespace chooses the sink URL,
// and the manager posts to it from inside the cluster: pointed at the
// cloud metadata service (169.254.169.254) it would be server-side request
// forgery against the node's credentials (OWASP Server-Side Request
// Forgery Prevention Cheat Sheet). The manager's policy refuses it; the
// watch says why and is not retried in a loop.
func TestASinkAtAForbiddenAddressStallsTheWatchAndIsNeverContacted(t *testing.T) {
	var hits atomic.Int32
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer local.Close()
	_, port, _ := net.SplitHostPort(local.Listener.Addr().String())
	for _, tc := range []struct {
		name, url string
		// atOnce: an IP in the URL is refused before there is anything
		// to deliver; a host name when a delivery dials what it resolves to.
		atOnce bool
		addr   string
	}{
		{"the cloud metadata service", "http://169.254.169.254/latest/meta-data/iam/security-credentials/?k=s3cret", true, "169.254.169.254"},
		{"a host name that resolves to loopback", "http://localhost:" + port + "/cancelled?k=s3cret", false, "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits.Store(0)
			f := newFixture(t, func(w *v1alpha1.CalendarWatch) {
				w.Spec.Sink.HTTP = &v1alpha1.HTTPSink{URL: tc.url, SigningSecretRef: v1alpha1.SecretReference{Name: "sink-key"}}
			})
			// The production policy (the suite's client allows loopback
			// for the other sink tests).
			reg := prometheus.NewRegistry()
			strict, err := outbound.New(upstream.NewSet(), outbound.Options{Timeout: 2 * time.Second, Registerer: reg})
			if err != nil {
				t.Fatal(err)
			}
			f.r.Out = strict
			key := "0123456789abcdef-signing"
			if err := env.Client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "sink-key"}, Data: map[string][]byte{SigningKey: []byte(key)}}); err != nil {
				t.Fatal(err)
			}
			id := f.event("visit")
			f.appointment(t, "appt", id)

			f.reconcile(t)
			if got := condition(f.watch(t), v1alpha1.StalledCondition).Reason == v1alpha1.SinkAddressRefusedReason; got != tc.atOnce {
				t.Fatalf("stalled before any delivery = %v, want %v: %+v", got, tc.atOnce, f.watch(t).Status.Conditions)
			}
			if err := calEm.CancelEvent(f.calendar, id); err != nil {
				t.Fatal(err)
			}
			f.notify(t, 2)
			res := f.reconcile(t)
			w := f.watch(t)
			if f.exists(t, "appt") || len(w.Status.PendingDeliveries) != 1 {
				t.Fatalf("the objects sink must go on and the delivery wait: appt exists %v, %+v", f.exists(t, "appt"), w.Status)
			}
			stalled, ready, delivered := condition(w, v1alpha1.StalledCondition), condition(w, v1alpha1.ReadyCondition), condition(w, v1alpha1.DeliveredCondition)
			if stalled.Status != metav1.ConditionTrue || stalled.Reason != v1alpha1.SinkAddressRefusedReason ||
				ready.Status != metav1.ConditionFalse || ready.Reason != v1alpha1.SinkAddressRefusedReason ||
				delivered.Status != metav1.ConditionFalse || delivered.Reason != v1alpha1.SinkAddressRefusedReason {
				t.Fatalf("conditions %+v", w.Status.Conditions)
			}
			if !strings.Contains(stalled.Message, "the address "+tc.addr+" is") || !strings.Contains(stalled.Message, "spec.sink.http.url") {
				t.Fatalf("Stalled message %q", stalled.Message)
			}
			for _, secret := range []string{"s3cret", key, "meta-data", "/cancelled"} {
				if strings.Contains(stalled.Message, secret) || strings.Contains(delivered.Message, secret) {
					t.Fatalf("the message shows %q: %q", secret, stalled.Message)
				}
			}
			// Not a tight loop: looked at again on the backup timer
			// (15 min ±10 %), not by the delivery backoff's 1 s.
			if res.RequeueAfter < 13*time.Minute || w.Status.NextDeliveryAt != nil {
				t.Fatalf("requeue after %s, next delivery %v", res.RequeueAfter, w.Status.NextDeliveryAt)
			}
			// A push meanwhile syncs again and stays stalled.
			f.notify(t, 3)
			f.reconcile(t)
			if c := condition(f.watch(t), v1alpha1.StalledCondition); c.Reason != v1alpha1.SinkAddressRefusedReason {
				t.Fatalf("Stalled %+v", c)
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("the sink received %d requests", n)
			}
			if tc.atOnce {
				// Refused before the outbound client was even asked.
				fams, err := reg.Gather()
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range fams {
					for _, m := range f.GetMetric() {
						if f.GetName() == "switchboard_upstream_requests_total" && m.GetCounter().GetValue() != 0 {
							t.Fatalf("an outbound request was counted (%v) for an address refused up front", m.GetLabel())
						}
					}
				}
			}
		})
	}
}
