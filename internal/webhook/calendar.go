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

package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/contract/calendarpush"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
)

// The push route finds the watch in the cache by the UID in the channel
// id and records the notification in its metadata (a patch).
// +kubebuilder:rbac:groups=switchboard.dev,resources=calendarwatches,verbs=get;list;watch;patch

// The calendar family takes a CalendarWatch's push notifications; the watch
// connects to Google under /oauth/calendar/….
var _ = family(Family{Name: "calendar", Routes: oneRoute("POST "+calendarpush.PushPath, calendarPush),
	OAuth: &OAuthTarget{Target: targets.Calendar}})

// The headers of a Google push notification
// (https://developers.google.com/calendar/api/guides/push, "Understanding
// the notification message format"). The body is empty.
const (
	hdrChannelID  = "X-Goog-Channel-Id"
	hdrToken      = "X-Goog-Channel-Token" //nolint:gosec // a header name, not a credential
	hdrResourceID = "X-Goog-Resource-Id"
	hdrState      = "X-Goog-Resource-State"
	hdrMessageNum = "X-Goog-Message-Number"
	hdrExpiration = "X-Goog-Channel-Expiration"
)

// pushStates are the X-Goog-Resource-State values of a watched resource.
var pushStates = []string{"sync", "exists", "not_exists"}

// calendarPush accepts a Google Calendar push notification (seed 002
// "Webhook Errors"): 400 for missing or malformed headers, 404 for a
// channel no watch has (or one already stopped), 401 for a wrong or
// missing token (logged with the source address, never the token), 410 for
// an expired channel (and the watch is told to renew). A `sync` message
// and a message number already seen change nothing; any other is recorded
// on the watch in one conditional metadata patch before 200 (503 if that
// write fails, so Google retries). The controller's incremental sync does the work, so
// a burst of notifications is one sync.
func calendarPush(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, e := readPush(r.Header)
		if e != nil {
			return e
		}
		cw, seq, err := pushWatch(r, d, p)
		if err != nil {
			return err
		}
		known, e := knownChannel(&cw.Status, p.id, seq)
		if e != nil {
			return e
		}
		if exp := expirationOf(known, p.expiration); !exp.IsZero() && time.Now().After(exp) {
			return expiredChannel(r.Context(), d, cw, known, p)
		}
		if p.state == "sync" || cw.Spec.Suspend {
			WriteJSON(w, http.StatusOK, map[string]any{"accepted": false})
			return nil
		}
		recorded, e := recordNotification(r.Context(), d, cw, p.notification(p.state))
		if e != nil {
			return e
		}
		WriteJSON(w, http.StatusOK, map[string]any{"accepted": recorded})
		return nil
	}
}

// push is what a notification's headers say.
type push struct {
	id, state, token, expiration string
	num                          int64
}

func (p push) notification(state string) calendarpush.Notification {
	return calendarpush.Notification{ChannelID: p.id, MessageNumber: p.num, State: state}
}

// readPush reads a notification's headers: 400 for missing or malformed
// ones.
func readPush(h http.Header) (push, *Error) {
	var missing []string
	for _, k := range []string{hdrChannelID, hdrResourceID, hdrState, hdrMessageNum} {
		if h.Get(k) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return push{}, Errorf(http.StatusBadRequest, "not a Google push notification: headers missing").WithDetails(map[string]any{"missing": missing})
	}
	p := push{id: h.Get(hdrChannelID), state: h.Get(hdrState), token: h.Get(hdrToken), expiration: h.Get(hdrExpiration)}
	num, err := strconv.ParseInt(h.Get(hdrMessageNum), 10, 64)
	if err != nil || num < 1 {
		return push{}, Errorf(http.StatusBadRequest, "%s must be a positive integer", hdrMessageNum).WithDetails(map[string]any{"header": hdrMessageNum})
	}
	if !slices.Contains(pushStates, p.state) {
		return push{}, Errorf(http.StatusBadRequest, "%s must be one of %v", hdrState, pushStates).WithDetails(map[string]any{"header": hdrState})
	}
	p.num = num
	return p, nil
}

// pushWatch finds the watch of the channel by the UID its id carries (404
// for none) and checks the channel token against the hash in its status
// (401). It returns the watch and the channel's sequence.
func pushWatch(r *http.Request, d Deps, p push) (*v1alpha1.CalendarWatch, int64, error) {
	uid, seq, ok := calendarpush.ParseChannelID(p.id)
	if !ok {
		return nil, 0, Errorf(http.StatusNotFound, "unknown channel")
	}
	var list v1alpha1.CalendarWatchList
	if err := d.routed(r.Context(), &list, index.CalendarWatchUID, string(uid)); err != nil {
		return nil, 0, err
	}
	if len(list.Items) != 1 {
		return nil, 0, Errorf(http.StatusNotFound, "unknown channel")
	}
	cw := &list.Items[0]
	if want := cw.Status.ChannelTokenHash; p.token == "" || want == "" || !capability.Equal(calendarpush.HashToken(p.token), want) {
		logr.FromContextOrDiscard(r.Context()).Info("push notification refused: wrong or missing channel token",
			"calendarwatch", types.NamespacedName{Namespace: cw.Namespace, Name: cw.Name}, "source", sourceAddr(r))
		return nil, 0, Errorf(http.StatusUnauthorized, "wrong or missing channel token")
	}
	return cw, seq, nil
}

