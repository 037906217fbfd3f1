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

// ConnectionPhase is the connection state of seed 004 §4.
// +kubebuilder:validation:Enum=Active;Revoked;Error
type ConnectionPhase string

const (
	// ConnectionActive: rows are appended.
	ConnectionActive ConnectionPhase = "Active"
	// ConnectionRevoked: disconnected (spec.suspend, or no grant yet);
	// ingest answers 409.
	ConnectionRevoked ConnectionPhase = "Revoked"
	// ConnectionError: Google answered 401/403; a person must re-authorise;
	// ingest answers 409.
	ConnectionError ConnectionPhase = "Error"
)

// SheetConnectionSpec appends finished time-tracker sessions to one sheet
// of a Google spreadsheet (seed 004).
type SheetConnectionSpec struct {
	// SpreadsheetID from the spreadsheet's URL
	// (https://docs.google.com/spreadsheets/d/{spreadsheetID}/edit).
	// +kubebuilder:validation:MinLength=10
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]+$`
	// +required
	SpreadsheetID string `json:"spreadsheetID"`

	// Sheet is the tab rows are appended to.
	// +required
	Sheet SheetSelector `json:"sheet"`

	// OAuth names the Google OAuth client Secret (client_id, client_secret)
	// and the token Secret (access_token, refresh_token, expiry). The grant
	// needs the https://www.googleapis.com/auth/spreadsheets scope.
	// +required
	OAuth OAuthCredentials `json:"oauth"`

	// TokenRefreshBefore: refresh the access token when less than this
	// remains before its expiry (seed 004 §5: 5 minutes).
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('1h')",message="tokenRefreshBefore must be between 0s (exclusive) and 1h"
	// +optional
	TokenRefreshBefore metav1.Duration `json:"tokenRefreshBefore,omitzero"`

	// ColumnMapping maps session fields to columns: a column letter (A to
	// ZZZ) or the header text in row 1 (at most 128 characters). The fields
	// are title, startedAt, endedAt, durationSeconds (all four required),
	// id, project, notes, tags, skill and intensity. Two fields may not
	// share a column. A session is never appended twice: a row whose
	// append answer was lost is found again by the id column when id is
	// mapped (recommended), else by its title, startedAt, endedAt and
	// durationSeconds.
	// +kubebuilder:validation:MinProperties=4
	// +kubebuilder:validation:MaxProperties=10
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['id', 'title', 'startedAt', 'endedAt', 'durationSeconds', 'project', 'notes', 'tags', 'skill', 'intensity'])",message="columnMapping keys must be session fields: id, title, startedAt, endedAt, durationSeconds, project, notes, tags, skill, intensity"
	// +kubebuilder:validation:XValidation:rule="['title', 'startedAt', 'endedAt', 'durationSeconds'].all(k, k in self)",message="columnMapping must map the required fields title, startedAt, endedAt and durationSeconds"
	// +kubebuilder:validation:XValidation:rule="self.all(k, self.all(j, k == j || self[k] != self[j]))",message="columnMapping values must be unique: two fields cannot write to the same column"
	// +required
	ColumnMapping map[string]ColumnRef `json:"columnMapping"`

	// IngestTokenSecretRef names a Secret with a key `token`: the time
	// tracker sends it as a Bearer token when it posts a finished session.
	// +required
	IngestTokenSecretRef SecretReference `json:"ingestTokenSecretRef"`

	// SyncRetention is how long a Succeeded SheetSync is kept before it is
	// deleted (the sync log of seed 004 §2 SyncLog).
	// +kubebuilder:default="168h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="syncRetention must not be negative"
	// +optional
	SyncRetention metav1.Duration `json:"syncRetention,omitzero"`

	// Suspend disconnects (seed 004 §4 active → revoked): the refresh token
	// is revoked at Google's revocation endpoint and removed from the token
	// Secret, the phase becomes Revoked, ingest answers 409 and pending
	// syncs wait. Setting it back to false offers the connect link again;
	// the connection is Active once a new grant is stored.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// ColumnRef is a column letter (A–ZZZ) or a header name from row 1.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=128
// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Z]{1,3}$') || (self.trim() == self && size(self) > 0)",message="a column is a column letter (A to ZZZ) or a header name of at most 128 characters without leading or trailing spaces"
type ColumnRef string

// SheetSelector picks one sheet (tab) of a spreadsheet: by its numeric
// sheetId or by its title. Exactly one is set.
// +kubebuilder:validation:XValidation:rule="has(self.id) != has(self.title)",message="sheet needs exactly one of id and title"
type SheetSelector struct {
	// ID is the sheet's numeric sheetId (the gid= in its URL). A tab
	// selected by id may be renamed: the new title is looked up when an
	// append is refused for the old one, and on every re-read.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ID *int64 `json:"id,omitempty"`

	// Title of the sheet tab. Renaming the tab stops the connection
	// (SheetNotFound) until this follows.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	// +optional
	Title string `json:"title,omitempty"`
}

// SheetConnectionStatus is the connection state and what the operator
// learned about the sheet.
type SheetConnectionStatus struct {
	ReconcileStatus `json:",inline"`

	OAuthConnectStatus `json:",inline"`

	// Phase: Active, Revoked or Error (seed 004 §4).
	// +optional
	Phase ConnectionPhase `json:"phase,omitempty"`

	// GoogleUserID is the Google account of the grant: the sub claim of the
	// id_token Google returned with it (seed 004 §2 googleUserId).
	// +optional
	GoogleUserID string `json:"googleUserID,omitempty"`

	// IngestPath is the webhook server's path the time tracker posts
	// finished sessions to, with the ingest token as a Bearer token. It is
	// derived from the ingest token, so it changes when the token does and
	// reveals nothing about it.
	// +optional
	IngestPath string `json:"ingestPath,omitempty"`

	// RefusedGrant is set when Google answered 401 or 403 to a call made
	// with the current grant (phase Error): the grant's time of issue and
	// what Google said. It is cleared when a new grant is stored.
	// +optional
	RefusedGrant *RefusedGrant `json:"refusedGrant,omitempty"`

	// SheetID resolved from spec.sheet.
	// +optional
	SheetID *int64 `json:"sheetID,omitempty"`
	// SheetTitle resolved from spec.sheet (cached display name).
	// +optional
	SheetTitle string `json:"sheetTitle,omitempty"`
	// TimeZone of the spreadsheet (an IANA name such as Asia/Tokyo):
	// startedAt and endedAt are written as date-times in it.
	// +optional
	TimeZone string `json:"timeZone,omitempty"`

	// ResolvedColumns maps each field to the column letter it writes to,
	// after header names are looked up in row 1.
	// +optional
	ResolvedColumns map[string]string `json:"resolvedColumns,omitempty"`
	// MissingHeaders are mapped header names not found in row 1.
	// +listType=atomic
	// +optional
	MissingHeaders []string `json:"missingHeaders,omitempty"`

	// TokenStatus records the access token: tokenExpiresAt as Google
	// stated it.
	TokenStatus `json:",inline"`
	// LastAppendAt is when rows were last appended.
	// +optional
	LastAppendAt *metav1.Time `json:"lastAppendAt,omitempty"`
	// RowsAppended counts rows written since the object was created.
	// +optional
	RowsAppended int64 `json:"rowsAppended,omitempty"`
	// SyncFailures counts SheetSyncs that ended Failed.
	// +optional
	SyncFailures int64 `json:"syncFailures,omitempty"`
}

// RefusedGrant records that Google refused the current grant.
type RefusedGrant struct {
	// GrantedAt identifies the grant: when the OAuth callback stored it.
	// +optional
	GrantedAt string `json:"grantedAt,omitempty"`
	// At is when Google refused it.
	// +required
	At metav1.Time `json:"at"`
	// Message is Google's answer, without any token.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sheetconn,categories=switchboard
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Spreadsheet",type=string,JSONPath=`.spec.spreadsheetID`,priority=1
// +kubebuilder:printcolumn:name="Sheet",type=string,JSONPath=`.status.sheetTitle`
// +kubebuilder:printcolumn:name="Rows",type=integer,JSONPath=`.status.rowsAppended`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// SheetConnection appends each finished time-tracker session as one row of
// a Google Sheet, with a column mapping, idempotently (seed 004).
type SheetConnection struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SheetConnectionSpec `json:"spec"`
	// +kubebuilder:default={}
	// +optional
	Status SheetConnectionStatus `json:"status,omitempty"`
}
