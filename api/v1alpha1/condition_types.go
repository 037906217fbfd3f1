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

// Condition types. Ready, Reconciling and Stalled follow kstatus
// (sigs.k8s.io/cli-utils/pkg/kstatus): Reconciling=True while the
// controller works towards the spec, Stalled=True when it cannot make
// progress without a person, Ready=True when the object does what its spec
// asks.
const (
	// ReadyCondition is True when the object does what its spec asks.
	ReadyCondition = "Ready"
	// ReconcilingCondition is True while the controller is still working
	// towards the spec (a first fetch, a retry, a renewal in flight).
	ReconcilingCondition = "Reconciling"
	// StalledCondition is True when the controller cannot make progress
	// until a person changes something (an invalid spec, a missing Secret,
	// a revoked grant).
	StalledCondition = "Stalled"

	// AuthenticatedCondition (NotionIntegration, CalendarWatch,
	// SheetConnection) is True while the OAuth grant in the token Secret
	// works; False with ReauthRequiredReason when a person must connect again.
	AuthenticatedCondition = "Authenticated"
	// DatabaseReadyCondition (NotionIntegration) is True when the
	// "ArXiv Papers" database exists with every property of seed 000 §3.2.1.
	DatabaseReadyCondition = "DatabaseReady"
	// ChannelReadyCondition (CalendarWatch) is True while a push channel is
	// open and not past its expiration.
	ChannelReadyCondition = "ChannelReady"
	// SyncedCondition (CalendarWatch) is True when the last incremental sync
	// succeeded.
	SyncedCondition = "Synced"
	// DeliveredCondition (CalendarWatch with sink.http) is True when the
	// HTTP sink has accepted every cancelled event.
	DeliveredCondition = "Delivered"
	// HeaderValidCondition (SheetConnection) is True when every mapped header
	// name exists in row 1 of the sheet (seed 004 §2 ColumnMappingConfiguration).
	HeaderValidCondition = "HeaderValid"
)

