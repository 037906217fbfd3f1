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

// PaperSyncSpec is one Notion Automation event: fill this page with the
// metadata of this arXiv paper (seed 000 §3.3). It is created by the webhook
// server and never changes.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="PaperSync spec is immutable; create a new PaperSync instead"
type PaperSyncSpec struct {
	// IntegrationRef names the NotionIntegration whose grant writes the page.
	// +required
	IntegrationRef LocalObjectReference `json:"integrationRef"`

	// PageID of the Notion page to update: 32 hex digits with or without
	// dashes.
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`
	// +required
	PageID string `json:"pageID"`

	// Link as the page holds it, for example https://arxiv.org/abs/2301.12345v2.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('arxiv\\\\.org/(abs|pdf)/')",message="link must be an arXiv abstract or PDF URL, such as https://arxiv.org/abs/2301.12345"
	// +required
	Link string `json:"link"`

	// ArxivID without version, new style (2301.12345) or old style
	// (hep-th/9901001), as parsed from link by the webhook.
	// +kubebuilder:validation:Pattern=`^([0-9]{4}\.[0-9]{4,5}|[a-z-]+(\.[A-Z]{2})?/[0-9]{7})$`
	// +required
	ArxivID string `json:"arxivID"`
}

// PaperSyncStatus is the outcome of the sync.
type PaperSyncStatus struct {
	ReconcileStatus `json:",inline"`

	// Phase: Pending, Succeeded or Failed. A sync Failed with reason
	// RetriesExhausted (an arXiv or Notion outage outlasted the 1, 2, 4 s
	// retries) is Pending again for each recheck: 1 minute after it
	// failed, doubling to half an hour.
	// +optional
	Phase SyncPhase `json:"phase,omitempty"`
	// Title written to the page (cut at 2000 characters as Notion counts
	// them: UTF-16 code units, two for a character beyond U+FFFF).
	// +optional
	Title string `json:"title,omitempty"`
	// PublicationYear written to the page.
	// +optional
	PublicationYear int32 `json:"publicationYear,omitempty"`
	// Attempts counts tries at arXiv and Notion, rechecks included.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// LastError is the last failure, for a person.
	// +optional
	LastError string `json:"lastError,omitempty"`
	// CompletedAt is when the sync reached Succeeded or Failed (last
	// failed, for one rechecked); the object is deleted after the
	// integration's syncRetention, unless a recheck comes first.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=paper,categories=switchboard
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="arXiv",type=string,JSONPath=`.spec.arxivID`
// +kubebuilder:printcolumn:name="Integration",type=string,JSONPath=`.spec.integrationRef.name`
// +kubebuilder:printcolumn:name="Page",type=string,JSONPath=`.spec.pageID`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// PaperSync records one Notion Automation event and its outcome: the arXiv
// paper fetched and written to the page (seed 000 §3.3–3.6).
type PaperSync struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PaperSyncSpec `json:"spec"`
	// +kubebuilder:default={}
	// +optional
	Status PaperSyncStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PaperSyncList contains a list of PaperSync.
type PaperSyncList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PaperSync `json:"items"`
}

// GetReconcileStatus implements StatusObject.
func (in *PaperSync) GetReconcileStatus() *ReconcileStatus { return &in.Status.ReconcileStatus }

func init() {
	register(&PaperSync{}, &PaperSyncList{})
}
