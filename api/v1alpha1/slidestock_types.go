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

// SlidePhase is where a SlideStock is in the lifecycle of seed 001 §1:
// pending → ready / failed.
// +kubebuilder:validation:Enum=Pending;Ready;Failed
type SlidePhase string

const (
	// SlidePending: the metadata has not been fetched yet, or a transient
	// failure is being retried.
	SlidePending SlidePhase = "Pending"
	// SlideReady: the embed URL (and what else the provider gave) is known.
	SlideReady SlidePhase = "Ready"
	// SlideFailed: a permanent error, or every attempt failed (seed 001 §7).
	SlideFailed SlidePhase = "Failed"
)

// SlideProvider is the site a slide deck is hosted on (seed 001 §5.1).
// +kubebuilder:validation:Enum=speakerdeck;docswell;google_slides
type SlideProvider string

const (
	ProviderSpeakerDeck  SlideProvider = "speakerdeck"
	ProviderDocswell     SlideProvider = "docswell"
	ProviderGoogleSlides SlideProvider = "google_slides"
)

// SlideStockSpec is a slide deck a person wants to keep with its embed
// metadata.
type SlideStockSpec struct {
	// The CEL rule on url is internal/upstream/slides' grammar, rendered by
	// slides.AdmissionRule (backslashes doubled here): the API server admits
	// exactly the URLs the controller's parser accepts. Change the grammar
	// there and paste the rule back; TestCRDRuleIsTheGrammar fails while
	// they differ.

	// URL of the presentation as copied from the browser: a SpeakerDeck deck
	// (https://speakerdeck.com/{user}/{slug}), a Docswell slide
	// (https://www.docswell.com/s/{user}/{slideId}) or a Google Slides
	// presentation (https://docs.google.com/presentation/d/{id}/...).
	// Query strings, fragments and trailing slashes are accepted and
	// dropped from the canonical URL; the scheme and host are read without
	// case (RFC 3986). Changing it starts the fetch over.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="(self.trim().lowerAscii().matches(r'^https?://(www\\.)?speakerdeck\\.com(:(80|443))?/') && self.trim().matches(r'^[A-Za-z]+://[^/?#]+/+([A-Za-z0-9][A-Za-z0-9_.-]*)/+([A-Za-z0-9][A-Za-z0-9_.-]*)/*([?#][^[:cntrl:]]*)?$') && !self.trim().lowerAscii().matches(r'^https?://(www\\.)?speakerdeck\\.com(:(80|443))?/+(player|embed|c|signin|signup|login|logout|search|features|pro|faq|terms|privacy|assets|oembed\\.json|oembed|account|new|users|categories|about|help)/')) || (self.trim().lowerAscii().matches(r'^https?://(www\\.)?docswell\\.com(:(80|443))?/') && self.trim().matches(r'^[A-Za-z]+://[^/?#]+/+s/+([A-Za-z0-9_-]+)/+([A-Za-z0-9]+)(-[^/?#[:cntrl:]]*)?/*([?#][^[:cntrl:]]*)?$')) || (self.trim().lowerAscii().matches(r'^https?://docs\\.google\\.com(:(80|443))?/') && self.trim().matches(r'^[A-Za-z]+://[^/?#]+/+presentation(/+u/+[0-9]+)?/+d/+(e/+)?([A-Za-z0-9_-]{20,})([/?#][^[:cntrl:]]*)?$'))",message="url must be a presentation on SpeakerDeck (https://speakerdeck.com/{user}/{slug}), Docswell (https://www.docswell.com/s/{user}/{slideId}) or Google Slides (https://docs.google.com/presentation/d/{id})"
	// +required
	URL string `json:"url"`

	// Memo is a free-form note kept with the stock; the operator does not
	// read it.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Memo string `json:"memo,omitempty"`

	// Suspend stops the controller from fetching; the status is kept.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// SlideStockStatus is the fetched metadata and the retry state.
type SlideStockStatus struct {
	ReconcileStatus `json:",inline"`

	// Phase: Pending, Ready or Failed (seed 001 §8.3).
	// +optional
	Phase SlidePhase `json:"phase,omitempty"`

	// Provider detected from spec.url.
	// +optional
	Provider SlideProvider `json:"provider,omitempty"`

	// CanonicalURL is the one URL for the presentation that the fetch used
	// (the only URL the operator ever requests, seed 001 §10.1).
	// +optional
	CanonicalURL string `json:"canonicalURL,omitempty"`

	// ObservedURL is the spec.url the status describes; when spec.url
	// changes the stock goes back to Pending.
	// +optional
	ObservedURL string `json:"observedURL,omitempty"`

	// Title of the presentation; empty when the provider did not give one
	// (Google Slides titles are best-effort, seed 001 §4.3).
	// +optional
	Title string `json:"title,omitempty"`

	// AuthorName as the provider gives it; always empty for Google Slides.
	// +optional
	AuthorName string `json:"authorName,omitempty"`

	// EmbedURL is the URL to put in an iframe.
	// +optional
	EmbedURL string `json:"embedURL,omitempty"`

	// ThumbnailURL is empty unless the provider returns one (seed 001 §2.3).
	// +optional
	ThumbnailURL string `json:"thumbnailURL,omitempty"`

	// Attempts counts fetches for the current URL, at most 4 (one try and
	// three retries, seed 001 §7.1).
	// +optional
	Attempts int32 `json:"attempts,omitempty"`

	// LastError is the last failure, for a person; it never holds a
	// credential.
	// +optional
	LastError string `json:"lastError,omitempty"`

	// LastFetchedAt is when the last fetch finished, successful or not.
	// +optional
	LastFetchedAt *metav1.Time `json:"lastFetchedAt,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=stock;stocks,categories=switchboard
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.status.provider`
// +kubebuilder:printcolumn:name="Title",type=string,JSONPath=`.status.title`,priority=0
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// SlideStock keeps one slide deck (SpeakerDeck, Docswell or Google Slides)
// with its oEmbed metadata: title, author and embed URL (seed 001).
type SlideStock struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SlideStockSpec `json:"spec"`
	// +kubebuilder:default={}
	// +optional
	Status SlideStockStatus `json:"status,omitempty"`
}
