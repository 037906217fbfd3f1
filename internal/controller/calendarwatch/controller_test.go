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

package calendarwatch

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/calendarpush"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

func TestFirstReconcileOpensAChannelAndKeepsTokensInTheSecret(t *testing.T) {
	f := newFixture(t, nil)
	res := f.reconcile(t)
	w := f.watch(t)
	if !status.IsTrue(w, v1alpha1.ReadyCondition) || !status.IsTrue(w, v1alpha1.ChannelReadyCondition) || !status.IsTrue(w, v1alpha1.SyncedCondition) {
		t.Fatalf("conditions %+v", w.Status.Conditions)
	}
	ch := w.Status.Channel
	if ch == nil || !strings.HasPrefix(ch.ID, "sb-"+string(w.UID)+"-") || len(ch.ID) > 64 || ch.ResourceID == "" {
		t.Fatalf("channel %+v", ch)
	}
	// Google's expiration is stored, capped at what it granted.
	if want := f.clock.Now().Add(7 * 24 * time.Hour); !ch.Expiration.Time.Equal(want) {
		t.Fatalf("expiration %s, want %s", ch.Expiration, want)
	}
	sec := f.secret(t, "visits-calendar")
	open := calEm.Channels(f.calendar)
	if len(open) != 1 || open[0].Token != sec[ChannelTokenKey] || open[0].Address != pushURL+calendarpush.PushPath {
		t.Fatalf("sandbox channels %+v", open)
	}
	if sec[SyncTokenKey] == "" || w.Status.ChannelTokenHash != calendarpush.HashToken(sec[ChannelTokenKey]) {
		t.Fatal("sync token or token hash missing")
	}
	raw, _ := json.Marshal(w)
	for _, secret := range []string{sec[ChannelTokenKey], sec[SyncTokenKey]} {
		if strings.Contains(string(raw), secret) {
			t.Fatal("a token is in the watch")
		}
	}
	for _, e := range f.rec.All() {
		if strings.Contains(e, sec[ChannelTokenKey]) {
			t.Fatal("a token is in an Event")
		}
	}
	// Next: the backup sync, 15 minutes ±10 %.
	if res.RequeueAfter < 13*time.Minute || res.RequeueAfter > 17*time.Minute {
		t.Fatalf("requeue after %s", res.RequeueAfter)
	}
}

func TestACancelledEventDeletesOnlyItsAppointment(t *testing.T) {
	f := newFixture(t, nil)
	gone, keep := f.event("visit A"), f.event("visit B")
	f.appointment(t, "appt-a", gone)
	f.appointment(t, "appt-b", keep)
	f.appointment(t, "seller-a", "")
	f.reconcile(t)
	if !f.exists(t, "appt-a") {
		t.Fatal("deleted before its event was cancelled")
	}
	if err := calEm.CancelEvent(f.calendar, gone); err != nil {
		t.Fatal(err)
	}
	f.notify(t, 7)
	f.reconcile(t)
	if f.exists(t, "appt-a") || !f.exists(t, "appt-b") || !f.exists(t, "seller-a") {
		t.Fatal("wrong objects deleted")
	}
	w := f.watch(t)
	if w.Status.AppointmentsDeleted != 1 || w.Status.RecentlyDeletedEventIDs[0] != gone || w.Status.LastNotification.MessageNumber != 7 {
		t.Fatalf("status %+v", w.Status)
	}
	evs := f.rec.With("AppointmentDeleted")
	if len(evs) != 1 || !strings.Contains(evs[0], "source="+SyncSource) || !strings.Contains(evs[0], gone) || !strings.Contains(evs[0], "related=ConfigMap/appt-a") {
		t.Fatalf("events %v", evs)
	}
	// The same notification again: no sync, nothing more.
	syncs := w.Status.Syncs
	f.reconcile(t)
	if got := f.watch(t).Status.Syncs; got != syncs {
		t.Fatalf("syncs %d → %d without a new notification", syncs, got)
	}
}

func TestTheBackupSyncRunsOnItsTimerWithoutNotifications(t *testing.T) {
	f := newFixture(t, nil)
	id := f.event("visit")
	f.appointment(t, "appt", id)
	f.reconcile(t)
	if err := calEm.CancelEvent(f.calendar, id); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(14 * time.Minute)
	f.reconcile(t)
	if !f.exists(t, "appt") {
		t.Fatal("synced before the backup interval without a notification")
	}
	f.clock.Step(time.Minute)
	f.reconcile(t)
	if f.exists(t, "appt") {
		t.Fatal("the backup sync did not delete the appointment")
	}
}

