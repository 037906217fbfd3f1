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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/audit/audittest"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
)

// Seed 002 Property 4 on the record that outlives Events: each appointment
// a cancelled event deletes is one audit line with the source "Google
// Calendar Sync", the event id and the object deleted; syncing again
// deletes nothing and records nothing.
func TestEachAppointmentDeletionIsAuditedOnceWithItsSource(t *testing.T) {
	facts := audittest.Capture(t)
	f := newFixture(t, nil)
	gone, keep := f.event("visit A"), f.event("visit B")
	f.appointment(t, "appt-a", gone)
	f.appointment(t, "appt-b", keep)
	f.reconcile(t)
	if n := len(facts.Of(audit.AppointmentDeleted, f.ns)); n != 0 {
		t.Fatalf("%d deletions audited before any event was cancelled", n)
	}
	if err := calEm.CancelEvent(f.calendar, gone); err != nil {
		t.Fatal(err)
	}
	f.notify(t, 7)
	f.reconcile(t)
	if f.exists(t, "appt-a") {
		t.Fatal("appt-a was not deleted")
	}
	line := facts.One(t, audit.AppointmentDeleted, f.ns)
	audittest.Want(t, line, map[string]any{"kind": "CalendarWatch", "name": "visits", "source": "Google Calendar Sync", "eventID": gone,
		"reason": "cancelled", "deletedAPIVersion": "v1", "deletedKind": "ConfigMap", "deletedName": "appt-a"})
	if uid, _ := line["deletedUID"].(string); uid == "" {
		t.Error("the deleted object's UID is not recorded")
	}

	// Another notification, and the backup sync: nothing more is deleted,
	// nothing more recorded.
	f.notify(t, 8)
	f.reconcile(t)
	f.clock.Step(time.Hour)
	f.reconcile(t)
	if n := len(facts.Of(audit.AppointmentDeleted, f.ns)); n != 1 {
		t.Fatalf("%d deletions audited, want still 1", n)
	}
}

// A refresh saved is recorded once, about the watch whose grant it is; a
// reconcile that finds the grant fresh records none.
func TestEachSavedRefreshIsAuditedOnceAboutItsWatch(t *testing.T) {
	facts := audittest.Capture(t)
	f := newFixture(t, nil)
	f.reconcile(t) // the grant holds only a refresh token: refreshed
	first := len(facts.Of(audit.OAuthRefreshed, f.ns))
	if first != 1 {
		t.Fatalf("%d refreshes audited after the first reconcile, want 1", first)
	}
	exp := f.watch(t).Status.TokenExpiresAt.Time
	f.clock.SetTime(exp.Add(-6 * time.Minute))
	f.reconcile(t)
	if n := len(facts.Of(audit.OAuthRefreshed, f.ns)); n != first {
		t.Fatalf("%d refreshes audited while the token was fresh, want %d", n, first)
	}
	f.clock.SetTime(exp.Add(-5 * time.Minute))
	f.reconcile(t)
	f.reconcile(t)
	lines := facts.Of(audit.OAuthRefreshed, f.ns)
	if len(lines) != 2 {
		t.Fatalf("%d refreshes audited, want 2", len(lines))
	}
	for _, l := range lines {
		audittest.CheckSchema(t, l)
		audittest.Want(t, l, map[string]any{"kind": "CalendarWatch", "name": "visits", "provider": "google", "tokenSecret": "google-token"})
	}
}

// A grant Google revoked is recorded once when the refresh is refused, not
// at each recheck of the stall; connected again and refused again, it is
// a second fact.
func TestARevokedGrantIsAuditedOncePerRefusal(t *testing.T) {
	facts := audittest.Capture(t)
	f := newFixture(t, nil)
	f.reconcile(t)
	googleEm.Revoke(f.secret(t, "google-token")["refresh_token"])
	f.clock.Step(time.Hour)
	f.reconcile(t)
	if c := condition(f.watch(t), v1alpha1.StalledCondition); c.Reason != v1alpha1.ReauthRequiredReason {
		t.Fatalf("after revocation: %+v", c)
	}
	for range 3 { // the stall's rechecks are refused again
		f.clock.Step(20 * time.Minute)
		f.reconcile(t)
	}
	line := facts.One(t, audit.OAuthRevoked, f.ns)
	audittest.Want(t, line, map[string]any{"kind": "CalendarWatch", "name": "visits", "provider": "google", "action": "Refresh", "tokenSecret": "google-token"})
	revoked := f.secret(t, "google-token")["refresh_token"]

	// Connected again (a new grant in the token Secret), then refused
	// again: a second refusal, a second fact.
	sec := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "google-token"}, sec); err != nil {
		t.Fatal(err)
	}
	sec.Data["refresh_token"] = []byte(googleEm.IssueRefreshToken("cal-client", targets.CalendarScope))
	if err := env.Client.Update(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	if c := condition(f.watch(t), v1alpha1.ReadyCondition); c.Status != metav1.ConditionTrue {
		t.Fatalf("connected again: Ready %+v", c)
	}
	googleEm.Revoke(f.secret(t, "google-token")["refresh_token"])
	f.clock.Step(time.Hour)
	f.reconcile(t)
	f.reconcile(t)
	if n := len(facts.Of(audit.OAuthRevoked, f.ns)); n != 2 {
		t.Fatalf("%d revocations audited, want 2", n)
	}
	if text := facts.Text(); strings.Contains(text, revoked) || strings.Contains(text, f.secret(t, "google-token")["refresh_token"]) {
		t.Fatal("a refresh token is in the audit record")
	}
}
