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

package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/contract/calendarpush"
)

// The CalendarWatch part of the demo drives the sample "visits": it
// watches the sandbox's "primary" calendar and deletes ConfigMaps labelled
// with a cancelled event's id.
const (
	// CalendarWatchName is the sample the walk connects.
	CalendarWatchName = "visits"
	eventIDLabel      = v1alpha1.DefaultEventIDLabel
	// calendarChannelTTL is the longest channel life the sandbox grants
	// (--calendar-max-channel-ttl). Shorter than the watch's renewBefore
	// (24 h), so the controller renews each channel halfway through it:
	// a renewal every few seconds, where Google's 7 days would take 6.
	calendarChannelTTL = 10 * time.Second
)

// calendar connects the sample CalendarWatch, cancels an event and shows
// its appointment deleted, then shows a channel renewal.
func (d *Demo) calendar(ctx context.Context, sandboxURL, webhookURL string) error {
	Step("CalendarWatch: connecting Google Calendar through the OAuth routes, as a browser would")
	if err := d.connectCalendar(ctx, webhookURL); err != nil {
		return err
	}
	w, err := d.waitWatch(ctx, "Ready with an open push channel", func(w *v1alpha1.CalendarWatch) bool {
		return meta.IsStatusConditionTrue(w.Status.Conditions, v1alpha1.ReadyCondition) &&
			meta.IsStatusConditionTrue(w.Status.Conditions, v1alpha1.ChannelReadyCondition) &&
			w.Status.Channel != nil && w.Status.LastSyncTime != nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("    CalendarWatch %s Ready: %s\n", CalendarWatchName, meta.FindStatusCondition(w.Status.Conditions, v1alpha1.ReadyCondition).Message)
	fmt.Printf("    channel %s (resource %s), expires %s: the sandbox grants at most %s\n",
		w.Status.Channel.ID, w.Status.Channel.ResourceID, w.Status.Channel.Expiration.UTC().Format(time.RFC3339), calendarChannelTTL)

	Step("CalendarWatch: the push route refuses what Google would not send")
	if err := checkCalendarPush(webhookURL, w.Status.Channel.ID); err != nil {
		return err
	}

	Step("CalendarWatch: an event is cancelled in Google Calendar; its appointment is deleted")
	if err := d.cancelAppointment(ctx, sandboxURL); err != nil {
		return err
	}

	Step("CalendarWatch: the push channel is renewed (new channel first, then the old one stopped)")
	return d.renewal(ctx, sandboxURL)
}

// connectCalendar creates the empty token Secret the sample names, reads
// the one-use connect link and follows it through the sandbox's consent to
// the callback.
func (d *Demo) connectCalendar(ctx context.Context, webhookURL string) error {
	tok := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "calendar-token", Namespace: Namespace}}
	if err := d.C.Create(ctx, tok); err != nil {
		return fmt.Errorf("create Secret calendar-token: %w", err)
	}
	fmt.Println("    Secret calendar-token created empty (the callback fills it); google-client holds the OAuth client")
	w, err := d.waitWatch(ctx, "waiting for a grant (Stalled/ReauthRequired)", func(w *v1alpha1.CalendarWatch) bool {
		c := meta.FindStatusCondition(w.Status.Conditions, v1alpha1.StalledCondition)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == v1alpha1.ReauthRequiredReason
	})
	if err != nil {
		return err
	}
	fmt.Printf("    before connecting: Stalled=True reason=%s\n", meta.FindStatusCondition(w.Status.Conditions, v1alpha1.StalledCondition).Reason)

	return d.browse(ctx, webhookURL, "calendar", CalendarWatchName, "calendar-token")
}

// checkCalendarPush posts notifications Google would not send.
func checkCalendarPush(webhookURL, channelID string) error {
	push := func(what string, h map[string]string, status int) error {
		req, _ := http.NewRequest(http.MethodPost, webhookURL+"/calendar/push", http.NoBody)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != status {
			return fmt.Errorf("%s: got %d %s, want %d", what, resp.StatusCode, body, status)
		}
		fmt.Printf("    %-34s → %d %s\n", what, resp.StatusCode, strings.TrimSpace(string(body)))
		return nil
	}
	headers := func(id, token string) map[string]string {
		return map[string]string{"X-Goog-Channel-ID": id, "X-Goog-Channel-Token": token, "X-Goog-Resource-ID": "demo",
			"X-Goog-Resource-State": "exists", "X-Goog-Message-Number": "1000000"}
	}
	if err := push("no X-Goog-* headers", nil, http.StatusBadRequest); err != nil {
		return err
	}
	if err := push("a channel no watch has", headers("sb-00000000-0000-0000-0000-000000000000-1", "x"), http.StatusNotFound); err != nil {
		return err
	}
	return push("the open channel, a wrong token", headers(channelID, "not-the-channel-token"), http.StatusUnauthorized)
}