func TestRenewalOpensTheNewChannelThenStopsTheOld(t *testing.T) {
	f := newFixture(t, nil)
	f.reconcile(t)
	first := f.watch(t).Status.Channel
	due := RenewAt(first, 24*time.Hour)
	if earliest := first.Expiration.Add(-24*time.Hour - 144*time.Minute); due.Before(earliest) || due.After(first.Expiration.Add(-24*time.Hour)) {
		t.Fatalf("renewal due at %s for expiration %s", due, first.Expiration)
	}
	// The renewal begins five minutes (renewBefore/20, at most five
	// minutes) before it is due.
	start := renewStart(first, 24*time.Hour)
	if !start.Equal(due.Add(-5 * time.Minute)) {
		t.Fatalf("renewal begins at %s, due %s", start, due)
	}
	watches, stops := box.Calls(sandbox.CalendarEventsWatch), box.Calls(sandbox.CalendarChannelsStop)
	f.clock.SetTime(start.Add(-time.Second))
	f.reconcile(t)
	if box.Calls(sandbox.CalendarEventsWatch) != watches {
		t.Fatal("renewed early")
	}
	// The old channel cannot be stopped yet: it stays accepted.
	box.SetFault(sandbox.CalendarChannelsStop, sandbox.Fault{Status: http.StatusServiceUnavailable, Times: 1})
	f.clock.SetTime(start)
	f.reconcile(t)
	w := f.watch(t)
	if w.Status.Channel.ID == first.ID || w.Status.PreviousChannel == nil || w.Status.PreviousChannel.ID != first.ID {
		t.Fatalf("after renewal: channel %+v previous %+v", w.Status.Channel, w.Status.PreviousChannel)
	}
	if len(calEm.Channels(f.calendar)) != 2 {
		t.Fatal("the new channel was not opened before the old one was stopped")
	}
	f.reconcile(t)
	w = f.watch(t)
	if w.Status.PreviousChannel != nil || len(calEm.Channels(f.calendar)) != 1 || calEm.Channels(f.calendar)[0].ID != w.Status.Channel.ID {
		t.Fatalf("previous channel not stopped: %+v", w.Status.PreviousChannel)
	}
	if got := box.Calls(sandbox.CalendarChannelsStop) - stops; got != 2 {
		t.Fatalf("%d channels.stop calls (one refused, one done)", got)
	}
}

// A renewal whose stop succeeds leaves status naming only the new channel
// after one reconcile, told in one Event that names both channels: with
// the status write, two API writes per renewal.
func TestARenewalIsOneStatusWriteAndOneEvent(t *testing.T) {
	f := newFixture(t, nil)
	f.reconcile(t)
	first := f.watch(t).Status.Channel
	f.clock.SetTime(renewStart(first, 24*time.Hour))
	f.reconcile(t)
	w := f.watch(t)
	if w.Status.Channel.ID == first.ID || w.Status.PreviousChannel != nil {
		t.Fatalf("after renewal: channel %+v previous %+v", w.Status.Channel, w.Status.PreviousChannel)
	}
	if open := calEm.Channels(f.calendar); len(open) != 1 || open[0].ID != w.Status.Channel.ID {
		t.Fatalf("open channels after renewal: %+v", open)
	}
	renewed := f.rec.With("ChannelRenewed")
	if len(renewed) != 1 || !strings.Contains(renewed[0], w.Status.Channel.ID) || !strings.Contains(renewed[0], "stopped "+first.ID) {
		t.Fatalf("ChannelRenewed Events %q", renewed)
	}
	if got := f.rec.With("ChannelStopped"); len(got) != 0 {
		t.Fatalf("a renewal's stop recorded again: %q", got)
	}
}

func TestAChannelGrantedLessThanRenewBeforeIsRenewedHalfway(t *testing.T) {
	calEm.MaxChannelTTL = 2 * time.Hour
	defer func() { calEm.MaxChannelTTL = 7 * 24 * time.Hour }()
	f := newFixture(t, nil)
	f.reconcile(t)
	first := f.watch(t).Status.Channel
	if !first.Expiration.Time.Equal(f.clock.Now().Add(2 * time.Hour)) {
		t.Fatalf("expiration %s", first.Expiration)
	}
	watches := box.Calls(sandbox.CalendarEventsWatch)
	f.reconcile(t)
	f.clock.Step(50 * time.Minute)
	f.reconcile(t)
	if box.Calls(sandbox.CalendarEventsWatch) != watches {
		t.Fatal("a short channel is renewed over and over")
	}
	f.clock.Step(10 * time.Minute)
	f.reconcile(t)
	if box.Calls(sandbox.CalendarEventsWatch) != watches+1 || f.watch(t).Status.Channel.ID == first.ID {
		t.Fatal("not renewed halfway through its life")
	}
}

func TestAGoneSyncTokenMeansAFullSyncThatDeletesVanishedAppointments(t *testing.T) {
	f := newFixture(t, nil)
	vanished, live := f.event("vanishes"), f.event("stays")
	f.appointment(t, "appt-vanished", vanished)
	f.appointment(t, "appt-live", live)
	f.reconcile(t)
	token := f.secret(t, "visits-calendar")[SyncTokenKey]
	// Deleted while the token was invalid, and purged: no cancelled entry
	// will ever come back for it.
	if err := calEm.PurgeEvent(f.calendar, vanished); err != nil {
		t.Fatal(err)
	}
	calEm.InvalidateSyncTokens(f.calendar)
	f.notify(t, 3)
	f.reconcile(t)
	if f.exists(t, "appt-vanished") || !f.exists(t, "appt-live") {
		t.Fatal("the full sync after 410 did not reconcile the appointments")
	}
	w := f.watch(t)
	if w.Status.LastFullSyncTime == nil || f.secret(t, "visits-calendar")[SyncTokenKey] == token || len(f.rec.With("FullSync")) != 1 {
		t.Fatalf("full sync not recorded: %+v", w.Status)
	}
}

