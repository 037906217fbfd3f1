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

// CalendarWatchSpec watches one Google Calendar for deleted events and
// deletes the appointments linked to them (seed 002).
type CalendarWatchSpec struct {
	// CalendarID to watch: "primary" or a calendar's id (usually an email
	// address). Changing it would orphan the channel and the sync token, so
	// it is immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="calendarID is immutable; create a new CalendarWatch to watch another calendar"
	// +required
	CalendarID string `json:"calendarID"`

	// OAuth names the Google OAuth client Secret (client_id, client_secret)
	// and the token Secret (access_token, refresh_token, expiry).
	// +required
	OAuth OAuthCredentials `json:"oauth"`

	// TokenRefreshBefore: refresh the Google access token when less than
	// this remains before its expiry (seed 004 §5: 5 minutes).
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('1h')",message="tokenRefreshBefore must be between 0s (exclusive) and 1h"
	// +optional
	TokenRefreshBefore metav1.Duration `json:"tokenRefreshBefore,omitzero"`

	// Channel is the push notification channel (events.watch).
	// +kubebuilder:default={ttl:"168h",renewBefore:"24h"}
	// +optional
	Channel CalendarChannel `json:"channel,omitzero"`

	// BackupSyncInterval is how often an incremental sync runs even when no
	// notification arrived, in case one was lost (seed 002: 15 minutes).
	// +kubebuilder:default="15m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m') && duration(self) <= duration('24h')",message="backupSyncInterval must be between 1m and 24h"
	// +optional
	BackupSyncInterval metav1.Duration `json:"backupSyncInterval,omitzero"`

	// Sink is where the appointments live that mirror calendar events, and
	// that must be deleted when their event is cancelled.
	// +required
	Sink AppointmentSink `json:"sink"`

	// Suspend stops syncing and stops the push channel (channels.stop);
	// resuming opens a new channel and syncs what changed meanwhile.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// DefaultEventIDLabel is the label an appointment carries its Google
// Calendar event id in, unless sink.objects.eventIDLabel names another.
const DefaultEventIDLabel = "switchboard.dev/calendar-event-id"

// CalendarNotificationAnnotation is written by the webhook server when it
// accepts a push notification: "<channel id>/<message number>/<state>".
// A new value reconciles the watch, which syncs once for however many
// notifications arrived meanwhile; the controller copies it to
// status.lastNotification when handled.
const CalendarNotificationAnnotation = "switchboard.dev/calendar-notification"

// CalendarChannel sets the lifetime of the Google push channel.
// +kubebuilder:validation:XValidation:rule="duration(self.renewBefore) < duration(self.ttl)",message="channel.renewBefore must be shorter than channel.ttl"
type CalendarChannel struct {
	// TTL requested for each channel; Google caps calendar channels at
	// 7 days (seed 002, Webhook Registration Flow).
	// +kubebuilder:default="168h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1h') && duration(self) <= duration('168h')",message="channel.ttl must be between 1h and 168h (7 days, Google's limit)"
	// +optional
	TTL metav1.Duration `json:"ttl,omitzero"`

	// RenewBefore: open a new channel (then stop the old one) when less
	// than this remains (seed 002: a day early).
	// +kubebuilder:default="24h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="channel.renewBefore must be positive"
	// +optional
	RenewBefore metav1.Duration `json:"renewBefore,omitzero"`
}

// AppointmentSink says where appointments are. At least one of objects
// and http is set.
// +kubebuilder:validation:XValidation:rule="has(self.objects) || has(self.http)",message="sink needs objects, http, or both"
type AppointmentSink struct {
	// Objects are Kubernetes objects in this namespace that carry the Google
	// event id in a label; those whose event is cancelled are deleted.
	// +optional
	Objects *ObjectSink `json:"objects,omitempty"`

	// HTTP is an endpoint told of each cancelled event with a signed POST.
	// +optional
	HTTP *HTTPSink `json:"http,omitempty"`
}

// ObjectSink selects appointment objects by kind and label.
type ObjectSink struct {
	// APIVersion of the appointment kind, for example example.com/v1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind of the appointment objects, for example Appointment.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	// +required
	Kind string `json:"kind"`

	// EventIDLabel is the label whose value is the Google Calendar event
	// id. An id that is not a valid label value (Google lets clients choose
	// ids of up to 1024 characters; a label value holds 63) is carried
	// hashed: "sha256-" and the first 32 hex digits of the SHA-256 of the
	// id; for an instance of a recurring event ("<series id>_<start>"),
	// of the series id, followed by "_<start>". Any id may be carried
	// hashed. A cancelled event whose id needs the hash and that no object
	// carries is listed in status.unmatchedEvents.
	// +kubebuilder:default="switchboard.dev/calendar-event-id"
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	// +optional
	EventIDLabel string `json:"eventIDLabel,omitempty"`
}

// HTTPSink posts each cancelled event to a URL as JSON
// {calendarID, eventID, appointment, deletedAt}, signed with HMAC-SHA256 over
// "<timestamp>.<body>": headers X-Switchboard-Timestamp (Unix seconds),
// X-Switchboard-Signature ("sha256=<hex>") and Idempotency-Key (the same for
// every retry of one event), so a receiver can refuse replays and
// duplicates.
type HTTPSink struct {
	// URL to POST to; https, or http for a cluster-local service.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && (url(self).getScheme() == 'https' || url(self).getScheme() == 'http')",message="http.url must be an http or https URL"
	// +required
	URL string `json:"url"`

	// SigningSecretRef names a Secret with a key `key` (at least 16 bytes)
	// used to sign the body.
	// +required
	SigningSecretRef SecretReference `json:"signingSecretRef"`
}

// CalendarWatchStatus is the channel and the sync state.
type CalendarWatchStatus struct {
	ReconcileStatus `json:",inline"`

	OAuthConnectStatus `json:",inline"`

	// Channel is the push channel now open.
	// +optional
	Channel *ChannelStatus `json:"channel,omitempty"`

	// PreviousChannel is the channel a renewal replaced, until
	// channels.stop succeeds: notifications on it are still accepted, so
	// a renewal leaves no gap.
	// +optional
	PreviousChannel *ChannelStatus `json:"previousChannel,omitempty"`

	// ChannelFailures counts consecutive failures to open a channel; the
	// next attempt waits longer each time (1 s doubling to an hour).
	// Syncing goes on meanwhile on the backup timer.
	// +optional
	ChannelFailures int32 `json:"channelFailures,omitempty"`
	// NextChannelAttemptAt is when a failed channel is tried again.
	// +optional
	NextChannelAttemptAt *metav1.Time `json:"nextChannelAttemptAt,omitempty"`

	// ChannelTokenSecretName is the Secret (owned by this object, named
	// <name>-calendar) holding the channel token Google echoes in
	// X-Goog-Channel-Token, the sync token and the page cursor.
	// +optional
	ChannelTokenSecretName string `json:"channelTokenSecretName,omitempty"`

	// ChannelTokenHash is the hex SHA-256 of the channel token, so that the
	// webhook server checks X-Goog-Channel-Token without reading the
	// Secret. The token is 32 random bytes: the hash cannot be turned back
	// into it.
	// +optional
	ChannelTokenHash string `json:"channelTokenHash,omitempty"`

	// PendingDeliveries are cancelled events the HTTP sink has not accepted
	// yet, oldest first; they are retried with backoff (1, 2, 4, 8, 16 s,
	// then the backup sync interval) and never hold up deleting objects.
	// +kubebuilder:validation:MaxItems=500
	// +listType=atomic
	// +optional
	PendingDeliveries []SinkDelivery `json:"pendingDeliveries,omitempty"`

	// DeliveryFailures counts consecutive failed deliveries to the HTTP sink.
	// +optional
	DeliveryFailures int32 `json:"deliveryFailures,omitempty"`
	// NextDeliveryAt is when pending deliveries are tried again.
	// +optional
	NextDeliveryAt *metav1.Time `json:"nextDeliveryAt,omitempty"`

	// LastNotification is the newest push handled.
	// +optional
	LastNotification *NotificationStatus `json:"lastNotification,omitempty"`

	// SyncDue is set while the watch is suspended: changes made meanwhile
	// were pushed to no channel, so the first reconcile after resuming
	// syncs whatever the backup timer says, and the sync that succeeds
	// clears it.
	// +optional
	SyncDue bool `json:"syncDue,omitempty"`

	// LastSyncTime is when the last incremental sync finished.
	// +optional
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`
	// LastFullSyncTime is when the last full sync (no sync token, or after
	// a 410) finished.
	// +optional
	LastFullSyncTime *metav1.Time `json:"lastFullSyncTime,omitempty"`

	// RecentlyDeletedEventIDs are the newest event ids whose appointments
	// were deleted, newest first, at most 20.
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	RecentlyDeletedEventIDs []string `json:"recentlyDeletedEventIDs,omitempty"`

	// UnmatchedEvents are the newest cancelled events (at most 20, newest
	// first) whose id is too long for a label value and whose hashed form
	// (labelValue) no appointment object carries: the appointment of such
	// an event must carry labelValue under sink.objects.eventIDLabel.
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	UnmatchedEvents []UnmatchedEvent `json:"unmatchedEvents,omitempty"`

	// Notifications counts the notifications the controller handled: a
	// burst handled by one sync counts once (the webhook's 200s are in its
	// metrics).
	// +optional
	Notifications int64 `json:"notifications,omitempty"`
	// Syncs counts incremental and full syncs.
	// +optional
	Syncs int64 `json:"syncs,omitempty"`
	// AppointmentsDeleted counts appointments deleted because their event
	// was cancelled.
	// +optional
	AppointmentsDeleted int64 `json:"appointmentsDeleted,omitempty"`

	// TokenStatus records the access token: tokenExpiresAt as Google
	// stated it.
	TokenStatus `json:",inline"`
}

// SinkDelivery is one cancelled event to tell the HTTP sink of.
type SinkDelivery struct {
	// EventID is the cancelled Google Calendar event id.
	// +kubebuilder:validation:MaxLength=1024
	EventID string `json:"eventID"`
	// Appointment is the deleted appointment object's name, empty when
	// none was found.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Appointment string `json:"appointment,omitempty"`
	// DeletedAt is when the cancellation was seen.
	DeletedAt metav1.Time `json:"deletedAt"`
}

// UnmatchedEvent is a cancelled event no appointment object was found for,
// although its id cannot be carried as it is.
type UnmatchedEvent struct {
	// EventID is the cancelled event's id.
	// +kubebuilder:validation:MaxLength=1024
	EventID string `json:"eventID"`
	// LabelValue is the value an appointment carries for it.
	// +kubebuilder:validation:MaxLength=63
	LabelValue string `json:"labelValue"`
	// At is when the sync found it.
	At metav1.Time `json:"at"`
}

// ChannelStatus identifies a Google push channel.
type ChannelStatus struct {
	// ID the operator chose for the channel (X-Goog-Channel-ID).
	ID string `json:"id"`
	// ResourceID Google assigned to the watched resource (X-Goog-Resource-ID).
	// +optional
	ResourceID string `json:"resourceID,omitempty"`
	// Expiration Google granted.
	// +optional
	Expiration *metav1.Time `json:"expiration,omitempty"`
}

// NotificationStatus describes a push notification.
type NotificationStatus struct {
	// ChannelID is the channel it came on (X-Goog-Channel-ID).
	// +optional
	ChannelID string `json:"channelID,omitempty"`
	// MessageNumber from X-Goog-Message-Number; older numbers are ignored.
	MessageNumber int64 `json:"messageNumber"`
	// ResourceState from X-Goog-Resource-State: sync, exists or not_exists.
	// +optional
	ResourceState string `json:"resourceState,omitempty"`
	// ReceivedAt is when the controller handled it (the sync it caused).
	// +optional
	ReceivedAt *metav1.Time `json:"receivedAt,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=calwatch,categories=switchboard
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Calendar",type=string,JSONPath=`.spec.calendarID`
// (A string, not a date: kubectl shows a future date column as <invalid>.)
// +kubebuilder:printcolumn:name="Channel-Expires",type=string,JSONPath=`.status.channel.expiration`
// +kubebuilder:printcolumn:name="Last-Sync",type=date,JSONPath=`.status.lastSyncTime`
// +kubebuilder:printcolumn:name="Deleted",type=integer,JSONPath=`.status.appointmentsDeleted`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// CalendarWatch keeps a Google Calendar push channel open, syncs changes
// incrementally, and deletes the appointments whose events were cancelled
// (seed 002).
type CalendarWatch struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec CalendarWatchSpec `json:"spec"`
	// +kubebuilder:default={}
	// +optional
	Status CalendarWatchStatus `json:"status,omitempty"`
}
