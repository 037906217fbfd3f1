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
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// Issue 35 §2: a calendar the account may not read (Google's 404 notFound
// to events.list and events.watch) stalls the watch, and its channel
// attempts wait as the stalled sync does, a backup interval, not the
// channel's one-second backoff: a handful of calls in the ten minutes
// after the refusal, following every requeue the controller asks for.
// Sharing the calendar and a requested-at open the channel at once.
func TestACalendarRefusedForGoodIsNotWatchedAgainAndAgain(t *testing.T) {
	hidden := "hidden" + strconv.FormatInt(calCount.Add(1), 10) + "@example.com"
	f := newFixture(t, func(w *v1alpha1.CalendarWatch) { w.Spec.CalendarID = hidden })
	watches, lists := box.Calls(sandbox.CalendarEventsWatch), box.Calls(sandbox.CalendarEventsList)
	end := f.clock.Now().Add(10 * time.Minute)
	for reconciles := 0; f.clock.Now().Before(end); reconciles++ {
		res := f.reconcile(t)
		if res.RequeueAfter <= 0 || reconciles > 50 {
			t.Fatalf("reconcile %d asked for a requeue after %s", reconciles, res.RequeueAfter)
		}
		f.clock.Step(res.RequeueAfter)
	}
	w := f.watch(t)
	if c := condition(w, v1alpha1.StalledCondition); c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.UpstreamRejectedReason {
		t.Fatalf("Stalled %+v", c)
	}
	if c := condition(w, v1alpha1.ChannelReadyCondition); c.Reason != v1alpha1.ChannelRefusedReason {
		t.Fatalf("ChannelReady %+v", c)
	}
	if n, l := box.Calls(sandbox.CalendarEventsWatch)-watches, box.Calls(sandbox.CalendarEventsList)-lists; n > 2 || l > 3 {
		t.Fatalf("%d events.watch and %d events.list calls in the ten minutes after a 404, want a handful", n, l)
	}
	calEm.AddCalendar(hidden)
	before := f.watch(t)
	metav1.SetMetaDataAnnotation(&before.ObjectMeta, v1alpha1.RequestedAtAnnotation, "shared")
	if err := env.Client.Update(context.Background(), before); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	if w := f.watch(t); w.Status.Channel == nil || condition(w, v1alpha1.ChannelReadyCondition).Status != metav1.ConditionTrue {
		t.Fatalf("the shared calendar's channel not opened at once: %+v", w.Status)
	}
}

// Issue 35 §2: a renewal Google refuses while the old channel still works
// keeps ChannelReady True (pushes still arrive) but says so in its message
// and in a Warning Event, before the old channel runs out.
func TestARefusedRenewalIsToldWhileTheOldChannelWorks(t *testing.T) {
	f := newFixture(t, nil)
	f.reconcile(t)
	first := f.watch(t).Status.Channel
	calEm.RefuseAddress(pushURL, http.StatusBadRequest)
	defer calEm.RefuseAddress(pushURL, 0)
	f.clock.SetTime(renewStart(first, 24*time.Hour))
	f.reconcile(t)
	w := f.watch(t)
	c := condition(w, v1alpha1.ChannelReadyCondition)
	if w.Status.Channel == nil || w.Status.Channel.ID != first.ID || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.RenewalRefusedReason ||
		!strings.Contains(c.Message, "renewal") || !strings.Contains(c.Message, first.Expiration.UTC().Format(time.RFC3339)) {
		t.Fatalf("ChannelReady %+v with channel %+v", c, w.Status.Channel)
	}
	if got := f.rec.With(v1alpha1.RenewalRefusedReason); len(got) != 1 {
		t.Fatalf("Events %v, want one RenewalRefused Warning", got)
	}
}