func TestA410MidPaginationStartsAFullSync(t *testing.T) {
	f := newFixture(t, nil)
	calEm.SetPageSize(2)
	defer calEm.SetPageSize(0)
	f.reconcile(t)
	ids := make([]string, 5)
	for i := range ids {
		ids[i] = f.event("visit")
		f.appointment(t, "appt-"+string(rune('a'+i)), ids[i])
	}
	for _, id := range ids[:4] {
		if err := calEm.CancelEvent(f.calendar, id); err != nil {
			t.Fatal(err)
		}
	}
	calEm.InvalidateSyncTokensAfterPages(f.calendar, 1)
	lists := box.Calls(sandbox.CalendarEventsList)
	f.notify(t, 9)
	f.reconcile(t)
	for i, id := range ids {
		if f.exists(t, "appt-"+string(rune('a'+i))) == (i < 4) {
			t.Fatalf("appointment of %s (cancelled %v) in the wrong state", id, i < 4)
		}
	}
	if box.Calls(sandbox.CalendarEventsList)-lists < 3 || f.watch(t).Status.LastFullSyncTime == nil {
		t.Fatal("no full sync after the 410 on page 2")
	}
	// The stored token is the last page's: the next sync sees nothing new.
	f.notify(t, 10)
	f.reconcile(t)
	if c := condition(f.watch(t), v1alpha1.SyncedCondition); !strings.HasPrefix(c.Message, "0 changed events") {
		t.Fatalf("after the full sync: %q", c.Message)
	}
}

func TestARecurringInstanceAndASeriesCancelled(t *testing.T) {
	f := newFixture(t, nil)
	start := f.clock.Now().Add(24 * time.Hour).Truncate(time.Hour)
	series := calEm.CreateEvent(f.calendar, sandbox.CalendarEvent{Summary: "daily", Start: start, End: start.Add(time.Hour), Recurrence: []string{"RRULE:FREQ=DAILY;COUNT=5"}})
	f.reconcile(t)
	instance, err := calEm.CancelInstance(f.calendar, series, start.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	other := series + "_" + start.Add(48*time.Hour).UTC().Format("20060102T150405Z")
	f.appointment(t, "appt-instance", instance)
	f.appointment(t, "appt-other", other)
	f.notify(t, 2)
	f.reconcile(t)
	if f.exists(t, "appt-instance") || !f.exists(t, "appt-other") {
		t.Fatal("the cancelled instance's appointment (only) should be gone")
	}
	if err := calEm.CancelEvent(f.calendar, series); err != nil {
		t.Fatal(err)
	}
	f.notify(t, 3)
	f.reconcile(t)
	if f.exists(t, "appt-other") {
		t.Fatal("an instance's appointment outlived its cancelled series")
	}
}

func TestSyncFailuresBackOffThenFallBackToTheBackupTimer(t *testing.T) {
	f := newFixture(t, nil)
	f.reconcile(t)
	box.SetFault(sandbox.CalendarEventsList, sandbox.Fault{Status: http.StatusServiceUnavailable})
	defer box.ClearFault(sandbox.CalendarEventsList)
	// Property 16 on the real controller: 1, 2, 4, 8, 16 s (±10 %, so
	// that watches failing together do not retry together), then the
	// timer.
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second} {
		f.notify(t, int64(100+i))
		if got := f.reconcile(t).RequeueAfter; got < want*9/10 || got > want*11/10 {
			t.Fatalf("failure %d: requeue after %s, want %s ±10 %%", i+1, got, want)
		}
	}
	f.notify(t, 200)
	if got := f.reconcile(t).RequeueAfter; got < 13*time.Minute || got > 17*time.Minute {
		t.Fatalf("after five retries: %s, want the 15-minute timer", got)
	}
	w := f.watch(t)
	if c := condition(w, v1alpha1.SyncedCondition); c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.UpstreamUnavailableReason {
		t.Fatalf("Synced %+v", c)
	}
	// 429 and 403 rateLimitExceeded: Retry-After is honoured.
	for _, fault := range []sandbox.Fault{
		{Status: http.StatusTooManyRequests, Body: sandbox.GoogleTooManyRequestsBody, RetryAfter: "40"},
		{Status: http.StatusForbidden, Body: sandbox.GoogleRateLimitBody, RetryAfter: "40"},
	} {
		f2 := newFixture(t, nil)
		f2.reconcile(t)
		box.SetFault(sandbox.CalendarEventsList, fault)
		f2.notify(t, 5)
		if got := f2.reconcile(t).RequeueAfter; got < 40*time.Second || got > time.Minute {
			t.Fatalf("%d: requeue after %s, want Retry-After's 40 s", fault.Status, got)
		}
		if c := condition(f2.watch(t), v1alpha1.StalledCondition); c.Status == metav1.ConditionTrue {
			t.Fatalf("%d stalled the watch", fault.Status)
		}
	}
}

