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

// NotionIntegrationSpec connects one Notion workspace (seed 000).
type NotionIntegrationSpec struct {
	// OAuth names the Secrets of the Notion public integration (client_id,
	// client_secret) and of the grant (access_token, refresh_token), which
	// the operator writes after the OAuth callback and rotates on refresh.
	// +required
	OAuth OAuthCredentials `json:"oauth"`

	// TokenRefresh is when to rotate the tokens. Notion returns no expiry,
	// so an assumed lifetime applies (seed 000 §3.7.4).
	// +kubebuilder:default={assumedLifetime:"168h",refreshBefore:"24h"}
	// +optional
	TokenRefresh NotionTokenRefresh `json:"tokenRefresh,omitzero"`

	// Database is the Notion database the papers are written to.
	// +kubebuilder:default={name:"ArXiv Papers"}
	// +optional
	Database NotionDatabase `json:"database,omitzero"`

	// WebhookSecretRef names a Secret with a key `token`: the webhook path
	// for the Notion Automation is derived from it (as Flux's Receiver does),
	// so only someone who knows the token can post events. Rotating the
	// token changes the path.
	// +required
	WebhookSecretRef SecretReference `json:"webhookSecretRef"`

	// BackfillInterval is how often the database is queried for pages whose
	// Link is set but whose Title or Publication Year is empty, so that a
	// lost Automation webhook is healed.
	// +kubebuilder:default="1h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m')",message="backfillInterval must be at least 1m"
	// +optional
	BackfillInterval metav1.Duration `json:"backfillInterval,omitzero"`

	// SyncRetention is how long a finished PaperSync is kept before it is
	// deleted. A PaperSync whose retries ran out is rechecked meanwhile
	// (1 minute, doubling to half an hour) and counts its retention from
	// its last failure.
	// +kubebuilder:default="24h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="syncRetention must not be negative"
	// +optional
	SyncRetention metav1.Duration `json:"syncRetention,omitzero"`

	// Suspend stops token refresh, database repair and backfill. Webhook
	// events are still accepted and wait as PaperSyncs.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// NotionTokenRefresh is the refresh timer of seed 000 §3.7.
// +kubebuilder:validation:XValidation:rule="duration(self.refreshBefore) < duration(self.assumedLifetime)",message="tokenRefresh.refreshBefore must be shorter than tokenRefresh.assumedLifetime"
type NotionTokenRefresh struct {
	// AssumedLifetime of an access token from its issue, since Notion states
	// none (seed 000 §3.7.4: 7 days).
	// +kubebuilder:default="168h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1h')",message="tokenRefresh.assumedLifetime must be at least 1h"
	// +optional
	AssumedLifetime metav1.Duration `json:"assumedLifetime,omitzero"`

	// RefreshBefore: refresh when less than this remains (seed 000 §3.7.2:
	// 24 hours).
	// +kubebuilder:default="24h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="tokenRefresh.refreshBefore must be positive"
	// +optional
	RefreshBefore metav1.Duration `json:"refreshBefore,omitzero"`
}

// NotionDatabase identifies the papers database (seed 000 §3.2).
type NotionDatabase struct {
	// Name of the database to find or create.
	// +kubebuilder:default="ArXiv Papers"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2000
	// +optional
	Name string `json:"name,omitempty"`

	// ID pins a database instead of searching by name: a Notion id, 32 hex
	// digits with or without dashes.
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`
	// +optional
	ID string `json:"id,omitempty"`

	// LinkProperty names the property people paste arXiv links into: a
	// URL property, or a text property. A Notion Automation's "Send
	// webhook" action must tick it under the page properties it sends.
	// +kubebuilder:default="Link"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	// +optional
	LinkProperty string `json:"linkProperty,omitempty"`

	// ParentPageID is where to create the database when none is found; by
	// default the duplicated template page, else the first page the
	// integration can reach, top-level or not (seed 000 §3.2.3).
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`
	// +optional
	ParentPageID string `json:"parentPageID,omitempty"`
}

// NotionIntegrationStatus is what the operator learned about the workspace.
type NotionIntegrationStatus struct {
	ReconcileStatus `json:",inline"`

	OAuthConnectStatus `json:",inline"`

	// WorkspaceID of the connected workspace; the Automation webhook body
	// carries it.
	// +optional
	WorkspaceID string `json:"workspaceID,omitempty"`
	// WorkspaceName of the connected workspace.
	// +optional
	WorkspaceName string `json:"workspaceName,omitempty"`
	// BotID of the grant (Notion's key for an integration installation).
	// +optional
	BotID string `json:"botID,omitempty"`
	// DuplicatedTemplateID is the page Notion duplicated from the
	// integration's template during OAuth, when the person chose it.
	// +optional
	DuplicatedTemplateID string `json:"duplicatedTemplateID,omitempty"`

	// DatabaseID of the "ArXiv Papers" database.
	// +optional
	DatabaseID string `json:"databaseID,omitempty"`
	// DatabaseURL opens the database in Notion.
	// +optional
	DatabaseURL string `json:"databaseURL,omitempty"`

	// TokenStatus records the access token: for Notion, tokenExpiresAt is
	// an estimate (issue time plus spec.tokenRefresh.assumedLifetime).
	TokenStatus `json:",inline"`

	// WebhookPath is the path on the webhook server to give a Notion
	// Automation's "Send webhook" action; it is derived from the webhook
	// token and reveals nothing about it.
	// +optional
	WebhookPath string `json:"webhookPath,omitempty"`

	// EventsPath is the path on the webhook server to give Notion as the
	// public integration's webhook subscription URL (connection webhooks:
	// no Automation needed). It is derived from the OAuth client's id and
	// secret, so every integration of one public integration shares it,
	// and it reveals neither.
	// +optional
	EventsPath string `json:"eventsPath,omitempty"`

	// LastBackfillAt is when the database was last scanned for pages
	// missing their metadata.
	// +optional
	LastBackfillAt *metav1.Time `json:"lastBackfillAt,omitempty"`

	// PapersSynced counts pages filled in since the object was created.
	// +optional
	PapersSynced int64 `json:"papersSynced,omitempty"`
	// SyncFailures counts PaperSyncs that ended Failed.
	// +optional
	SyncFailures int64 `json:"syncFailures,omitempty"`
	// TokenRefreshes counts successful token rotations.
	// +optional
	TokenRefreshes int64 `json:"tokenRefreshes,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=notion,categories=switchboard
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Workspace",type=string,JSONPath=`.status.workspaceName`
// +kubebuilder:printcolumn:name="Database",type=string,JSONPath=`.status.databaseID`,priority=1
// (A string, not a date: kubectl shows a future date column as <invalid>.)
// +kubebuilder:printcolumn:name="Token-Expires",type=string,JSONPath=`.status.tokenExpiresAt`,priority=1
// +kubebuilder:printcolumn:name="Synced",type=integer,JSONPath=`.status.papersSynced`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// NotionIntegration connects a Notion workspace through OAuth, keeps its
// rotating tokens alive, owns the "ArXiv Papers" database and receives the
// Notion Automation webhook that fills pages with arXiv metadata (seed 000).
type NotionIntegration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec NotionIntegrationSpec `json:"spec"`
	// +kubebuilder:default={}
	// +optional
	Status NotionIntegrationStatus `json:"status,omitempty"`
}
