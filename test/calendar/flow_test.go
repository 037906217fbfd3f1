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

package calendar_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/calendarpush"
	"github.com/switchboard-dev/switchboard/internal/controller/calendarwatch"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

const label = v1alpha1.DefaultEventIDLabel

type fixture struct {
	ns       string
	calendar string
	key      types.NamespacedName
}

var calCount int

// newFixture is a namespace with a CalendarWatch on a calendar of its own,
// granted in advance (a refresh token in the token Secret).
func newFixture(t *testing.T, change func(*v1alpha1.CalendarWatch)) *fixture {
	t.Helper()
	ctx := context.Background()
	ns, err := env.Namespace("cal")
	if err != nil {
		t.Fatal(err)
	}
	calCount++
	f := &fixture{ns: ns, calendar: "team" + strconv.Itoa(calCount) + "@example.com", key: types.NamespacedName{Namespace: ns, Name: "visits"}}
	calEm.AddCalendar(f.calendar)
	if err := testenv.CalendarWatch(ctx, env.Client, ns, f.calendar, googleEm.IssueRefreshToken("cal-client", targets.CalendarScope), change); err != nil {
		t.Fatal(err)
	}
	return f
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, what, cond)
}

func (f *fixture) watch(t *testing.T) *v1alpha1.CalendarWatch {
	t.Helper()
	w := &v1alpha1.CalendarWatch{}
	if err := env.Client.Get(context.Background(), f.key, w); err != nil {
		t.Fatal(err)
	}
	return w
}

// ready waits for Ready with a channel, and for the webhook's cache to
// hold the watch with its channel token's hash (the channel's sync
// message, with the right token, is answered 200 and records nothing;
// a 401 alone would not show that the hash is there).
func (f *fixture) ready(t *testing.T) *v1alpha1.CalendarWatch {
	t.Helper()
	var w *v1alpha1.CalendarWatch
	eventually(t, "the watch Ready with a channel", func() bool {
		w = f.watch(t)
		return w.Status.ObservedGeneration == w.Generation && status.IsTrue(w, v1alpha1.ReadyCondition) && w.Status.Channel != nil && w.Status.LastSyncTime != nil
	})
	tok := f.channelToken(t)
	eventually(t, "the webhook knows the watch and its token", func() bool {
		return push(t, pushHeaders(w.Status.Channel.ID, tok, "sync", 1)) == http.StatusOK
	})
	return w
}

func (f *fixture) channelToken(t *testing.T) string {
	t.Helper()
	var s corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "visits-calendar"}, &s); err != nil {
		t.Fatal(err)
	}
	return string(s.Data[calendarwatch.ChannelTokenKey])
}

