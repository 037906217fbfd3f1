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

// SyncPhase is the lifecycle of one unit of inbound work (a PaperSync or a
// SheetSync): Pending until it is written upstream, then Succeeded or Failed.
// +kubebuilder:validation:Enum=Pending;Succeeded;Failed
type SyncPhase string

const (
	SyncPending   SyncPhase = "Pending"
	SyncSucceeded SyncPhase = "Succeeded"
	SyncFailed    SyncPhase = "Failed"
)

// ChildStatus is the status every child object shares (a PaperSync of a
// NotionIntegration, a SheetSync of a SheetConnection): one unit of work
// its parent's batch takes. Its kind's status embeds it inline, so its
// fields are the kind's own (status.phase, status.attempts, …). The
// parent is not in status: the child's spec names it, and never changes.
type ChildStatus struct {
	// Phase: Pending until the work is done upstream, then Succeeded or
	// Failed. A PaperSync Failed with reason RetriesExhausted (an arXiv or
	// Notion outage outlasted its retries) is Pending again for each
	// recheck: 1 minute after it failed, doubling to half an hour.
	// +optional
	Phase SyncPhase `json:"phase,omitempty"`
	// Attempts counts tries upstream, rechecks included: a PaperSync's at
	// arXiv and Notion, a SheetSync's appends (the retryCount of the sync
	// log).
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// LastError is the last failure, for a person; empty once Succeeded.
	// +optional
	LastError string `json:"lastError,omitempty"`
	// NextAttemptAt is when the child is tried again after its last attempt
	// was throttled or failed, whatever its batch mates do: a SheetSync's
	// own schedule, 1, 2, 4 … 64 seconds after its attempts (never sooner
	// than Retry-After), then, once those 7 retries are spent, rechecks 1
	// hour doubling to 24 hours apart. Empty while the child is not waiting
	// for a retry, and on a PaperSync, whose retries join its integration's
	// next batch.
	// +optional
	NextAttemptAt *metav1.Time `json:"nextAttemptAt,omitempty"`
	// CompletedAt is when the child reached Succeeded or Failed (last
	// failed, for a PaperSync rechecked); it is deleted after its parent's
	// syncRetention, unless a recheck comes first or, for a Failed
	// SheetSync, until a person retries or deletes it.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
}

// ChildObject is a child kind (PaperSync, SheetSync): a unit of work its
// parent hands out, batched with the parent's other pending children
// (internal/reconcile/children), indexed by its parent while it is not
// finished (internal/index), and marked Ready by the runner once its
// work succeeded.
// +kubebuilder:object:generate=false
type ChildObject interface {
	StatusObject
	// ParentName is the name of the child's parent, in its namespace, as
	// its spec names it.
	ParentName() string
	// ParentKind is the kind of the child's parent, as Kinds names it.
	ParentKind() string
	// GetChildStatus is the status every child shares.
	GetChildStatus() *ChildStatus
}

var (
	_ ChildObject = (*PaperSync)(nil)
	_ ChildObject = (*SheetSync)(nil)
)

// Finished reports whether the child reached Succeeded or Failed
// (status.completedAt is set).
func (s *ChildStatus) Finished() bool { return s.CompletedAt != nil }

// ParentName implements ChildObject: spec.integrationRef.name.
func (in *PaperSync) ParentName() string { return in.Spec.IntegrationRef.Name }

// ParentKind implements ChildObject: a PaperSync's parent is a
// NotionIntegration.
func (*PaperSync) ParentKind() string { return "NotionIntegration" }

// ParentName implements ChildObject: spec.connectionRef.name.
func (in *SheetSync) ParentName() string { return in.Spec.ConnectionRef.Name }

// ParentKind implements ChildObject: a SheetSync's parent is a
// SheetConnection.
func (*SheetSync) ParentKind() string { return "SheetConnection" }