func TestAuthenticationErrorsNeedReauth(t *testing.T) {
	f := newFixture(t, nil)
	f.reconcile(t)
	box.SetFault(sandbox.CalendarEventsList, sandbox.Fault{Status: http.StatusUnauthorized, Body: `{"error":{"code":401,"message":"Invalid Credentials","errors":[{"domain":"global","reason":"authError","message":"Invalid Credentials"}]}}`})
	defer box.ClearFault(sandbox.CalendarEventsList)
	f.notify(t, 5)
	f.reconcile(t)
	w := f.watch(t)
	if c := condition(w, v1alpha1.StalledCondition); c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReauthRequiredReason {
		t.Fatalf("Stalled %+v", c)
	}
	if c := condition(w, v1alpha1.AuthenticatedCondition); c.Status != metav1.ConditionFalse {
		t.Fatalf("Authenticated %+v", c)
	}

	// A refresh token Google revoked: invalid_grant on the refresh.
	g := newFixture(t, nil)
	g.reconcile(t)
	googleEm.Revoke(g.secret(t, "google-token")["refresh_token"])
	g.clock.Step(time.Hour)
	g.reconcile(t)
	if c := condition(g.watch(t), v1alpha1.StalledCondition); c.Reason != v1alpha1.ReauthRequiredReason {
		t.Fatalf("after revocation: %+v", c)
	}
}

func TestTheTokenIsRefreshedBeforeItExpires(t *testing.T) {
	f := newFixture(t, nil)
	f.reconcile(t)
	exp := f.watch(t).Status.TokenExpiresAt.Time
	refreshes := box.Calls(sandbox.GoogleOAuthToken)
	f.clock.SetTime(exp.Add(-6 * time.Minute))
	f.reconcile(t)
	if box.Calls(sandbox.GoogleOAuthToken) != refreshes {
		t.Fatal("refreshed more than tokenRefreshBefore early")
	}
	f.clock.SetTime(exp.Add(-5 * time.Minute))
	f.reconcile(t)
	if box.Calls(sandbox.GoogleOAuthToken) != refreshes+1 || !f.watch(t).Status.TokenExpiresAt.After(exp) {
		t.Fatal("not refreshed 5 minutes before expiry")
	}
}

func TestARefusedChannelDoesNotStopTheBackupSync(t *testing.T) {
	// Google's 401 push.webhookUrlUnauthorized is about the address, not
	// the grant: no re-authentication.
	calEm.RefuseAddress(pushURL, http.StatusUnauthorized)
	f := newFixture(t, nil)
	id := f.event("visit")
	f.appointment(t, "appt", id)
	f.reconcile(t)
	w := f.watch(t)
	if c := condition(w, v1alpha1.ChannelReadyCondition); c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ChannelRefusedReason {
		t.Fatalf("ChannelReady %+v", c)
	}
	if !status.IsTrue(w, v1alpha1.ReadyCondition) || !status.IsTrue(w, v1alpha1.AuthenticatedCondition) || w.Status.Channel != nil || w.Status.ChannelFailures != 1 {
		t.Fatalf("status %+v", w.Status)
	}
	if err := calEm.CancelEvent(f.calendar, id); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(15 * time.Minute)
	f.reconcile(t)
	if f.exists(t, "appt") {
		t.Fatal("no backup sync without a channel")
	}
	calEm.RefuseAddress(pushURL, 0)
	f.clock.Step(time.Minute)
	f.reconcile(t)
	if w := f.watch(t); w.Status.Channel == nil || w.Status.ChannelFailures != 0 {
		t.Fatalf("channel not opened once the address was accepted: %+v", w.Status)
	}
}