// knownChannel is which of the watch's channels id is: the open one, the
// one a renewal replaced (accepted until it is stopped), or one being
// opened (nil: its sync message may arrive before events.watch returns).
// Any other is 404.
func knownChannel(st *v1alpha1.CalendarWatchStatus, id string, seq int64) (*v1alpha1.ChannelStatus, *Error) {
	switch {
	case st.Channel != nil && st.Channel.ID == id:
		return st.Channel, nil
	case st.PreviousChannel != nil && st.PreviousChannel.ID == id:
		return st.PreviousChannel, nil
	case seq > calendarpush.ChannelSequence(st.Channel):
		return nil, nil
	default:
		return nil, Errorf(http.StatusNotFound, "unknown channel: it was stopped")
	}
}

// expiredChannel answers a push of an expired channel 410; when it is the
// open channel, the watch is first told to renew at once.
func expiredChannel(ctx context.Context, d Deps, cw *v1alpha1.CalendarWatch, known *v1alpha1.ChannelStatus, p push) error {
	if known != nil && known == cw.Status.Channel {
		if _, e := recordNotification(ctx, d, cw, p.notification("expired")); e != nil {
			return e
		}
	}
	return Errorf(http.StatusGone, "the channel expired")
}

// seen reports a message number at or below the last one recorded or
// handled for that channel: a duplicate or a late one, already covered.
func seen(cw *v1alpha1.CalendarWatch, id string, num int64) bool {
	if n, ok := calendarpush.ParseNotification(cw.Annotations[v1alpha1.CalendarNotificationAnnotation]); ok && n.ChannelID == id && num <= n.MessageNumber {
		return true
	}
	last := cw.Status.LastNotification
	return last != nil && last.ChannelID == id && num <= last.MessageNumber
}

// recordAttempts bounds the conditional writes of one notification: each
// refusal means another push recorded meanwhile, and is followed by a
// read of the live object.
const recordAttempts = 4

// recordNotification writes the annotation (no status write: that is the
// controller's), unless the watch already records that channel at or
// above n's number (a duplicate or a late one, already covered). The
// record never goes back, whatever the cache shows: the write is
// conditional on the record the check was made on, and when the API
// server refuses it, the check is made again on the live object.
//
// The condition is on the annotation alone, not the whole object: a JSON
// Patch whose "test" operation (RFC 6902 §4.6) holds the record read, so
// the controller's status writes, which change the resourceVersion many
// times a second under a burst, do not refuse it; only another push's
// record does (the API server answers 422 for a failed test). The first
// record of a watch, with nothing to test, is a merge patch conditional
// on the resourceVersion (409 when it changed). So a push costs one PATCH;
// a push that raced another costs a GET and a PATCH more. It reports
// whether it wrote; a failed write is a 503, which Google retries.
func recordNotification(ctx context.Context, d Deps, cw *v1alpha1.CalendarWatch, n calendarpush.Notification) (bool, *Error) {
	key := client.ObjectKeyFromObject(cw)
	for attempt := 1; ; attempt++ {
		if seen(cw, n.ChannelID, n.MessageNumber) {
			return false, nil
		}
		err := d.Client.Patch(ctx, watchMetadata(cw), recordPatch(cw, n))
		if err == nil {
			return true, nil
		}
		if recordRefused(err) && attempt < recordAttempts {
			live := &v1alpha1.CalendarWatch{}
			if err = d.APIReader.Get(ctx, key, live); err == nil {
				cw = live
				continue
			}
		}
		if apierrors.IsNotFound(err) {
			return false, Errorf(http.StatusNotFound, "unknown channel")
		}
		// Google retries a 503 (guides/push).
		return false, Unavailable(DefaultRetryAfter, "could not record the notification; retry").WithCause(err)
	}
}

// watchMetadata is the object a record is patched through: its metadata
// alone, so the API server answers with the metadata (a record changes
// nothing else) and the route decodes no status; cw, the cache's, is
// never written into.
func watchMetadata(cw *v1alpha1.CalendarWatch) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: cw.Namespace, Name: cw.Name}}
	m.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("CalendarWatch"))
	return m
}

// recordRefused reports the API server refusing a conditional record: a
// failed test (422) or a changed resourceVersion (409).
func recordRefused(err error) bool {
	var s apierrors.APIStatus
	return apierrors.IsConflict(err) || errors.As(err, &s) && s.Status().Code == http.StatusUnprocessableEntity
}

// notificationPointer is the annotation's JSON Pointer (RFC 6901: "/" in
// a key is "~1").
var notificationPointer = "/metadata/annotations/" + strings.ReplaceAll(strings.ReplaceAll(v1alpha1.CalendarNotificationAnnotation, "~", "~0"), "/", "~1")

// recordPatch is the conditional write of n over the record cw shows.
func recordPatch(cw *v1alpha1.CalendarWatch, n calendarpush.Notification) client.Patch {
	if old, ok := cw.Annotations[v1alpha1.CalendarNotificationAnnotation]; ok {
		ops, _ := json.Marshal([]map[string]any{
			{"op": "test", "path": notificationPointer, "value": old},
			{"op": "replace", "path": notificationPointer, "value": n.String()},
		})
		return client.RawPatch(types.JSONPatchType, ops)
	}
	merge, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": cw.ResourceVersion,
		"annotations":     map[string]string{v1alpha1.CalendarNotificationAnnotation: n.String()},
	}})
	return client.RawPatch(types.MergePatchType, merge)
}

// expirationOf is the channel's expiration as status has it, or as Google
// states it in X-Goog-Channel-Expiration (RFC 1123) for a channel status
// does not name yet.
func expirationOf(ch *v1alpha1.ChannelStatus, header string) time.Time {
	if ch != nil && ch.Expiration != nil {
		return ch.Expiration.Time
	}
	if t, err := http.ParseTime(header); err == nil {
		return t
	}
	return time.Time{}
}

// sourceAddr is the peer's address, for logs of refused requests.
func sourceAddr(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}
