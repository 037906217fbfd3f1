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

// Package status is the one place every controller computes and writes
// status: kstatus conditions (Ready, Reconciling, Stalled) set consistently,
// observedGeneration set only on success, the requested-at annotation
// acknowledged, and one status patch per reconcile, none when nothing
// changed.
package status

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// Object is a Switchboard object whose status the helpers edit.
type Object interface {
	v1alpha1.StatusObject
	GetAnnotations() map[string]string
}

// Set sets one condition, stamped with the object's generation. The
// transition time changes only when the condition's status does, so
// setting the same condition twice changes nothing.
func Set(obj Object, condType string, st metav1.ConditionStatus, reason, message string) {
	rs := obj.GetReconcileStatus()
	meta.SetStatusCondition(&rs.Conditions, metav1.Condition{
		Type: condType, Status: st, Reason: reason, Message: message,
		ObservedGeneration: obj.GetGeneration(),
	})
}

// Remove deletes a condition.
func Remove(obj Object, condType string) {
	meta.RemoveStatusCondition(&obj.GetReconcileStatus().Conditions, condType)
}

// Get returns a condition, or nil.
func Get(obj Object, condType string) *metav1.Condition {
	return meta.FindStatusCondition(obj.GetReconcileStatus().Conditions, condType)
}

// IsTrue reports whether a condition is present and True.
func IsTrue(obj Object, condType string) bool {
	return meta.IsStatusConditionTrue(obj.GetReconcileStatus().Conditions, condType)
}

// MarkReady records success: Ready=True, no Reconciling or Stalled, and
// observedGeneration caught up with the spec.
func MarkReady(obj Object, reason, message string) {
	Set(obj, v1alpha1.ReadyCondition, metav1.ConditionTrue, reason, message)
	Remove(obj, v1alpha1.ReconcilingCondition)
	Remove(obj, v1alpha1.StalledCondition)
	obj.GetReconcileStatus().ObservedGeneration = obj.GetGeneration()
}

// MarkReconciling records work in progress (a first fetch, a retry, a
// renewal): Reconciling=True and Ready=Unknown unless Ready is already
// False for a reason worth keeping. observedGeneration is left alone.
func MarkReconciling(obj Object, reason, message string) {
	Set(obj, v1alpha1.ReconcilingCondition, metav1.ConditionTrue, reason, message)
	Remove(obj, v1alpha1.StalledCondition)
	if c := Get(obj, v1alpha1.ReadyCondition); c == nil || c.Status != metav1.ConditionFalse {
		Set(obj, v1alpha1.ReadyCondition, metav1.ConditionUnknown, reason, message)
	}
}

// MarkRetrying records a transient failure that the controller will retry:
// Ready=False with the failure, Reconciling=True.
func MarkRetrying(obj Object, reason, message string) {
	Set(obj, v1alpha1.ReadyCondition, metav1.ConditionFalse, reason, message)
	Set(obj, v1alpha1.ReconcilingCondition, metav1.ConditionTrue, reason, message)
	Remove(obj, v1alpha1.StalledCondition)
}

// MarkStalled records a failure only a person can fix: Ready=False,
// Stalled=True, no Reconciling. observedGeneration is set, since the
// controller has finished with this generation: kstatus then reports
// Failed rather than InProgress.
func MarkStalled(obj Object, reason, message string) {
	Set(obj, v1alpha1.ReadyCondition, metav1.ConditionFalse, reason, message)
	Set(obj, v1alpha1.StalledCondition, metav1.ConditionTrue, reason, message)
	Remove(obj, v1alpha1.ReconcilingCondition)
	obj.GetReconcileStatus().ObservedGeneration = obj.GetGeneration()
}

// RequestedAt returns the switchboard.dev/requested-at annotation when it
// holds a value the controller has not acted on yet.
func RequestedAt(obj Object) (string, bool) {
	v, ok := obj.GetAnnotations()[v1alpha1.RequestedAtAnnotation]
	if !ok || v == "" || v == obj.GetReconcileStatus().LastHandledRequestedAt {
		return "", false
	}
	return v, true
}

// AcknowledgeRequest records that the requested-at value was acted on.
func AcknowledgeRequest(obj Object, value string) {
	obj.GetReconcileStatus().LastHandledRequestedAt = value
}