func TestDeleteStopsTheChannelOrGivesUpWithoutAGrant(t *testing.T) {
	f := newFixture(t, nil)
	f.reconcile(t)
	stops := box.Calls(sandbox.CalendarChannelsStop)
	if err := env.Client.Delete(context.Background(), f.watch(t)); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	if !apierrors.IsNotFound(env.Client.Get(context.Background(), f.key, &v1alpha1.CalendarWatch{})) || box.Calls(sandbox.CalendarChannelsStop) != stops+1 {
		t.Fatal("the channel was not stopped before the finalizer went")
	}

	g := newFixture(t, nil)
	g.reconcile(t)
	if err := env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: g.ns, Name: "google-token"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(context.Background(), g.watch(t)); err != nil {
		t.Fatal(err)
	}
	res := g.reconcile(t)
	w := g.watch(t)
	// The fake clock started at the fixture's second; the server stamped
	// the deletion a moment later, so the give-up lies up to a second past
	// ten minutes from the clock's now.
	if giveUp := w.DeletionTimestamp.Add(10 * time.Minute).Sub(g.clock.Now()); res.RequeueAfter <= 0 || res.RequeueAfter > giveUp {
		t.Fatalf("requeue after %s, past the give-up %s away", res.RequeueAfter, giveUp)
	}
	if len(w.Finalizers) == 0 {
		t.Fatal("the finalizer went although the channel could not be stopped")
	}
	g.clock.SetTime(w.DeletionTimestamp.Add(10 * time.Minute))
	g.reconcile(t)
	if !apierrors.IsNotFound(env.Client.Get(context.Background(), g.key, &v1alpha1.CalendarWatch{})) || len(g.rec.With("DeleteGaveUp")) != 1 {
		t.Fatal("deletion without a grant did not give up after 10 minutes with a Warning")
	}
}

func TestAForbiddenSinkKindStallsWithAReason(t *testing.T) {
	f := newFixture(t, func(w *v1alpha1.CalendarWatch) {
		w.Spec.Sink.Objects = &v1alpha1.ObjectSink{APIVersion: "v1", Kind: "ConfigMap"}
	})
	// The manager's own identity without configmaps: a ServiceAccount with
	// no rights at all, impersonated.
	cfg := *env.Config
	cfg.Impersonate.UserName = "system:serviceaccount:" + f.ns + ":nobody"
	limited, err := client.New(&cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	f.r.APIReader = limited
	id := f.event("visit")
	f.reconcile(t)
	if err := calEm.CancelEvent(f.calendar, id); err != nil {
		t.Fatal(err)
	}
	f.notify(t, 4)
	f.reconcile(t)
	c := condition(f.watch(t), v1alpha1.StalledCondition)
	if c.Reason != v1alpha1.SinkForbiddenReason || !strings.Contains(c.Message, "grant its ServiceAccount list and delete on configmaps") {
		t.Fatalf("Stalled %+v", c)
	}
}

func TestTheHTTPSinkIsSignedRetriedAndNeverBlocksDeletion(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	var bodies [][]byte
	fails := 2
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got, bodies = append(got, r), append(bodies, b)
		if fails > 0 {
			fails--
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer sink.Close()
	f := newFixture(t, func(w *v1alpha1.CalendarWatch) {
		w.Spec.Sink.HTTP = &v1alpha1.HTTPSink{URL: sink.URL + "/cancelled", SigningSecretRef: v1alpha1.SecretReference{Name: "sink-key"}}
	})
	key := []byte("0123456789abcdef-signing")
	if err := env.Client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "sink-key"}, Data: map[string][]byte{SigningKey: key}}); err != nil {
		t.Fatal(err)
	}
	id := f.event("visit")
	f.appointment(t, "appt", id)
	f.reconcile(t)
	if err := calEm.CancelEvent(f.calendar, id); err != nil {
		t.Fatal(err)
	}
	f.notify(t, 2)
	f.reconcile(t)
	w := f.watch(t)
	if f.exists(t, "appt") || len(w.Status.PendingDeliveries) != 1 || w.Status.NextDeliveryAt == nil {
		t.Fatalf("a failing sink held up the deletion or was not queued: %+v", w.Status)
	}
	if d := w.Status.NextDeliveryAt.Sub(f.clock.Now()); d != time.Second {
		t.Fatalf("first retry in %s", d)
	}
	f.clock.Step(time.Second)
	f.reconcile(t)
	if d := f.watch(t).Status.NextDeliveryAt.Sub(f.clock.Now()); d != 2*time.Second {
		t.Fatalf("second retry in %s", d)
	}
	f.clock.Step(2 * time.Second)
	f.reconcile(t)
	if w := f.watch(t); len(w.Status.PendingDeliveries) != 0 || !status.IsTrue(w, v1alpha1.DeliveredCondition) {
		t.Fatalf("not delivered: %+v", w.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("%d deliveries", len(got))
	}
	var d Delivery
	if err := json.Unmarshal(bodies[2], &d); err != nil || d.EventID != id || d.Appointment != "appt" || d.CalendarID != f.calendar || d.DeletedAt.IsZero() {
		t.Fatalf("body %s", bodies[2])
	}
	r := got[2]
	if !hmac.Equal([]byte(r.Header.Get(SignatureHeader)), []byte(Sign(key, r.Header.Get(TimestampHeader), bodies[2]))) {
		t.Fatal("signature does not verify")
	}
	if k := r.Header.Get(IdempotencyKeyHeader); k == "" || k != got[0].Header.Get(IdempotencyKeyHeader) {
		t.Fatal("the idempotency key changed between retries")
	}
	if outbound.SinkUpstream != "sink" {
		t.Fatal("sink label")
	}
}

