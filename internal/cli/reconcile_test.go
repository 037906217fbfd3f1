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

package cli_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// TestReconcileWaitsForTheRequestToBeHandledAndReady: reconcile sets
// requested-at, and succeeds only once the controller has acted on that
// value and Ready is True for the current generation, not at an
// acknowledgement still in progress nor at a Ready of an older
// generation.
func TestReconcileWaitsForTheRequestToBeHandledAndReady(t *testing.T) {
	ns := namespace(t)
	deck := create(t, ns, "deck", &v1alpha1.SlideStock{})
	done := controller(t, deck, &v1alpha1.SlideStockList{},
		func(st *v1alpha1.ReconcileStatus, _ int64) {
			condition(st, v1alpha1.ReadyCondition, metav1.ConditionUnknown, v1alpha1.ProgressingReason, "fetching the deck")
			condition(st, v1alpha1.ReconcilingCondition, metav1.ConditionTrue, v1alpha1.ProgressingReason, "fetching the deck")
		},
		func(st *v1alpha1.ReconcileStatus, gen int64) {
			st.ObservedGeneration = gen - 1
			condition(st, v1alpha1.ReadyCondition, metav1.ConditionTrue, v1alpha1.SucceededReason, "an older generation's outcome")
		},
		func(st *v1alpha1.ReconcileStatus, gen int64) {
			ready("fetched Switchboard at SpeakerDeck")(st, gen)
			meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ReconcilingCondition)
		},
	)
	r := run(t, ns, "reconcile", "SlideStocks/deck").ok(t)
	<-done
	if !strings.Contains(r.stdout, "slidestock/deck is Ready: fetched Switchboard at SpeakerDeck") {
		t.Errorf("stdout does not report the Ready message of the handled request:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "older generation") || strings.Contains(r.stdout, "fetching") {
		t.Errorf("reconcile reported a status before the final one:\n%s", r.stdout)
	}
	var got v1alpha1.SlideStock
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(deck), &got); err != nil {
		t.Fatal(err)
	}
	value := got.Annotations[v1alpha1.RequestedAtAnnotation]
	if value == "" || got.Status.LastHandledRequestedAt != value || !strings.Contains(r.stderr, value) {
		t.Errorf("requested-at %q, handled %q; stderr:\n%s", value, got.Status.LastHandledRequestedAt, r.stderr)
	}
}

// TestReconcileReportsWhyNotReady: once the controller has acted on the
// request, Stalled, or Ready False, is a failure that prints the reason
// and the message.
func TestReconcileReportsWhyNotReady(t *testing.T) {
	for _, tc := range []struct {
		name  string
		step  func(*v1alpha1.ReconcileStatus, int64)
		wants []string
	}{
		{"stalled", func(st *v1alpha1.ReconcileStatus, gen int64) {
			st.ObservedGeneration = gen
			condition(st, v1alpha1.ReadyCondition, metav1.ConditionFalse, v1alpha1.UpstreamRejectedReason, "SpeakerDeck answered 404 for the deck")
			condition(st, v1alpha1.StalledCondition, metav1.ConditionTrue, v1alpha1.UpstreamRejectedReason, "SpeakerDeck answered 404 for the deck")
		}, []string{"slidestock/deck is Stalled", "UpstreamRejected", "SpeakerDeck answered 404 for the deck"}},
		{"retrying", func(st *v1alpha1.ReconcileStatus, _ int64) {
			condition(st, v1alpha1.ReadyCondition, metav1.ConditionFalse, v1alpha1.UpstreamUnavailableReason, "SpeakerDeck answered 503")
			condition(st, v1alpha1.ReconcilingCondition, metav1.ConditionTrue, v1alpha1.UpstreamUnavailableReason, "SpeakerDeck answered 503")
		}, []string{"slidestock/deck is not Ready", "UpstreamUnavailable", "SpeakerDeck answered 503", "tries again"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace(t)
			deck := create(t, ns, "deck", &v1alpha1.SlideStock{})
			done := controller(t, deck, &v1alpha1.SlideStockList{}, tc.step)
			r := run(t, ns, "reconcile", "stock", "deck").fails(t, tc.wants...)
			<-done
			if r.stdout != "" {
				t.Errorf("a failed reconcile printed on stdout:\n%s", r.stdout)
			}
		})
	}
}

// TestReconcileTimesOutSayingWhatItSaw: with no controller acting, the
// wait ends at --timeout with a failure that says the request was not
// handled.
func TestReconcileTimesOutSayingWhatItSaw(t *testing.T) {
	ns := namespace(t)
	create(t, ns, "research", &v1alpha1.NotionIntegration{})
	run(t, ns, "reconcile", "notion/research", "--timeout", "1s").
		fails(t, "timed out after 1s", "notionintegration/research", "has not acted on "+v1alpha1.RequestedAtAnnotation, "is the manager running")
}

// TestReconcileOfAMissingObjectFails says which object and namespace.
func TestReconcileOfAMissingObjectFails(t *testing.T) {
	ns := namespace(t)
	run(t, ns, "reconcile", "calwatch/nowhere").fails(t, "calendarwatch/nowhere not found in namespace "+ns)
}
