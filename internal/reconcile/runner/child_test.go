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

package runner_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// A child whose work is done is finished by the runner's rule, as a
// parent whose phases all continued: Succeeded at the batch's time, its
// last error and next attempt cleared, Ready with the kind's reason and
// words, nothing Reconciling or Stalled, its generation observed.
func TestSucceededFinishesAChildAsTheRunnerMarksAParentReady(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	for _, obj := range []runner.Child{&v1alpha1.PaperSync{}, &v1alpha1.SheetSync{}} {
		obj.SetGeneration(3)
		st := obj.GetChildStatus()
		next := metav1.NewTime(now.Add(time.Minute))
		st.Phase, st.Attempts, st.LastError, st.NextAttemptAt = v1alpha1.SyncPending, 2, "503 Service Unavailable", &next
		status.MarkRetrying(obj, v1alpha1.UpstreamUnavailableReason, st.LastError)

		runner.Succeeded(obj, now, v1alpha1.SkippedReason, "nothing to fill")

		if st.Phase != v1alpha1.SyncSucceeded || st.LastError != "" || st.NextAttemptAt != nil || st.Attempts != 2 ||
			st.CompletedAt == nil || !st.CompletedAt.Time.Equal(now) {
			t.Errorf("%T: child status %+v, want Succeeded at %s, no error, no next attempt, 2 attempts", obj, *st, now)
		}
		ready := status.Get(obj, v1alpha1.ReadyCondition)
		if ready == nil || ready.Status != metav1.ConditionTrue || ready.Reason != v1alpha1.SkippedReason || ready.Message != "nothing to fill" {
			t.Errorf("%T: Ready %+v, want True, Skipped, the kind's message", obj, ready)
		}
		if status.Get(obj, v1alpha1.ReconcilingCondition) != nil || status.Get(obj, v1alpha1.StalledCondition) != nil ||
			obj.GetReconcileStatus().ObservedGeneration != 3 {
			t.Errorf("%T: conditions %+v, observedGeneration %d: want only Ready, generation 3 observed",
				obj, obj.GetReconcileStatus().Conditions, obj.GetReconcileStatus().ObservedGeneration)
		}
	}
}

// A child whose work cannot succeed is finished as a parent that waits for
// a person: Failed at the batch's time with its last error, no next
// attempt, Stalled and not Ready with the kind's reason, nothing
// Reconciling, its generation observed.
func TestFailedFinishesAChildAsStalled(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	for _, obj := range []runner.Child{&v1alpha1.PaperSync{}, &v1alpha1.SheetSync{}} {
		obj.SetGeneration(2)
		st := obj.GetChildStatus()
		next := metav1.NewTime(now.Add(time.Minute))
		st.Phase, st.Attempts, st.NextAttemptAt = v1alpha1.SyncPending, 5, &next
		status.MarkRetrying(obj, v1alpha1.UpstreamUnavailableReason, "503")

		runner.Failed(obj, now, v1alpha1.RetriesExhaustedReason, "gave up after 5 attempts: 503")

		if st.Phase != v1alpha1.SyncFailed || st.LastError != "gave up after 5 attempts: 503" || st.NextAttemptAt != nil ||
			st.Attempts != 5 || st.CompletedAt == nil || !st.CompletedAt.Time.Equal(now) {
			t.Errorf("%T: child status %+v, want Failed at %s with the error, no next attempt, 5 attempts", obj, *st, now)
		}
		for cond, want := range map[string]metav1.ConditionStatus{v1alpha1.ReadyCondition: metav1.ConditionFalse, v1alpha1.StalledCondition: metav1.ConditionTrue} {
			if c := status.Get(obj, cond); c == nil || c.Status != want || c.Reason != v1alpha1.RetriesExhaustedReason {
				t.Errorf("%T: %s %+v, want %s, RetriesExhausted", obj, cond, c, want)
			}
		}
		if status.Get(obj, v1alpha1.ReconcilingCondition) != nil || obj.GetReconcileStatus().ObservedGeneration != 2 {
			t.Errorf("%T: conditions %+v, observedGeneration %d", obj, obj.GetReconcileStatus().Conditions, obj.GetReconcileStatus().ObservedGeneration)
		}
	}
}