// Condition reasons. A reason is CamelCase, stable, and safe to match on in
// alerts; the condition message carries the detail for a person.
const (
	// SucceededReason: the last reconcile did everything the spec asks.
	SucceededReason = "Succeeded"
	// RenewalRefusedReason (CalendarWatch, ChannelReady True): Google
	// refused to open the channel that renews the open one; the open one
	// still works until its expiry, which the message gives.
	RenewalRefusedReason = "RenewalRefused"
	// SkippedReason (PaperSync): the event's page needed nothing (its
	// Link is empty or not arXiv, it is in another database, or it
	// already holds its paper); status.skipped says which.
	SkippedReason = "Skipped"
	// ProgressingReason: work is under way (first fetch, token refresh,
	// channel renewal).
	ProgressingReason = "Progressing"
	// SuspendedReason: spec.suspend is true; the controller does nothing.
	SuspendedReason = "Suspended"
	// InvalidSpecReason: the spec passed admission but cannot be acted on
	// (a rule CEL cannot judge, such as an expiresAt more than 14 days after
	// creation). A person must fix the spec.
	InvalidSpecReason = "InvalidSpec"
	// SecretNotFoundReason: a referenced Secret or one of its keys is missing.
	SecretNotFoundReason = "SecretNotFound"
	// ConnectSecretConflictReason: a Secret named `<name>-oauth-connect`
	// exists and this object does not own it, so the operator cannot keep
	// the connect link there; rename or delete that Secret.
	ConnectSecretConflictReason = "ConnectSecretConflict"
	// ReauthRequiredReason: the provider refused the grant (401,
	// invalid_grant that no other writer explains); the token Secret is
	// kept and a person must connect again (seed 000 §3.7.6, seed 004 §4).
	ReauthRequiredReason = "ReauthRequired"
	// SecretReadFailedReason: reading or writing a Secret failed for a
	// reason other than its absence (an API-server error); it is retried.
	SecretReadFailedReason = "SecretReadFailed"
	// TokenRefreshFailedReason: a token refresh failed for a transient
	// reason; it is retried on the next timer.
	TokenRefreshFailedReason = "TokenRefreshFailed"
	// UpstreamUnavailableReason: the upstream API answered 5xx, timed out or
	// throttled; the controller retries with backoff.
	UpstreamUnavailableReason = "UpstreamUnavailable"
	// UpstreamRejectedReason: the upstream API refused the request for good
	// (404, 403, another 4xx, or an unparsable answer).
	UpstreamRejectedReason = "UpstreamRejected"
	// RetriesExhaustedReason: every allowed attempt failed transiently; the
	// object is Failed and a Warning Event records the last error.
	RetriesExhaustedReason = "RetriesExhausted"
	// PaperNotFoundReason (PaperSync): arXiv has no paper with the link's
	// identifier (it answered the batch with an entry without an id).
	PaperNotFoundReason = "PaperNotFound"
	// DependencyNotReadyReason: a referenced object (the NotionIntegration of
	// a PaperSync, the SheetConnection of a SheetSync) is not Ready yet.
	DependencyNotReadyReason = "DependencyNotReady"
	// ExpiredReason (ReceiveLink): the link is past its expiry; the blob and
	// the short token are deleted.
	ExpiredReason = "Expired"
	// NeverLiveReason (ReceiveLink): the link expired before it was ever
	// live (spec.expiresAt already past at creation, or never Ready before
	// its expiry). It deleted nothing: the blob is kept unless
	// spec.deleteBlobIfNeverLive says otherwise.
	NeverLiveReason = "NeverLive"
	// BlobNotFoundReason (ReceiveLink): the storage has no object at
	// spec.blob; the link is not minted, and the controller looks again on
	// a slow timer.
	BlobNotFoundReason = "BlobNotFound"
	// ExpiryTooFarReason (ReceiveLink): spec.expiresAt is more than 14 days
	// after the link's creation (seed 003's limit).
	ExpiryTooFarReason = "ExpiryTooFar"
	// TokenCollisionReason (ReceiveLink): five fresh short tokens in a row
	// were already taken (seed 003's storeShortToken tries five times).
	TokenCollisionReason = "TokenCollision"
	// KeysInvalidReason (ReceiveLink): the encryption key Secret is missing,
	// names no current key, or holds a key that is not 32 bytes.
	KeysInvalidReason = "KeysInvalid"
	// StorageRefusedReason (ReceiveLink): the storage refused the link's
	// credentials (403).
	StorageRefusedReason = "StorageRefused"
	// ChannelRefusedReason (CalendarWatch): Google refused to open a push
	// channel (the address, the calendar, the quota); the backup sync goes
	// on and the channel is tried again later.
	ChannelRefusedReason = "ChannelRefused"
	// NoPublicURLReason (CalendarWatch, ChannelReady=False): the manager has
	// no --public-url, so no push channel can be opened; the backup sync
	// alone keeps appointments true.
	NoPublicURLReason = "NoPublicURL"
	// ChannelExpiredReason (CalendarWatch, ChannelReady=False): the channel
	// expired before it could be renewed; a new one is being opened.
	ChannelExpiredReason = "ChannelExpired"
	// StoppedReason (CalendarWatch, ChannelReady=False): every push channel
	// was stopped because the watch is suspended or being deleted.
	StoppedReason = "Stopped"
	// SinkForbiddenReason (CalendarWatch): the operator may not list or
	// delete the appointment kind; a platform team must grant it (docs).
	SinkForbiddenReason = "SinkForbidden"
	// SinkAddressRefusedReason (CalendarWatch): spec.sink.http.url is, or
	// its host name resolves to, an address the manager never posts to —
	// loopback, link-local (the cloud metadata service, 169.254.169.254),
	// unspecified, or a private range under --sink-deny-private-networks —
	// so that a sink cannot turn the manager against its own network
	// (server-side request forgery). A person must change the URL.
	SinkAddressRefusedReason = "SinkAddressRefused"
	// RevokedReason (SheetConnection): the connection was disconnected.
	RevokedReason = "Revoked"
)

// Finalizer is put on objects whose deletion must release something outside
// the cluster (a Google push channel, an S3 blob).
const Finalizer = "switchboard.dev/finalizer"