// cancelAppointment creates two events and an appointment ConfigMap for
// each, cancels one event in the sandbox's calendar, and waits for its
// appointment to be deleted by the push → sync → delete path.
func (d *Demo) cancelAppointment(ctx context.Context, sandboxURL string) error {
	visit, seller, err := d.appointments(ctx, sandboxURL)
	if err != nil {
		return err
	}
	before := &v1alpha1.CalendarWatch{}
	if err := d.C.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: CalendarWatchName}, before); err != nil {
		return err
	}
	cancelled, err := cancelEvent(sandboxURL, visit)
	if err != nil {
		return err
	}
	if err := poll.Until(ctx, "the deletion of ConfigMap visit-acme", pollEvery, 60*time.Second, func() (bool, error) {
		err := d.C.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "visit-acme"}, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), poll.Stop(client.IgnoreNotFound(err))
	}); err != nil {
		return err
	}
	fmt.Printf("    ConfigMap visit-acme deleted %s after the cancellation\n", time.Since(cancelled).Round(10*time.Millisecond))

	ev, err := d.waitEvent(ctx, "AppointmentDeleted", visit)
	if err != nil {
		return err
	}
	fmt.Printf("    Event %s %s (regarding calendarwatch/%s, related %s/%s): %s\n",
		ev.Type, ev.Reason, ev.Regarding.Name, strings.ToLower(relatedKind(ev)), relatedName(ev), ev.Note)

	if err := d.C.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "seller"}, &corev1.ConfigMap{}); err != nil {
		return fmt.Errorf("the seller ConfigMap, whose event still exists: %w", err)
	}
	fmt.Printf("    ConfigMap seller is still there (its event %s was not cancelled)\n", seller)
	return d.deletionInStatus(ctx, before)
}

// appointments creates the events "Visit: ACME plant tour" and "Seller
// meeting" in the sandbox's calendar, and an appointment ConfigMap
// labelled with each one's id; it returns the two ids.
func (d *Demo) appointments(ctx context.Context, sandboxURL string) (visit, seller string, err error) {
	start := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Hour)
	if visit, err = createEvent(sandboxURL, "Visit: ACME plant tour", start); err != nil {
		return "", "", err
	}
	if seller, err = createEvent(sandboxURL, "Seller meeting", start.Add(2*time.Hour)); err != nil {
		return "", "", err
	}
	fmt.Printf("    POST /_sandbox/calendar/calendars/primary/events: %q → %s, %q → %s\n", "Visit: ACME plant tour", visit, "Seller meeting", seller)
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "visit-acme", Namespace: Namespace, Labels: map[string]string{eventIDLabel: visit}},
			Data: map[string]string{"customer": "ACME", "start": start.Format(time.RFC3339)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "seller", Namespace: Namespace, Labels: map[string]string{eventIDLabel: seller}},
			Data: map[string]string{"customer": "Seller Co.", "start": start.Add(2 * time.Hour).Format(time.RFC3339)}},
	} {
		if err := d.C.Create(ctx, cm); err != nil {
			return "", "", fmt.Errorf("create ConfigMap %s: %w", cm.Name, err)
		}
		fmt.Printf("    ConfigMap %s labelled %s=%s\n", cm.Name, eventIDLabel, cm.Labels[eventIDLabel])
	}
	return visit, seller, nil
}

// cancelEvent cancels an event in the sandbox's calendar, as a person
// would in Google Calendar, and returns when.
func cancelEvent(sandboxURL, id string) (time.Time, error) {
	req, _ := http.NewRequest(http.MethodDelete, sandboxURL+"/_sandbox/calendar/calendars/primary/events/"+id, http.NoBody)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return time.Time{}, err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return time.Time{}, fmt.Errorf("cancel the event: the sandbox answered %d", resp.StatusCode)
	}
	cancelled := time.Now()
	fmt.Printf("    DELETE /_sandbox/calendar/calendars/primary/events/%s → %d (Google pushes \"exists\" to the channel)\n", id, resp.StatusCode)
	return cancelled, nil
}

// deletionInStatus waits for the watch's status to count the deletion, as
// before (the watch read before the cancellation) did not, and checks it
// came from a push notification.
func (d *Demo) deletionInStatus(ctx context.Context, before *v1alpha1.CalendarWatch) error {
	w, err := d.waitWatch(ctx, "the deletion in status", func(w *v1alpha1.CalendarWatch) bool {
		return w.Status.AppointmentsDeleted > before.Status.AppointmentsDeleted && w.Status.LastNotification != nil
	})
	if err != nil {
		return err
	}
	n := w.Status.LastNotification
	fmt.Printf("    status: notifications=%d syncs=%d appointmentsDeleted=%d recentlyDeletedEventIDs=%v\n",
		w.Status.Notifications, w.Status.Syncs, w.Status.AppointmentsDeleted, w.Status.RecentlyDeletedEventIDs)
	fmt.Printf("    status.lastNotification: channel %s, message %d, state %s\n", n.ChannelID, n.MessageNumber, n.ResourceState)
	if w.Status.Notifications <= before.Status.Notifications {
		return errors.New("the deletion did not come from a push notification")
	}
	return nil
}

