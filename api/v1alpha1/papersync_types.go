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

// PaperSyncSpec is one Notion event: fill this page with the metadata of
// this arXiv paper (seed 000 §3.3), or, for a connection-webhook event
// that names only the page, read the page first and fill it when its Link
// holds an arXiv link. It is created by the webhook server (or the
// integration's backfill) and never changes.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="PaperSync spec is immutable; create a new PaperSync instead"
// +kubebuilder:validation:XValidation:rule="has(self.event) || (has(self.link) && has(self.arxivID))",message="a PaperSync needs link and arxivID, or an event whose page is read for them"
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
	// Empty for a sync made from a connection-webhook event: the page is
	// read for it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('arxiv\\\\.org/(abs|pdf)/')",message="link must be an arXiv abstract or PDF URL, such as https://arxiv.org/abs/2301.12345"
	// +optional
	Link string `json:"link,omitempty"`

	// ArxivID without version, new style (2301.12345) or old style
	// (hep-th/9901001), as parsed from link by the webhook. Empty with
	// link.
	// +kubebuilder:validation:Pattern=`^([0-9]{4}\.[0-9]{4,5}|[a-z-]+(\.[A-Z]{2})?/[0-9]{7})$`
	// +optional
	ArxivID string `json:"arxivID,omitempty"`

	// Event is the Notion connection-webhook event this sync answers,
	// when it named only the page: the sync reads the page and fills it
	// when its Link holds an arXiv link and the page lacks that paper's
	// metadata or the event changed the Link.
	// +optional
	Event *NotionPageEvent `json:"event,omitempty"`
}

// NotionPageEvent is what a Notion connection-webhook event says of a
// page (developers.notion.com/reference/webhooks-events-delivery).
type NotionPageEvent struct {
	// ID of the event: Notion's retries of one event carry the same id.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +required
	ID string `json:"id"`
	// Type of the event, such as page.created or page.properties_updated.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +required
	Type string `json:"type"`
	// UpdatedProperties are the ids of the properties the event changed
	// (page.properties_updated), as the page object's properties carry
	// them.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	// +optional
	UpdatedProperties []string `json:"updatedProperties,omitempty"`
}

// PaperSyncStatus is the outcome of the sync.
type PaperSyncStatus struct {
	ReconcileStatus `json:",inline"`
	// ChildStatus: phase, attempts, lastError, nextAttemptAt and
	// completedAt, as every child has them.
	ChildStatus `json:",inline"`

	// Link the page held when a connection event's sync read it; empty
	// for a sync whose spec has one.
	// +optional
	Link string `json:"link,omitempty"`
	// ArxivID parsed from status.link.
	// +optional
	ArxivID string `json:"arxivID,omitempty"`
	// HandedTo names the PaperSync of the page and paper that an event's
	// sync handed its page to: the one that fills it (an Automation's
	// request or the backfill for the same edit makes the same one, so
	// the page is filled once).
	// +optional
	HandedTo string `json:"handedTo,omitempty"`
	// Skipped says why the page needed nothing, for a sync that read it:
	// its Link is empty or not an arXiv link, it is in another database,
	// or it already holds the paper. The sync is Succeeded.
	// +optional
	Skipped string `json:"skipped,omitempty"`
	// Title written to the page (cut at 2000 characters as Notion counts
	// them: UTF-16 code units, two for a character beyond U+FFFF).
	// +optional
	Title string `json:"title,omitempty"`
	// PublicationYear written to the page.
	// +optional
	PublicationYear int32 `json:"publicationYear,omitempty"`
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
