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

// Labels of the NotionIntegrations a sign-up makes. A restore keeps them,
// so the sign-up finds each workspace's integration again.
const (
	// SignUpLabel names the NotionSignup that made an integration.
	SignUpLabel = "switchboard.dev/signup"
	// WorkspaceLabel holds the Notion workspace id of an integration a
	// sign-up made: one integration per workspace.
	WorkspaceLabel = "switchboard.dev/notion-workspace"
)

// NotionSignupSpec opens self-service sign-up in its namespace (seed 000
// §1.1, §3.1.1): anyone with a Notion account opens the public start URL
// (status.url), allows access in Notion, and gets a NotionIntegration of
// their own here, made from this spec, with no kubectl by anyone.
type NotionSignupSpec struct {
	// OAuth names the Secret of the Notion public integration (keys
	// `client_id` and `client_secret`) every integration made by this
	// sign-up connects with. Its OAuth redirect URI in Notion is the
	// webhook's /oauth/notion/callback, as for a connect link.
	// +required
	OAuth NotionSignupOAuth `json:"oauth"`

	// Template is what every integration this sign-up makes gets. Fields
	// left out take the NotionIntegration's defaults.
	// +optional
	Template NotionSignupTemplate `json:"template,omitzero"`

	// MaxIntegrations bounds the integrations this sign-up makes: a new
	// Notion workspace past it is refused with a page that says so, and
	// nothing is created. A workspace that signed up already may always
	// sign up again (it reconnects its integration).
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +optional
	MaxIntegrations int32 `json:"maxIntegrations,omitempty"`

	// Closed stops new sign-ups: the start URL answers that sign-up is
	// closed. The integrations already made keep working; deleting one is
	// a platform engineer's act (or its workspace revoking access in
	// Notion, which the integration reports as ReauthRequired).
	// +optional
	Closed bool `json:"closed,omitempty"`
}

// NotionSignupOAuth names the public integration's client Secret.
type NotionSignupOAuth struct {
	// ClientSecretRef names the Secret with keys `client_id` and
	// `client_secret`, in this namespace.
	// +required
	ClientSecretRef SecretReference `json:"clientSecretRef"`
}

// NotionSignupTemplate is the spec every integration a sign-up makes
// starts from; each integration then belongs to its platform team like
// any other, and editing one does not change the others.
type NotionSignupTemplate struct {
	// Database is the papers database each integration finds or creates
	// under the first page its person shared.
	// +optional
	Database NotionSignupDatabase `json:"database,omitzero"`

	// TokenRefresh is each integration's spec.tokenRefresh.
	// +optional
	TokenRefresh *NotionTokenRefresh `json:"tokenRefresh,omitempty"`

	// BackfillInterval is each integration's spec.backfillInterval.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m')",message="template.backfillInterval must be at least 1m"
	// +optional
	BackfillInterval *metav1.Duration `json:"backfillInterval,omitempty"`

	// SyncRetention is each integration's spec.syncRetention.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="template.syncRetention must not be negative"
	// +optional
	SyncRetention *metav1.Duration `json:"syncRetention,omitempty"`
}

// NotionSignupDatabase is the part of spec.database every person's
// integration shares (an id or a parent page is each workspace's own).
type NotionSignupDatabase struct {
	// Name of the database each integration finds or creates.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2000
	// +optional
	Name string `json:"name,omitempty"`

	// LinkProperty names the property people paste arXiv links into.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	// +optional
	LinkProperty string `json:"linkProperty,omitempty"`
}

// NotionSignupStatus is what the sign-up publishes.
type NotionSignupStatus struct {
	ReconcileStatus `json:",inline"`

	// URL is the public start URL to hand to people: whoever opens it
	// may sign up while the sign-up is open.
	// +optional
	URL string `json:"url,omitempty"`

	// ClientID is the public integration's client id (key `client_id` of
	// the client Secret), which the consent page's URL carries anyway.
	// +optional
	ClientID string `json:"clientID,omitempty"`

	// Integrations counts the NotionIntegrations this sign-up made that
	// exist now.
	// +optional
	Integrations int32 `json:"integrations,omitempty"`

	// Open tells whether the start URL takes new workspaces: not closed
	// and below maxIntegrations.
	// +optional
	Open bool `json:"open,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=notionsignup,categories=switchboard
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Open",type=boolean,JSONPath=`.status.open`
// +kubebuilder:printcolumn:name="Integrations",type=integer,JSONPath=`.status.integrations`
// +kubebuilder:printcolumn:name="Max",type=integer,JSONPath=`.spec.maxIntegrations`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// NotionSignup lets researchers sign themselves up (seed 000 §1.1): its
// public URL starts Notion's consent, and the operator makes one
// NotionIntegration per Notion workspace in this namespace.
type NotionSignup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec NotionSignupSpec `json:"spec"`

	// +kubebuilder:default={}
	// +optional
	Status NotionSignupStatus `json:"status,omitempty"`
}
