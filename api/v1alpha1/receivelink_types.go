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

// MaxLinkLifetime is the longest a share link may live (seed 003:
// `receive:token:{short}` lives until the link expires, at most 14 days).
const MaxLinkLifetime = "336h"

// LinkPhase is Active until the link expires, then Expired.
// +kubebuilder:validation:Enum=Active;Expired
type LinkPhase string

const (
	LinkActive  LinkPhase = "Active"
	LinkExpired LinkPhase = "Expired"
)

// ReceiveLinkSpec shares one stored file through an expiring short link
// (seed 003).
// +kubebuilder:validation:XValidation:rule="has(self.ttl) != has(self.expiresAt)",message="set exactly one of ttl and expiresAt"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.ttl) || !has(self.ttl) || self.ttl == oldSelf.ttl",message="ttl is immutable; set expiresAt on a new ReceiveLink to change when it expires"
type ReceiveLinkSpec struct {
	// Blob is the object-storage location of the shared file. It is
	// deleted when the link expires, if the link was ever live (see
	// deleteBlobIfNeverLive).
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="blob is immutable; create a new ReceiveLink for another file"
	// +required
	Blob BlobLocation `json:"blob"`

	// TTL is the link's lifetime from creation, at most 336h (14 days).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('336h')",message="ttl must be positive and at most 336h (14 days)"
	// +optional
	TTL *metav1.Duration `json:"ttl,omitzero"`

	// ExpiresAt is the instant the link expires; at most 14 days after the
	// object's creation (checked by the controller, which marks the object
	// Stalled otherwise, since admission rules cannot read the clock).
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`

	// Owner is who shared the file (free text, for the audit trail).
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Owner string `json:"owner,omitempty"`

	// Receiver is who the link is for. With a Discord user id, only that
	// Discord user, signed in through the webhook's Discord sign-in, can
	// resolve the link.
	// +optional
	Receiver Receiver `json:"receiver,omitzero"`

	// EncryptionKeySecretRef names the Secret with the AES-256-GCM keys
	// that seal the long token (`v1.{iv}.{ciphertext+tag}`): key `current`
	// names the active key id, and each key id maps to a base64 32-byte key,
	// so keys can be rotated while older links still resolve. Defaults to
	// the manager's --link-key-secret.
	// +optional
	EncryptionKeySecretRef *SecretReference `json:"encryptionKeySecretRef,omitempty"`

	// DeletionPolicy says what deleting the ReceiveLink before it expires
	// does to the blob: Delete (the default) deletes it, as expiry would;
	// Retain keeps it (as external-secrets' and Crossplane's deletion
	// policies let a person choose). At expiry the blob of a link that was
	// live is always deleted. A link that was never live deletes its blob
	// under neither policy unless deleteBlobIfNeverLive is set.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// DeleteBlobIfNeverLive lets the link delete its blob at expiry (or
	// when the link is deleted) even though it was never live: it never
	// became Active, because spec.expiresAt was already past when it was
	// created, or because it stayed Stalled (blob missing, keys invalid)
	// until it expired. By default such a link deletes nothing: it expires
	// with Ready=False reason NeverLive and the blob is kept, so a typo in
	// spec.expiresAt cannot destroy a file nobody could download.
	// +optional
	DeleteBlobIfNeverLive bool `json:"deleteBlobIfNeverLive,omitempty"`

	// Retention is how long an Expired link object is kept before it is
	// deleted; until then its short link answers 410 Gone rather than 404.
	// +kubebuilder:default="24h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="retention must not be negative"
	// +optional
	Retention metav1.Duration `json:"retention,omitzero"`
}

// Receiver is who a link is for.
type Receiver struct {
	// Name of the receiver (free text, for the audit trail).
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Name string `json:"name,omitempty"`

	// DiscordUserID restricts the link to one Discord user (a snowflake,
	// 17–20 digits): resolving it then needs a Discord sign-in as that user
	// (seed 003's sess:{sid}); anyone else gets 403.
	// +kubebuilder:validation:Pattern=`^[0-9]{17,20}$`
	// +optional
	DiscordUserID string `json:"discordUserID,omitempty"`
}

// DeletionPolicy is what deleting a live ReceiveLink does to its blob.
// +kubebuilder:validation:Enum=Delete;Retain
type DeletionPolicy string

const (
	// DeletionPolicyDelete deletes the blob with the link.
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyRetain keeps the blob when the link is deleted early.
	DeletionPolicyRetain DeletionPolicy = "Retain"
)

// BlobLocation is an object in an S3-compatible bucket.
type BlobLocation struct {
	// Bucket name (S3 rules: 3–63 lowercase letters, digits, dots, hyphens).
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`
	// +required
	Bucket string `json:"bucket"`

	// Key of the object, for example user_prize/{owner}/{receiver}/{file}.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.contains('..')",message="blob key must be relative and must not contain '..'"
	// +required
	Key string `json:"key"`

	// Region of the bucket; empty for the storage's default.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Region string `json:"region,omitempty"`

	// CredentialsSecretRef names a Secret with `access_key_id` and
	// `secret_access_key`. The endpoint is the manager's `--upstream s3=URL`.
	// +required
	CredentialsSecretRef SecretReference `json:"credentialsSecretRef"`
}

// ReceiveLinkStatus is the link's state and audit counters.
type ReceiveLinkStatus struct {
	ReconcileStatus `json:",inline"`

	// Phase: Active or Expired.
	// +optional
	Phase LinkPhase `json:"phase,omitempty"`

	// ExpiresAt is when the link stops resolving.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`

	// ShareSecretName is the Secret (owned by this link) holding the share
	// URL (key share_url), the short token (short_token) and the sealed
	// long token (long_token); they are never written to status. It is
	// deleted at expiry.
	// +optional
	ShareSecretName string `json:"shareSecretName,omitempty"`

	// KeyID is the id of the encryption key that sealed the long token (not
	// the key).
	// +optional
	KeyID string `json:"keyID,omitempty"`

	// ResolveCount counts successful resolves of the short link.
	// +optional
	ResolveCount int64 `json:"resolveCount,omitempty"`
	// LastResolvedAt is when the link last resolved.
	// +optional
	LastResolvedAt *metav1.Time `json:"lastResolvedAt,omitempty"`
	// BlobDeletedAt is when the blob was deleted after expiry; unset for a
	// link that expired without ever being live (Ready reason NeverLive),
	// whose blob is kept.
	// +optional
	BlobDeletedAt *metav1.Time `json:"blobDeletedAt,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rlink,categories=switchboard
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// (A string, not a date: kubectl shows a future date column as <invalid>.)
// +kubebuilder:printcolumn:name="Expires",type=string,JSONPath=`.status.expiresAt`
// +kubebuilder:printcolumn:name="Resolves",type=integer,JSONPath=`.status.resolveCount`
// +kubebuilder:printcolumn:name="Key",type=string,JSONPath=`.spec.blob.key`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ReceiveLink shares a stored file through a short, expiring link whose
// long token is sealed with AES-GCM; at expiry the blob and the token are
// deleted (seed 003).
type ReceiveLink struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ReceiveLinkSpec `json:"spec"`
	// +kubebuilder:default={}
	// +optional
	Status ReceiveLinkStatus `json:"status,omitempty"`
}
