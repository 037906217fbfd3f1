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
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/controller/calendarwatch"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// Issue 35 §3: what a CalendarWatch relies on to keep one channel open and
// to apply each cancellation once must come back from what a restore
// brings back (spec, the channel Secret), not from status.

// readyBound is how long a restored or re-applied watch may take to be
// Ready again with no person's help, on a loaded 2-core machine.
const readyBound = 90 * time.Second

// readyAgain waits for the watch, a new object (not oldUID), to be Ready
// with a channel of its own and a sync done, and for the webhook to know
// it.
func (f *fixture) readyAgain(t *testing.T, oldUID string) *v1alpha1.CalendarWatch {
	t.Helper()
	var w *v1alpha1.CalendarWatch
	testenv.EventuallyReport(t, readyBound, "the watch Ready again with a channel of its own", func() (bool, string) {
		w = &v1alpha1.CalendarWatch{}
		if err := env.Client.Get(context.Background(), f.key, w); err != nil {
			return false, err.Error()
		}
		ok := string(w.UID) != oldUID && status.IsTrue(w, v1alpha1.ReadyCondition) && w.Status.LastSyncTime != nil &&
			w.Status.Channel != nil && strings.HasPrefix(w.Status.Channel.ID, "sb-"+string(w.UID)+"-")
		return ok, fmt.Sprintf("uid %s, conditions %+v, channel %+v", w.UID, w.Status.Conditions, w.Status.Channel)
	})
	tok := f.channelToken(t)
	eventually(t, "the webhook knows the watch and its token", func() bool {
		return push(t, pushHeaders(w.Status.Channel.ID, tok, "sync", 1)) == http.StatusOK
	})
	return w
}

// oneOpenChannel waits until the sandbox has exactly one channel open on
// the calendar, the one status names.
func (f *fixture) oneOpenChannel(t *testing.T, w *v1alpha1.CalendarWatch) {
	t.Helper()
	testenv.EventuallyReport(t, readyBound, "exactly one open channel, the watch's", func() (bool, string) {
		open := calEm.Channels(f.calendar)
		return len(open) == 1 && open[0].ID == w.Status.Channel.ID, fmt.Sprintf("open %+v, status %s", open, w.Status.Channel.ID)
	})
}

// deletions counts the AppointmentDeleted Events naming eventID, across
// every incarnation of the watch (an Event repeated within minutes is a
// series: its count).
func (f *fixture) deletions(t *testing.T, eventID string) int32 {
	t.Helper()
	var n int32
	for _, e := range f.events(t, "AppointmentDeleted") {
		if !strings.Contains(e.Note, eventID) {
			continue
		}
		if e.Series != nil {
			n += e.Series.Count
		} else {
			n++
		}
	}
	return n
}

// stopped reports whether a ChannelStopped Event names channel.
func (f *fixture) stopped(t *testing.T, channel string) bool {
	t.Helper()
	for _, e := range f.events(t, "ChannelStopped") {
		if strings.Contains(e.Note, channel) {
			return true
		}
	}
	return false
}

func (f *fixture) secretObj(name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}}
}

// isOpen reports whether the sandbox has channel open.
func isOpen(calendar, channel string) bool {
	for _, ch := range calEm.Channels(calendar) {
		if ch.ID == channel {
			return true
		}
	}
	return false
}

// afterAnotherSync makes the calendar push again and waits for the
// resulting sync: a barrier after which a second deletion would have
// happened.
func (f *fixture) afterAnotherSync(t *testing.T) {
	t.Helper()
	syncs := f.watch(t).Status.Syncs
	calEm.Notify(f.calendar)
	eventually(t, "another sync", func() bool { return f.watch(t).Status.Syncs > syncs })
}