// Issue 18, item 5: an event cancelled while the watch was suspended was
// pushed to no channel; resuming syncs at once, not on the backup timer.
func TestResumingSyncsWhatChangedWhileSuspended(t *testing.T) {
	f := newFixture(t, nil)
	id := f.event("visit")
	f.appointment(t, "appt", id)
	f.reconcile(t)
	f.setSuspend(t, true)
	f.reconcile(t)
	if w := f.watch(t); w.Status.Channel != nil || len(calEm.Channels(f.calendar)) != 0 {
		t.Fatalf("suspended with a channel: %+v", w.Status.Channel)
	}
	if err := calEm.CancelEvent(f.calendar, id); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(time.Minute)
	f.reconcile(t)
	if !f.exists(t, "appt") {
		t.Fatal("a suspended watch synced")
	}
	// A sync that fails at resume is tried again until one succeeds: the
	// promise does not end with the first reconcile after resuming.
	box.SetFault(sandbox.CalendarEventsList, sandbox.Fault{Status: http.StatusServiceUnavailable, Times: 1})
	f.setSuspend(t, false)
	f.reconcile(t)
	if !f.exists(t, "appt") {
		t.Fatal("deleted although events.list failed")
	}
	f.clock.Step(time.Second)
	f.reconcile(t)
	w := f.watch(t)
	if f.exists(t, "appt") {
		t.Fatalf("resuming did not sync what changed meanwhile (last sync %s, now %s)", w.Status.LastSyncTime, f.clock.Now())
	}
	if w.Status.Channel == nil || len(calEm.Channels(f.calendar)) != 1 || w.Status.SyncDue {
		t.Fatalf("after resume: channel %+v, sandbox %d channels, syncDue %v", w.Status.Channel, len(calEm.Channels(f.calendar)), w.Status.SyncDue)
	}
	// Then the backup timer again: nothing more until it runs out.
	syncs := w.Status.Syncs
	f.clock.Step(time.Minute)
	f.reconcile(t)
	if got := f.watch(t).Status.Syncs; got != syncs {
		t.Fatalf("syncs %d → %d a minute after the resume sync", syncs, got)
	}
}

func (f *fixture) setSuspend(t *testing.T, on bool) {
	t.Helper()
	w := f.watch(t)
	patch := client.MergeFrom(w.DeepCopy())
	w.Spec.Suspend = on
	if err := env.Client.Patch(context.Background(), w, patch); err != nil {
		t.Fatal(err)
	}
}

// Issue 18, item 6: status.nextChannelAttemptAt is a promise (1 s
// doubling to an hour), kept even when a phase after the channel ends the
// reconcile: a stalled sink (rechecked every backupSyncInterval), or a
// sync whose retries ran out (then on the backup timer).
func TestARefusedChannelIsTriedAgainWhenStatusSaysWhateverEndsTheReconcile(t *testing.T) {
	calEm.RefuseAddress(pushURL, http.StatusBadRequest)
	defer calEm.RefuseAddress(pushURL, 0)
	// refusals reconciles at the times the controller asks for and checks
	// that each attempt status promises is made by then: status stores it
	// to the second (so up to a second later), and the controller may be
	// late by a fifth of the wait (it asks for the wait / 0.9 so that the
	// runner's ±10 % never brings it early), never more.
	refusals := func(t *testing.T, f *fixture, n int) {
		t.Helper()
		res := f.reconcile(t)
		for range n {
			w := f.watch(t)
			at, failures := w.Status.NextChannelAttemptAt, w.Status.ChannelFailures
			if at == nil || w.Status.Channel != nil {
				t.Fatalf("no refused channel: %+v", w.Status)
			}
			promised := at.Add(time.Second)
			latest := promised.Add(promised.Sub(f.clock.Now()) / 4)
			for reconciles := 0; f.watch(t).Status.ChannelFailures == failures; reconciles++ {
				if res.RequeueAfter <= 0 || reconciles == 3 {
					t.Fatalf("after %d refusals: requeue after %s, no attempt yet, status promised one at %s", failures, res.RequeueAfter, at.UTC().Format(time.RFC3339))
				}
				f.clock.Step(res.RequeueAfter)
				res = f.reconcile(t)
			}
			if f.clock.Now().After(latest) {
				t.Fatalf("after %d refusals: attempt at %s, status promised %s", failures, f.clock.Now().UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339))
			}
		}
	}

	t.Run("a stalled sink", func(t *testing.T) {
		f := newFixture(t, func(w *v1alpha1.CalendarWatch) {
			w.Spec.Sink.HTTP = &v1alpha1.HTTPSink{URL: "http://169.254.169.254/cancelled", SigningSecretRef: v1alpha1.SecretReference{Name: "sink-key"}}
		})
		refusals(t, f, 4)
		if c := condition(f.watch(t), v1alpha1.StalledCondition); c.Reason != v1alpha1.SinkAddressRefusedReason {
			t.Fatalf("Stalled %+v", c)
		}
	})

	t.Run("a sync on the backup timer", func(t *testing.T) {
		box.SetFault(sandbox.CalendarEventsList, sandbox.Fault{Status: http.StatusServiceUnavailable})
		defer box.ClearFault(sandbox.CalendarEventsList)
		f := newFixture(t, nil)
		refusals(t, f, 8)
		if c := condition(f.watch(t), v1alpha1.SyncedCondition); c.Reason != v1alpha1.UpstreamUnavailableReason {
			t.Fatalf("Synced %+v", c)
		}
	})
}

