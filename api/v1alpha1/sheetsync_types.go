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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SheetSyncSpec is one finished time-tracker session to append (seed 004
// §1 TimeTrackerSession). The webhook creates it named from the session id,
// so posting the same session twice appends once. It never changes.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="SheetSync spec is immutable; the session was already accepted"
type SheetSyncSpec struct {
	// ConnectionRef names the SheetConnection to append to.
	// +required
	ConnectionRef LocalObjectReference `json:"connectionRef"`

	// Session is the row to write.
	// +required
	Session TimeTrackerSession `json:"session"`
}

// TimeTrackerSession is a finished session as the time tracker posts it.
// +kubebuilder:validation:XValidation:rule="self.endedAt >= self.startedAt",message="session.endedAt must not be before session.startedAt"
// +kubebuilder:validation:XValidation:rule="self.endedAt < self.startedAt || self.durationSeconds - (self.endedAt - self.startedAt) / 1000 <= 1 && (self.endedAt - self.startedAt) / 1000 - self.durationSeconds <= 1",message="session.durationSeconds must equal (endedAt - startedAt) / 1000, within one second"
type TimeTrackerSession struct {
	// ID of the session (the idempotency key).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]+$`
	// +required
	ID string `json:"id"`

	// Title of the session.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +required
	Title string `json:"title"`

	// StartedAt in milliseconds since the Unix epoch.
	// +kubebuilder:validation:Minimum=0
	// +required
	StartedAt int64 `json:"startedAt"`

	// EndedAt in milliseconds since the Unix epoch; not before startedAt.
	// +kubebuilder:validation:Minimum=0
	// +required
	EndedAt int64 `json:"endedAt"`

	// DurationSeconds is (endedAt - startedAt) / 1000.
	// +kubebuilder:validation:Minimum=0
	// +required
	DurationSeconds int64 `json:"durationSeconds"`

	// Project name.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Project string `json:"project,omitempty"`
	// Notes.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Notes string `json:"notes,omitempty"`
	// Tags, written comma-separated.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	// +optional
	Tags []string `json:"tags,omitempty"`
	// Skill practised.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Skill string `json:"skill,omitempty"`
	// Intensity.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Intensity string `json:"intensity,omitempty"`
}

// SheetSyncStatus is the sync log entry of seed 004 §2 SyncLog.
type SheetSyncStatus struct {
	ReconcileStatus `json:",inline"`
	// ChildStatus: phase, attempts, lastError, nextAttemptAt and
	// completedAt, as every child has them.
	ChildStatus `json:",inline"`

	// RowNumber written, from the append's updatedRange.
	// +optional
	RowNumber int64 `json:"rowNumber,omitempty"`
	// UpdatedRange as Google returned it, for example Sheet1!A5:I5.
	// +optional
	UpdatedRange string `json:"updatedRange,omitempty"`
	// AttemptedAt is when the last append was tried.
	// +optional
	AttemptedAt *metav1.Time `json:"attemptedAt,omitempty"`
	// InFlightSince is when an append began whose answer was lost (a
	// timeout, a reset, a 5xx): the rows may already be in the sheet, so
	// the operator looks for the session there before it appends again —
	// by its id in the id column when one is mapped, else by its title,
	// start, end and duration. It is cleared when an answer is recorded.
	// +optional
	InFlightSince *metav1.Time `json:"inFlightSince,omitempty"`
	// Trace is the last append request and response, bounded, for
	// debugging (seed 004 §2 googleAppendRequest / googleAppendResponse). It
	// holds no token.
	// +optional
	Trace *AppendTrace `json:"trace,omitempty"`
}

// AppendTrace is a bounded record of one values.append call.
type AppendTrace struct {
	// Request is the append's range, options and rows as JSON, cut at 4 KiB.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Request string `json:"request,omitempty"`
	// Response is Google's answer (or error) as JSON, cut at 4 KiB.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Response string `json:"response,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sheetsync,categories=switchboard
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Connection",type=string,JSONPath=`.spec.connectionRef.name`
// +kubebuilder:printcolumn:name="Row",type=integer,JSONPath=`.status.rowNumber`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// SheetSync is one finished time-tracker session on its way to a sheet row,
// and afterwards its sync log entry (seed 004).
type SheetSync struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SheetSyncSpec `json:"spec"`
	// +kubebuilder:default={}
	// +optional
	Status SheetSyncStatus `json:"status,omitempty"`
}