func TestAVeleroRestoreStopsTheOldChannelAndAppliesACancellationMadeDuringTheOutage(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	keep := calEm.CreateEvent(f.calendar, sandbox.CalendarEvent{Summary: "visit B", Start: time.Now().Add(48 * time.Hour), End: time.Now().Add(49 * time.Hour)})
	gone := calEm.CreateEvent(f.calendar, sandbox.CalendarEvent{Summary: "visit A", Start: time.Now().Add(24 * time.Hour), End: time.Now().Add(25 * time.Hour)})
	f.appointment(t, "appt-gone", gone)
	f.appointment(t, "appt-keep", keep)
	old := f.ready(t)
	eventually(t, "the sync cursor stored", func() bool {
		sec := f.secretObj(calendarwatch.ChannelSecretName("visits"))
		return env.Client.Get(ctx, client.ObjectKeyFromObject(sec), sec) == nil && len(sec.Data[calendarwatch.SyncTokenKey]) > 0
	})

	// The outage: the manager stops, the backup is taken, the cluster is
	// lost (no finalizer runs: the old channel stays open at Google).
	stopControllers()
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = startControllers(env)
		}
	})
	backup, err := testenv.TakeBackup(ctx, env.Client,
		&v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Name: "visits", Namespace: f.ns}},
		f.secretObj("visits-calendar"), f.secretObj("visits-oauth-connect"), f.secretObj("google-client"), f.secretObj("google-token"),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "appt-gone", Namespace: f.ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "appt-keep", Namespace: f.ns}})
	if err != nil {
		t.Fatal(err)
	}
	if err := backup.Lose(ctx, readyBound); err != nil {
		t.Fatal(err)
	}
	// Cancelled while nothing of the watch exists: the push on the old
	// channel finds no watch (404), so only the stored cursor can bring
	// the cancellation back.
	if err := calEm.CancelEvent(f.calendar, gone); err != nil {
		t.Fatal(err)
	}
	if err := calEm.WaitPushesIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if !isOpen(f.calendar, old.Status.Channel.ID) {
		t.Fatal("the old channel was stopped before the restore: nothing is left to test")
	}

	if err := backup.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	began := time.Now()
	if err := startControllers(env); err != nil {
		t.Fatal(err)
	}
	w := f.readyAgain(t, string(old.UID))
	t.Logf("Ready again %s after the manager started", time.Since(began).Round(time.Millisecond))
	f.oneOpenChannel(t, w)
	if !f.stopped(t, old.Status.Channel.ID) {
		t.Fatalf("no ChannelStopped Event for the old channel %s", old.Status.Channel.ID)
	}
	eventually(t, "the appointment of the event cancelled during the outage deleted", func() bool { return !f.exists(t, "appt-gone") })
	if !f.exists(t, "appt-keep") {
		t.Fatal("the appointment of a live event was deleted")
	}
	f.afterAnotherSync(t)
	if got := f.deletions(t, gone); got != 1 {
		t.Fatalf("%d deletions recorded for one cancellation", got)
	}
	if w = f.watch(t); w.Status.AppointmentsDeleted != 1 {
		t.Fatalf("status counts %d deletions", w.Status.AppointmentsDeleted)
	}
	if open := calEm.Channels(f.calendar); len(open) != 1 || open[0].ID != w.Status.Channel.ID {
		t.Fatalf("after another sync: open %+v, status %s", open, w.Status.Channel.ID)
	}
}

func TestAGitOpsReapplyStopsTheChannelAndOpensOne(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	gone := calEm.CreateEvent(f.calendar, sandbox.CalendarEvent{Summary: "visit", Start: time.Now().Add(24 * time.Hour), End: time.Now().Add(25 * time.Hour)})
	f.appointment(t, "appt-gone", gone)
	old := f.ready(t)
	// What Git holds: the watch as a person wrote it.
	manifest := &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Name: old.Name, Namespace: old.Namespace}, Spec: old.Spec}
	if err := testenv.Reapply(ctx, env.Client, manifest, readyBound); err != nil {
		t.Fatal(err)
	}
	if isOpen(f.calendar, old.Status.Channel.ID) || !f.stopped(t, old.Status.Channel.ID) {
		t.Fatalf("the deleted watch's channel %s was not stopped", old.Status.Channel.ID)
	}
	w := f.readyAgain(t, string(old.UID))
	f.oneOpenChannel(t, w)
	// The re-created watch syncs and deletes, once.
	if err := calEm.CancelEvent(f.calendar, gone); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the appointment deleted", func() bool { return !f.exists(t, "appt-gone") })
	f.afterAnotherSync(t)
	if got := f.deletions(t, gone); got != 1 {
		t.Fatalf("%d deletions recorded for one cancellation", got)
	}
	if open := calEm.Channels(f.calendar); len(open) != 1 || open[0].ID != f.watch(t).Status.Channel.ID {
		t.Fatalf("after the sync: open %+v", open)
	}
}