// Issue 18, item 7: Google lets a client choose event ids of 5 to 1024
// base32hex characters; one longer than a label value (63) is carried
// hashed (EventIDLabelValue), a cancelled one whose appointment nothing
// carries is told in status and a Warning Event, never silently skipped.
func TestLongClientChosenEventIDsAreMatchedThroughTheirHash(t *testing.T) {
	var mu sync.Mutex
	var told []string
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d Delivery
		_ = json.NewDecoder(r.Body).Decode(&d)
		mu.Lock()
		told = append(told, d.EventID)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer sink.Close()
	f := newFixture(t, func(w *v1alpha1.CalendarWatch) {
		w.Spec.Sink.HTTP = &v1alpha1.HTTPSink{URL: sink.URL, SigningSecretRef: v1alpha1.SecretReference{Name: "sink-key"}}
	})
	if err := env.Client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "sink-key"}, Data: map[string][]byte{SigningKey: []byte("0123456789abcdef-signing")}}); err != nil {
		t.Fatal(err)
	}
	start := f.clock.Now().Add(24 * time.Hour).Truncate(time.Hour)
	long := strings.Repeat("0123456789abcdefghijklmnopqrstuv", 32) // 1024, Google's longest
	single := calEm.CreateEvent(f.calendar, sandbox.CalendarEvent{ID: long, Summary: "visit", Start: start, End: start.Add(time.Hour)})
	series := calEm.CreateEvent(f.calendar, sandbox.CalendarEvent{ID: long[:100], Summary: "daily", Start: start, End: start.Add(time.Hour), Recurrence: []string{"RRULE:FREQ=DAILY;COUNT=3"}})
	orphan := calEm.CreateEvent(f.calendar, sandbox.CalendarEvent{ID: long[:70], Summary: "no appointment", Start: start, End: start.Add(time.Hour)})
	if single != long || series != long[:100] {
		t.Fatal("the emulator did not keep the client's ids")
	}
	instance := series + "_" + start.Add(24*time.Hour).UTC().Format("20060102T150405Z")
	f.appointment(t, "appt-single", EventIDLabelValue(single))
	f.appointment(t, "appt-instance", EventIDLabelValue(instance))
	f.reconcile(t)
	for _, id := range []string{single, series, orphan} {
		if err := calEm.CancelEvent(f.calendar, id); err != nil {
			t.Fatal(err)
		}
	}
	f.notify(t, 5)
	f.reconcile(t)
	if f.exists(t, "appt-single") || f.exists(t, "appt-instance") {
		t.Fatal("the appointments of cancelled events with long ids are still there")
	}
	w := f.watch(t)
	if len(w.Status.UnmatchedEvents) != 1 || w.Status.UnmatchedEvents[0].EventID != orphan || w.Status.UnmatchedEvents[0].LabelValue != EventIDLabelValue(orphan) {
		t.Fatalf("unmatched %+v", w.Status.UnmatchedEvents)
	}
	evs := f.rec.With("AppointmentNotMatched")
	if len(evs) != 1 || !strings.Contains(evs[0], EventIDLabelValue(orphan)) || !strings.Contains(evs[0], "Warning") {
		t.Fatalf("events %v", f.rec.All())
	}
	for _, e := range f.rec.All() {
		if len(e) > 1024 {
			t.Fatalf("an Event note the API server would refuse (%d bytes)", len(e))
		}
	}
	// The HTTP sink is told every cancelled id in full.
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 3 || told[0] != single || told[1] != series || told[2] != orphan {
		t.Fatalf("the sink was told %d ids", len(told))
	}
}

func TestEventIDLabelValuesAreValidLabelValues(t *testing.T) {
	long := strings.Repeat("v", 1024)
	for _, c := range []struct{ id, want string }{
		{"5qk0l2ab3cd4ef5gh6ij7kl8mn", "5qk0l2ab3cd4ef5gh6ij7kl8mn"},
		{"5qk0l2ab3cd4ef5gh6ij7kl8mn_20261201T090000Z", "5qk0l2ab3cd4ef5gh6ij7kl8mn_20261201T090000Z"},
		{long, HashedEventID(long)},
		{long + "_20261201T090000Z", HashedEventID(long) + "_20261201T090000Z"},
		{long + "_20261201", HashedEventID(long) + "_20261201"},
		{long[:60] + "_20261201T090000Z", HashedEventID(long[:60]) + "_20261201T090000Z"},
	} {
		got := EventIDLabelValue(c.id)
		if got != c.want || len(validation.IsValidLabelValue(got)) > 0 {
			t.Errorf("EventIDLabelValue(%.20s… %d chars) = %q, want %q", c.id, len(c.id), got, c.want)
		}
	}
	if h := HashedEventID(long); !strings.HasPrefix(h, "sha256-") || len(h) != 39 {
		t.Fatalf("hashed %q", h)
	}
}

