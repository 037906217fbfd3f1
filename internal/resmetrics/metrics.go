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

package resmetrics

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// metric is one metric as it is written: its name, type and help, the
// kinds it covers, and what it reads of each object: a value, and the
// reason label's value when it has one (ok false: no sample).
type metric struct {
	name, typ, help string
	kinds           []kind
	// byKind labels samples with kind, namespace and name (else
	// namespace and name); reason adds a reason label.
	byKind, reason bool
	value          func(o runtime.Object) (v float64, reason string, ok bool)
}

// condition is the status and reason of o's condition typ, and whether
// o has it.
func condition(o runtime.Object, typ string) (bool, string, bool) {
	c := status.Get(o.(status.Object), typ)
	if c == nil {
		return false, "", false
	}
	return c.Status == metav1.ConditionTrue, c.Reason, true
}

func tokenOf(o runtime.Object) *v1alpha1.TokenStatus {
	return o.(v1alpha1.OAuthObject).GetTokenStatus()
}

func timestamp(t *metav1.Time) (float64, string, bool) {
	if t == nil {
		return 0, "", false
	}
	return seconds(t.Time), "", true
}

func count[N int | int32 | int64](n N) (float64, string, bool) { return float64(n), "", true }

var (
	calendars = []kind{kindOf(&v1alpha1.CalendarWatch{})}
	links     = []kind{kindOf(&v1alpha1.ReceiveLink{})}
)

// metrics are the metrics, in the order they are written. Their names,
// types and labels are documented in docs/metrics.md.
var metrics = []metric{
	{"switchboard_resource_ready", "gauge",
		"Whether the object's Ready condition is True (1) or not (0), with the condition's reason (Unknown before the first reconcile).",
		parents, true, true, func(o runtime.Object) (float64, string, bool) {
			ready, reason, ok := condition(o, v1alpha1.ReadyCondition)
			if !ok {
				reason = "Unknown"
			}
			return boolean(ready), reason, true
		}},
	{"switchboard_resource_stalled", "gauge",
		"Whether the object's Stalled condition is True (1: a person must act) or not (0), with the condition's reason.",
		parents, true, true, func(o runtime.Object) (float64, string, bool) {
			stalled, reason, _ := condition(o, v1alpha1.StalledCondition)
			if !stalled {
				reason = ""
			}
			return boolean(stalled), reason, true
		}},
	{"switchboard_oauth_token_expiration_timestamp_seconds", "gauge",
		"When the access token of the object's working grant expires (status.tokenExpiresAt), in Unix seconds.",
		oauthKinds, true, false, func(o runtime.Object) (float64, string, bool) { return timestamp(tokenOf(o).TokenExpiresAt) }},
	{"switchboard_oauth_token_last_refresh_timestamp_seconds", "gauge",
		"When the object's access token was last refreshed (status.lastTokenRefreshAt), in Unix seconds.",
		oauthKinds, true, false, func(o runtime.Object) (float64, string, bool) { return timestamp(tokenOf(o).LastTokenRefreshAt) }},
	{"switchboard_oauth_token_refresh_failures", "gauge",
		"Refreshes of the object's access token that failed since the last that succeeded (status.tokenRefreshFailures).",
		oauthKinds, true, false, func(o runtime.Object) (float64, string, bool) { return count(tokenOf(o).TokenRefreshFailures) }},
	{"switchboard_calendar_channel_expiration_timestamp_seconds", "gauge",
		"When the CalendarWatch's current Google push channel expires (status.channel.expiration), in Unix seconds.",
		calendars, false, false, func(o runtime.Object) (float64, string, bool) {
			if ch := o.(*v1alpha1.CalendarWatch).Status.Channel; ch != nil {
				return timestamp(ch.Expiration)
			}
			return 0, "", false
		}},
	{"switchboard_calendar_notifications_total", "counter",
		"Push notifications the CalendarWatch handled (status.notifications).",
		calendars, false, false, func(o runtime.Object) (float64, string, bool) {
			return count(o.(*v1alpha1.CalendarWatch).Status.Notifications)
		}},
	{"switchboard_calendar_appointments_deleted_total", "counter",
		"Appointments the CalendarWatch deleted for cancelled events (status.appointmentsDeleted).",
		calendars, false, false, func(o runtime.Object) (float64, string, bool) {
			return count(o.(*v1alpha1.CalendarWatch).Status.AppointmentsDeleted)
		}},
	{"switchboard_calendar_sink_deliveries_pending", "gauge",
		"Deliveries to the CalendarWatch's sink waiting to be sent or retried (status.pendingDeliveries).",
		calendars, false, false, func(o runtime.Object) (float64, string, bool) {
			return count(len(o.(*v1alpha1.CalendarWatch).Status.PendingDeliveries))
		}},
	{"switchboard_receivelink_expiration_timestamp_seconds", "gauge",
		"When the ReceiveLink's share link expires (status.expiresAt), in Unix seconds.",
		links, false, false, func(o runtime.Object) (float64, string, bool) {
			return timestamp(o.(*v1alpha1.ReceiveLink).Status.ExpiresAt)
		}},
	{"switchboard_receivelink_blob_deleted", "gauge",
		"Whether the ReceiveLink's blob has been deleted after its expiry (1) or still exists (0).",
		links, false, false, func(o runtime.Object) (float64, string, bool) {
			l := o.(*v1alpha1.ReceiveLink)
			return boolean(l.Status.BlobDeletedAt != nil), "", l.Status.ExpiresAt != nil
		}},
}

// seconds is t in Unix seconds.
func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func boolean(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