// appointment creates a ConfigMap labelled with an event id (or, with an
// empty id, an unrelated "seller" record).
func (f *fixture) appointment(t *testing.T, name, eventID string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}, Data: map[string]string{"who": name}}
	if eventID != "" {
		cm.Labels = map[string]string{label: eventID}
	}
	if err := env.Client.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) exists(t *testing.T, name string) bool {
	t.Helper()
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: name}, &corev1.ConfigMap{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func (f *fixture) events(t *testing.T, reason string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == "visits" && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

func pushHeaders(channel, token, state string, num int64) http.Header {
	h := http.Header{}
	h.Set("X-Goog-Channel-ID", channel)
	if token != "" {
		h.Set("X-Goog-Channel-Token", token)
	}
	h.Set("X-Goog-Resource-ID", "res-1")
	h.Set("X-Goog-Resource-State", state)
	h.Set("X-Goog-Message-Number", strconv.FormatInt(num, 10))
	return h
}

// push posts a notification as Google does (no body) and returns the
// status.
func push(t *testing.T, h http.Header) int {
	t.Helper()
	return pushTo(t, hookURL, h)
}

// pushTo is push to the webhook server at base.
func pushTo(t *testing.T, base string, h http.Header) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+calendarpush.PushPath, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func TestACancelledEventDeletesItsAppointmentWithinSeconds(t *testing.T) {
	f := newFixture(t, nil)
	keep := calEm.CreateEvent(f.calendar, sandbox.CalendarEvent{Summary: "visit B", Start: time.Now().Add(48 * time.Hour), End: time.Now().Add(49 * time.Hour)})
	gone := calEm.CreateEvent(f.calendar, sandbox.CalendarEvent{Summary: "visit A", Start: time.Now().Add(24 * time.Hour), End: time.Now().Add(25 * time.Hour)})
	f.appointment(t, "appt-a", gone)
	f.appointment(t, "appt-b", keep)
	f.appointment(t, "seller-a", "")
	w := f.ready(t)
	if len(calEm.Channels(f.calendar)) != 1 || !strings.HasPrefix(w.Status.Channel.ID, "sb-"+string(w.UID)+"-") {
		t.Fatalf("channels %+v, status %+v", calEm.Channels(f.calendar), w.Status.Channel)
	}

	if err := calEm.CancelEvent(f.calendar, gone); err != nil {
		t.Fatal(err)
	}
	// Google pushes; the webhook records; the controller syncs.
	eventually(t, "the appointment deleted", func() bool { return !f.exists(t, "appt-a") })
	if !f.exists(t, "appt-b") || !f.exists(t, "seller-a") {
		t.Fatal("a related object or another appointment was deleted")
	}
	eventually(t, "the deletion's Event", func() bool { return len(f.events(t, "AppointmentDeleted")) == 1 })
	ev := f.events(t, "AppointmentDeleted")[0]
	if !strings.Contains(ev.Note, calendarwatch.SyncSource) || !strings.Contains(ev.Note, gone) || ev.Related == nil || ev.Related.Name != "appt-a" {
		t.Fatalf("event %+v", ev)
	}
	eventually(t, "status counts it", func() bool {
		w = f.watch(t)
		return w.Status.AppointmentsDeleted == 1 && len(w.Status.RecentlyDeletedEventIDs) == 1 && w.Status.LastNotification != nil
	})
	if w.Status.RecentlyDeletedEventIDs[0] != gone || w.Status.LastNotification.ChannelID != w.Status.Channel.ID {
		t.Fatalf("status %+v", w.Status)
	}
}

func TestPushRouteRefusals(t *testing.T) {
	f := newFixture(t, nil)
	w := f.ready(t)
	tok := f.channelToken(t)
	ch := w.Status.Channel.ID
	pending := calendarpush.ChannelID(w.UID, time.Now().Add(time.Hour).UnixMilli())
	before := w.Annotations[v1alpha1.CalendarNotificationAnnotation]

	missing := pushHeaders(ch, tok, "exists", 5)
	missing.Del("X-Goog-Resource-State")
	badNum := pushHeaders(ch, tok, "exists", 5)
	badNum.Set("X-Goog-Message-Number", "five")
	badState := pushHeaders(ch, tok, "changed", 5)
	expired := pushHeaders(pending, tok, "exists", 2)
	expired.Set("X-Goog-Channel-Expiration", time.Now().Add(-time.Minute).UTC().Format(http.TimeFormat))
	for _, c := range []struct {
		name string
		h    http.Header
		want int
	}{
		{"missing header", missing, http.StatusBadRequest},
		{"malformed message number", badNum, http.StatusBadRequest},
		{"unknown state", badState, http.StatusBadRequest},
		{"no token", pushHeaders(ch, "", "exists", 5), http.StatusUnauthorized},
		{"wrong token", pushHeaders(ch, tok+"x", "exists", 5), http.StatusUnauthorized},
		{"unknown channel", pushHeaders("some-other-channel", tok, "exists", 5), http.StatusNotFound},
		{"channel of no watch", pushHeaders(calendarpush.ChannelID("0c6f6f6e-0000-4000-8000-000000000000", time.Now().UnixMilli()), tok, "exists", 5), http.StatusNotFound},
		{"a stopped channel", pushHeaders(calendarpush.ChannelID(w.UID, time.Unix(1, 0).UnixMilli()), tok, "exists", 5), http.StatusNotFound},
		{"expired channel", expired, http.StatusGone},
		{"sync message", pushHeaders(pending, tok, "sync", 1), http.StatusOK},
	} {
		if got := push(t, c.h); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if after := f.watch(t).Annotations[v1alpha1.CalendarNotificationAnnotation]; after != before {
		t.Fatalf("a refused or sync notification was recorded: %q → %q", before, after)
	}
}

func TestDuplicateAndReorderedNotificationsChangeNothing(t *testing.T) {
	f := newFixture(t, nil)
	w := f.ready(t)
	tok, ch := f.channelToken(t), w.Status.Channel.ID
	if got := push(t, pushHeaders(ch, tok, "exists", 1000)); got != http.StatusOK {
		t.Fatalf("push: %d", got)
	}
	want := ch + "/1000/exists"
	if got := f.watch(t).Annotations[v1alpha1.CalendarNotificationAnnotation]; got != want {
		t.Fatalf("annotation %q, want %q", got, want)
	}
	eventually(t, "the notification handled", func() bool {
		n := f.watch(t).Status.LastNotification
		return n != nil && n.MessageNumber == 1000
	})
	syncs := f.watch(t).Status.Syncs
	for _, n := range []int64{1000, 999, 3} { // a duplicate, then two late ones
		if got := push(t, pushHeaders(ch, tok, "exists", n)); got != http.StatusOK {
			t.Fatalf("push %d: %d", n, got)
		}
	}
	if w := f.watch(t); w.Annotations[v1alpha1.CalendarNotificationAnnotation] != want || w.Status.Syncs != syncs {
		t.Fatalf("a duplicate or late notification changed the watch: syncs %d → %d", syncs, w.Status.Syncs)
	}
}

func TestABurstOfNotificationsIsOneSync(t *testing.T) {
	f := newFixture(t, nil)
	w := f.ready(t)
	tok, ch := f.channelToken(t), w.Status.Channel.ID
	syncs := w.Status.Syncs
	for n := int64(10); n < 30; n++ {
		if got := push(t, pushHeaders(ch, tok, "exists", n)); got != http.StatusOK {
			t.Fatalf("push: %d", got)
		}
	}
	eventually(t, "the last notification handled", func() bool {
		n := f.watch(t).Status.LastNotification
		return n != nil && n.MessageNumber == 29
	})
	if got := f.watch(t).Status.Syncs - syncs; got >= 20 || got < 1 {
		t.Fatalf("%d syncs for 20 notifications", got)
	}
}

func TestALostNotificationIsHealedByTheNextSync(t *testing.T) {
	f := newFixture(t, nil)
	id := calEm.CreateEvent(f.calendar, sandbox.CalendarEvent{Summary: "visit", Start: time.Now().Add(time.Hour), End: time.Now().Add(2 * time.Hour)})
	f.appointment(t, "appt", id)
	f.ready(t)
	calEm.SetPushFault(sandbox.PushFault{Drop: 1})
	if err := calEm.CancelEvent(f.calendar, id); err != nil {
		t.Fatal(err)
	}
	if err := calEm.WaitPushesIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !f.exists(t, "appt") {
		t.Fatal("deleted although the notification was dropped")
	}
	// The next notification (any change) syncs everything since the
	// token, the lost cancellation included; the backup timer would too
	// (its timing is tested with a fake clock in the controller's tests).
	calEm.Notify(f.calendar)
	eventually(t, "the appointment deleted", func() bool { return !f.exists(t, "appt") })
}

func TestRenewalLeavesNoGapAndHandlesTheOverlapOnce(t *testing.T) {
	calEm.MaxChannelTTL = 3 * time.Second
	defer func() { calEm.MaxChannelTTL = 7 * 24 * time.Hour }()
	f := newFixture(t, nil)
	// The watch goes with the test: left behind, it renewed its 3-second
	// channel once more after the test (the renewal then asks the
	// sandbox's normal limit), and that renewal's channels.stop landed in
	// the next test's count of them.
	defer f.deleteWatch(t)
	id := calEm.CreateEvent(f.calendar, sandbox.CalendarEvent{Summary: "visit", Start: time.Now().Add(time.Hour), End: time.Now().Add(2 * time.Hour)})
	f.appointment(t, "appt", id)
	// The old channel cannot be stopped for a while: both deliver.
	box.SetFault(sandbox.CalendarChannelsStop, sandbox.Fault{Status: http.StatusServiceUnavailable, Times: 1000})
	first := f.ready(t).Status.Channel.ID
	var w *v1alpha1.CalendarWatch
	eventually(t, "a renewal", func() bool {
		w = f.watch(t)
		return w.Status.Channel != nil && w.Status.Channel.ID != first && w.Status.PreviousChannel != nil
	})
	if w.Status.PreviousChannel.ID != first || len(calEm.Channels(f.calendar)) < 2 {
		t.Fatalf("overlap: status %+v, sandbox %d channels", w.Status, len(calEm.Channels(f.calendar)))
	}
	// A notification on the previous channel is still accepted.
	tok := f.channelToken(t)
	if got := push(t, pushHeaders(first, tok, "exists", 1<<40)); got != http.StatusOK {
		t.Fatalf("previous channel answered %d", got)
	}
	// A cancellation in the overlap reaches both channels; it is handled once.
	if err := calEm.CancelEvent(f.calendar, id); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the appointment deleted", func() bool { return !f.exists(t, "appt") })
	box.ClearFault(sandbox.CalendarChannelsStop)
	eventually(t, "the previous channel stopped", func() bool {
		w = f.watch(t)
		return w.Status.PreviousChannel == nil
	})
	if got := len(f.events(t, "AppointmentDeleted")); got != 1 {
		t.Fatalf("%d deletions recorded for one cancellation", got)
	}
	// The webhook reads the watch from its own cache, which sees the
	// status without the previous channel a moment after the API server
	// does: until then the old channel's token still matches.
	eventually(t, "the stopped channel refused", func() bool {
		got := push(t, pushHeaders(first, tok, "exists", 1<<41))
		return got == http.StatusNotFound || got == http.StatusGone
	})
}

// deleteWatch deletes the watch and waits until it is gone (its finalizer
// stops its channels).
func (f *fixture) deleteWatch(t *testing.T) {
	t.Helper()
	if err := env.Client.Delete(context.Background(), &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Name: f.key.Name, Namespace: f.key.Namespace}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the watch gone", func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), f.key, &v1alpha1.CalendarWatch{}))
	})
}

// The channel is stopped once: one ChannelStopped Event, none left open.
// Events are counted rather than the sandbox's channels.stop calls, which
// every watch of the suite shares (another test's watch renewing in the
// window was counted too) and which count a stop retried after the
// client's 2-second timeout twice (the sandbox had stopped it the first
// time; the retry's 404 is success).
func TestDeleteStopsTheChannel(t *testing.T) {
	f := newFixture(t, nil)
	w := f.ready(t)
	stops := box.Calls(sandbox.CalendarChannelsStop)
	f.deleteWatch(t)
	if got := box.Calls(sandbox.CalendarChannelsStop) - stops; got < 1 {
		t.Fatalf("%d channels.stop calls", got)
	}
	if got := len(f.events(t, "ChannelStopped")); got != 1 || !f.stopped(t, w.Status.Channel.ID) {
		t.Fatalf("%d ChannelStopped Events, want 1 naming %s", got, w.Status.Channel.ID)
	}
	if n := len(calEm.Channels(f.calendar)); n != 0 {
		t.Fatalf("%d channels left open", n)
	}
}

func TestSuspendStopsTheChannelAndResumeOpensOne(t *testing.T) {
	f := newFixture(t, nil)
	id := calEm.CreateEvent(f.calendar, sandbox.CalendarEvent{Summary: "visit", Start: time.Now().Add(time.Hour), End: time.Now().Add(2 * time.Hour)})
	f.appointment(t, "appt", id)
	w := f.ready(t)
	patch := client.MergeFrom(w.DeepCopy())
	w.Spec.Suspend = true
	if err := env.Client.Patch(context.Background(), w, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "suspended, no channel", func() bool {
		w = f.watch(t)
		c := status.Get(w, v1alpha1.ReadyCondition)
		return w.Status.Channel == nil && c != nil && c.Reason == v1alpha1.SuspendedReason
	})
	if n := len(calEm.Channels(f.calendar)); n != 0 {
		t.Fatalf("%d channels open while suspended", n)
	}
	// Cancelled while suspended: pushed to no channel.
	if err := calEm.CancelEvent(f.calendar, id); err != nil {
		t.Fatal(err)
	}
	if err := calEm.WaitPushesIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !f.exists(t, "appt") {
		t.Fatal("a suspended watch deleted an appointment")
	}
	patch = client.MergeFrom(w.DeepCopy())
	w.Spec.Suspend = false
	if err := env.Client.Patch(context.Background(), w, patch); err != nil {
		t.Fatal(err)
	}
	f.ready(t)
	if n := len(calEm.Channels(f.calendar)); n != 1 {
		t.Fatalf("%d channels after resume", n)
	}
	// Resuming syncs what changed meanwhile, without waiting for the
	// 15-minute backup sync or another push.
	eventually(t, "the appointment of the event cancelled while suspended deleted", func() bool { return !f.exists(t, "appt") })
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// browser follows no redirects, so each hop can be checked.
var browser = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func TestConnectingAGoogleAccountThroughTheOAuthRoutes(t *testing.T) {
	f := newFixture(t, func(w *v1alpha1.CalendarWatch) { w.Spec.OAuth.TokenSecretRef.Name = "fresh-token" })
	var token string
	eventually(t, "a connect link", func() bool {
		var sec corev1.Secret
		err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "visits-oauth-connect"}, &sec)
		token = string(sec.Data[oauth.ConnectTokenKey])
		return err == nil && token != ""
	})
	eventually(t, "the watch waiting for a grant", func() bool {
		c := status.Get(f.watch(t), v1alpha1.StalledCondition)
		return c != nil && c.Status == metav1.ConditionTrue
	})
	if status.IsTrue(f.watch(t), v1alpha1.ReadyCondition) {
		t.Fatal("Ready without a grant")
	}
	resp, err := browser.Get(oauth.ConnectURL(hookURL, "calendar", f.ns, "visits", token))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	auth, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("connect answered %d %v", resp.StatusCode, err)
	}
	q := auth.Query()
	if q.Get("access_type") != "offline" || q.Get("prompt") != "consent" || q.Get("scope") != targets.CalendarScope ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("redirect_uri") != hookURL+"/oauth/calendar/callback" {
		t.Fatalf("authorize URL %s", auth)
	}
	resp, err = browser.Get(auth.String()) // the sandbox's consent page approves
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	back := resp.Header.Get("Location")
	resp, err = browser.Get(back)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("callback answered %d", resp.StatusCode)
	}
	// The same callback again: the state was consumed.
	resp, err = browser.Get(back)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Fatal("a state was used twice")
	}
	f.ready(t)
}
