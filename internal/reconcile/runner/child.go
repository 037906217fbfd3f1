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

package runner

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// Child is a child kind (v1alpha1.ChildObject: a PaperSync, a SheetSync),
// reconciled by the runner with its parent's other pending children in
// one batch (internal/reconcile/children).
type Child interface {
	Object
	v1alpha1.ChildObject
}

// Succeeded finishes a child whose work is done as Reconcile finishes a
// parent whose phases all continued: Ready=True with reason and message
// (the kind's words for what it did: "appended as row 7"), no Reconciling
// or Stalled, observedGeneration caught up; and its child status
// Succeeded at now, with no error and no next attempt. A batch writes
// several children in one go, so it, not Reconcile, calls this for each
// member its work finished: a child kind never marks itself Ready.
func Succeeded(obj Child, now time.Time, reason, message string) {
	st := obj.GetChildStatus()
	at := metav1.NewTime(now)
	st.Phase, st.LastError, st.CompletedAt, st.NextAttemptAt = v1alpha1.SyncSucceeded, "", &at, nil
	status.MarkReady(obj, reason, message)
}

// Failed finishes a child whose work cannot succeed (the upstream refused
// it, or its retries are spent) as the runner marks a parent that must
// wait for a person: Stalled with reason and message, Ready=False; and its
// child status Failed at now, message its last error, no next attempt.
// The kind says what happened beyond it (its Warning Event, its count).
func Failed(obj Child, now time.Time, reason, message string) {
	st := obj.GetChildStatus()
	at := metav1.NewTime(now)
	st.Phase, st.LastError, st.CompletedAt, st.NextAttemptAt = v1alpha1.SyncFailed, message, &at, nil
	status.MarkStalled(obj, reason, message)
}