// renewal waits for the controller to replace the open channel, and for
// the old one to be stopped.
func (d *Demo) renewal(ctx context.Context, sandboxURL string) error {
	w := &v1alpha1.CalendarWatch{}
	if err := d.C.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: CalendarWatchName}, w); err != nil {
		return err
	}
	old := *w.Status.Channel
	life := old.Expiration.Sub(time.UnixMilli(channelSeq(old.ID)))
	// status keeps whole seconds of the expiration: about the life granted.
	fmt.Printf("    channel %s: granted about %s (less than renewBefore %s), so it is renewed halfway, at about %s\n",
		old.ID, life.Round(time.Second), w.Spec.Channel.RenewBefore.Duration, old.Expiration.Add(-life/2).UTC().Format("15:04:05.000"))
	w, err := d.waitWatch(ctx, "a new channel", func(w *v1alpha1.CalendarWatch) bool {
		return w.Status.Channel != nil && w.Status.Channel.ID != old.ID
	})
	if err != nil {
		return err
	}
	fmt.Printf("    %s status.channel.id %s → %s (expires %s)\n", time.Now().UTC().Format("15:04:05.000"),
		old.ID, w.Status.Channel.ID, w.Status.Channel.Expiration.UTC().Format("15:04:05.000"))
	ev, err := d.waitEvent(ctx, "ChannelRenewed", old.ID)
	if err != nil {
		return err
	}
	fmt.Printf("    Event %s %s: %s\n", ev.Type, ev.Reason, ev.Note)

	var open []struct {
		ID string `json:"id"`
	}
	if err := getJSON(sandboxURL+"/_sandbox/calendar/calendars/primary/channels", &open); err != nil {
		return fmt.Errorf("sandbox channels: %w", err)
	}
	ids := make([]string, 0, len(open))
	for _, ch := range open {
		if ch.ID == old.ID {
			return fmt.Errorf("the sandbox still has channel %s open", old.ID)
		}
		ids = append(ids, ch.ID)
	}
	fmt.Printf("    the sandbox's open channels on \"primary\": %v (%s is stopped)\n", ids, old.ID)
	return nil
}

func createEvent(sandboxURL, summary string, start time.Time) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	err := postJSON(sandboxURL+"/_sandbox/calendar/calendars/primary/events",
		map[string]any{"summary": summary, "start": start, "end": start.Add(time.Hour)}, &out)
	if err != nil {
		return "", fmt.Errorf("create event %q in the sandbox: %w", summary, err)
	}
	return out.ID, nil
}

// waitWatch polls the sample CalendarWatch until ok, for 60 s.
func (d *Demo) waitWatch(ctx context.Context, what string, ok func(*v1alpha1.CalendarWatch) bool) (*v1alpha1.CalendarWatch, error) {
	w, err := waitObject(ctx, d.C, client.ObjectKey{Namespace: Namespace, Name: CalendarWatchName}, 60*time.Second, ok)
	if err != nil {
		return nil, fmt.Errorf("CalendarWatch %s: no %s: %w; conditions: %+v", CalendarWatchName, what, err, w.Status.Conditions)
	}
	return w, nil
}

// waitEvent waits for an Event of the sample CalendarWatch with this
// reason whose note mentions text.
func (d *Demo) waitEvent(ctx context.Context, reason, text string) (*eventsv1.Event, error) {
	var found *eventsv1.Event
	err := poll.Until(ctx, "", pollEvery, 30*time.Second, func() (bool, error) {
		var list eventsv1.EventList
		if err := d.C.List(ctx, &list, client.InNamespace(Namespace)); err != nil {
			return false, poll.Stop(err)
		}
		for i := range list.Items {
			ev := &list.Items[i]
			if ev.Regarding.Kind == "CalendarWatch" && ev.Regarding.Name == CalendarWatchName && ev.Reason == reason && strings.Contains(ev.Note, text) {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("no %s Event mentioning %s: %w", reason, text, err)
	}
	return found, nil
}

func relatedKind(ev *eventsv1.Event) string {
	if ev.Related == nil {
		return ""
	}
	return ev.Related.Kind
}

func relatedName(ev *eventsv1.Event) string {
	if ev.Related == nil {
		return ""
	}
	return ev.Related.Name
}

// channelSeq is the Unix milliseconds a channel id "sb-<uid>-<ms>" was
// opened at.
func channelSeq(id string) int64 {
	_, ms, _ := calendarpush.ParseChannelID(id)
	return ms
}