// A reconcile that reads the watch before the cache shows the channel the
// last one opened (the channel Secret's own event queues it at once) opens
// no second channel: one would stay open at Google, its pushes refused as
// stopped. When the cached channel Secret already records the channel,
// status names it again from there; when it does not either, the
// reconcile looks again shortly. Once the cache has caught up, the
// channel is kept.
func TestAReconcileOnACopyOlderThanTheOpenedChannelOpensNoOther(t *testing.T) {
	f := newFixture(t, nil)
	// The copy a lagging cache holds: the finalizer added (its patch
	// answers with the stored object), the status naming no channel yet.
	before := f.watch(t)
	controllerutil.AddFinalizer(before, v1alpha1.Finalizer)
	f.reconcile(t)
	opened := f.watch(t).Status.Channel
	watches := box.Calls(sandbox.CalendarEventsWatch)
	var sec corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: ChannelSecretName("visits")}, &sec); err != nil {
		t.Fatal(err)
	}
	if got := recordedChannels(&sec); len(got) != 1 || got[0].ID != opened.ID {
		t.Fatalf("the channel Secret records %+v, want %s", got, opened.ID)
	}
	unrecorded := sec.DeepCopy()
	delete(unrecorded.Annotations, ChannelsAnnotation)

	for _, c := range []struct {
		name  string
		stale client.Client
		// soon: the reconcile must look again shortly, status naming
		// nothing it can trust.
		soon bool
	}{
		{"watch and Secret stale", testenv.StaleReads{Client: testenv.StaleReads{Client: env.Client, Stale: unrecorded}, Stale: before}, true},
		{"watch stale, Secret recording the channel", testenv.StaleReads{Client: env.Client, Stale: before}, false},
	} {
		f.r.Client = c.stale
		f.run = f.r.Runner()
		res := f.reconcile(t)
		if got := box.Calls(sandbox.CalendarEventsWatch) - watches; got != 0 {
			t.Fatalf("%s: a reconcile on a copy without the channel opened %d more", c.name, got)
		}
		if w := f.watch(t); w.Status.Channel == nil || w.Status.Channel.ID != opened.ID {
			t.Fatalf("%s: status names channel %+v, want %s", c.name, w.Status.Channel, opened.ID)
		}
		if soon := res.RequeueAfter > 0 && res.RequeueAfter <= 2*cacheLagWait; soon != c.soon {
			t.Fatalf("%s: requeue after %s, want about %s: %t", c.name, res.RequeueAfter, cacheLagWait, c.soon)
		}
	}

	f.r.Client = env.Client
	f.run = f.r.Runner()
	f.reconcile(t)
	if open := calEm.Channels(f.calendar); box.Calls(sandbox.CalendarEventsWatch) != watches || len(open) != 1 || open[0].ID != opened.ID {
		t.Fatalf("after the cache caught up: %d events.watch calls, open channels %+v", box.Calls(sandbox.CalendarEventsWatch)-watches, open)
	}
}

// A reconcile that reads the watch before the cache shows the notification
// the last one synced for (the sync's cursor write queues it at once)
// lists the calendar no second time, and keeps the status's record; a
// newer notification on that copy is synced.
func TestAReconcileOnACopyOlderThanTheSyncedNotificationSyncsNoMore(t *testing.T) {
	f := newFixture(t, nil)
	f.reconcile(t)
	f.notify(t, 5)
	// The copy a lagging cache holds: the notification recorded, the
	// status not yet saying it was handled.
	before := f.watch(t)
	f.reconcile(t)
	synced := f.watch(t).Status.LastNotification
	if synced == nil || synced.MessageNumber != 5 {
		t.Fatalf("the notification was not handled: %+v", synced)
	}
	lists := box.Calls(sandbox.CalendarEventsList)

	f.r.Client = testenv.StaleReads{Client: env.Client, Stale: before}
	f.run = f.r.Runner()
	f.reconcile(t)
	if got := box.Calls(sandbox.CalendarEventsList) - lists; got != 0 {
		t.Fatalf("a reconcile on a copy from before the sync listed the calendar %d more times", got)
	}
	if w := f.watch(t); w.Status.LastNotification == nil || w.Status.LastNotification.MessageNumber != 5 {
		t.Fatalf("the record was lost: %+v", w.Status.LastNotification)
	}

	// A newer notification is synced, whatever the copy.
	metav1.SetMetaDataAnnotation(&before.ObjectMeta, v1alpha1.CalendarNotificationAnnotation,
		calendarpush.Notification{ChannelID: before.Status.Channel.ID, MessageNumber: 6, State: "exists"}.String())
	f.reconcile(t)
	if got := box.Calls(sandbox.CalendarEventsList) - lists; got != 1 {
		t.Fatalf("a newer notification listed the calendar %d times, want 1", got)
	}
}
