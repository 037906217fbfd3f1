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
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/calendarpush"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/gcalendar"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// The seed's 16 correctness properties (seed 002, "Correctness
// Properties"), each checked over at least 100 generated cases
// (rapid's default is 100; -rapid.checks raises it). Properties about
// deletion and the sync run on the real API server with a scripted
// Calendar; those about the webhook route are in test/calendar.

// fakeCalendar scripts the Calendar API for property tests.
type fakeCalendar struct {
	mu      sync.Mutex
	pages   []gcalendar.Page // answered in order, then empty last pages
	failN   int              // the next failN List calls fail with a 503
	lists   []gcalendar.ListRequest
	watches []gcalendar.WatchRequest
	stops   []string
}

func (c *fakeCalendar) Watch(_ context.Context, _ string, r gcalendar.WatchRequest) (gcalendar.Channel, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watches = append(c.watches, r)
	return gcalendar.Channel{ID: r.ID, ResourceID: "res-" + r.CalendarID, Expiration: r.Expiration}, nil
}

func (c *fakeCalendar) Stop(_ context.Context, _, id, _ string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stops = append(c.stops, id)
	return nil
}

func (c *fakeCalendar) List(_ context.Context, _ string, r gcalendar.ListRequest) (gcalendar.Page, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lists = append(c.lists, r)
	if c.failN > 0 {
		c.failN--
		return gcalendar.Page{}, &outbound.Error{Upstream: "googleapis", Class: outbound.Transient, Status: 503, Reason: "events.list: 503"}
	}
	if len(c.pages) == 0 {
		return gcalendar.Page{NextSyncToken: "empty-sync"}, nil
	}
	p := c.pages[0]
	c.pages = c.pages[1:]
	return p, nil
}

// propEnv is one namespace and a reconciler on a scripted calendar.
type propEnv struct {
	ns    string
	clock *clocktesting.FakeClock
	cal   *fakeCalendar
	r     *Reconciler
	rec   *recorder
}

func newPropEnv(t *testing.T) *propEnv {
	t.Helper()
	ns, err := env.Namespace("prop")
	if err != nil {
		t.Fatal(err)
	}
	c := clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
	p := &propEnv{ns: ns, clock: c, cal: &fakeCalendar{}, rec: &recorder{}}
	p.r = &Reconciler{Client: env.Client, APIReader: env.Client, OAuth: &testenv.FakeTokens{Now: c.Now}, Calendar: p.cal,
		Recorder: p.rec, Clock: c, PublicURL: "https://hooks.example.com"}
	p.r.Runner()
	return p
}

var watchSeq int

// newWatch creates a watch (and its channel Secret) in the namespace.
func (p *propEnv) newWatch(t *testing.T, calendarID string) *v1alpha1.CalendarWatch {
	t.Helper()
	watchSeq++
	w := &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: fmt.Sprintf("w%d", watchSeq)}}
	w.Spec.CalendarID = calendarID
	w.Spec.OAuth.ClientSecretRef.Name, w.Spec.OAuth.TokenSecretRef.Name = "c", "t"
	w.Spec.Sink.Objects = &v1alpha1.ObjectSink{APIVersion: "v1", Kind: "ConfigMap"}
	if err := env.Client.Create(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

func (p *propEnv) reconcile(t *testing.T, w *v1alpha1.CalendarWatch, run *runner.Runner[*v1alpha1.CalendarWatch]) ctrl.Result {
	t.Helper()
	res, err := run.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// eventIDs draws distinct Google-like event ids (base32hex, and recurring
// instance ids).
func eventIDs(t *rapid.T, label string) []string {
	base := rapid.StringMatching(`[a-v0-9]{5,26}`)
	return rapid.SliceOfNDistinct(rapid.OneOf(base, rapid.Custom(func(t *rapid.T) string {
		return base.Draw(t, "series") + "_2026" + rapid.StringMatching(`[01][0-9][0-2][0-9]T[0-2][0-9]0000Z`).Draw(t, "start")
	})), 1, 8, rapid.ID[string]).Draw(t, label)
}

type deletionCase struct {
	appointments map[string]string // name → event id
	cancelled    []string
	sellers      []string
}

func drawDeletion(t *rapid.T, prefix string) deletionCase {
	ids := eventIDs(t, "ids")
	c := deletionCase{appointments: map[string]string{}}
	for i, id := range ids {
		if rapid.Bool().Draw(t, "has appointment") {
			c.appointments[fmt.Sprintf("%s-appt-%d", prefix, i)] = id
		}
		if rapid.Bool().Draw(t, "cancelled") {
			c.cancelled = append(c.cancelled, id)
		}
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "sellers") {
		c.sellers = append(c.sellers, fmt.Sprintf("%s-seller-%d", prefix, i))
	}
	return c
}

// runDeletion creates the case's objects, runs the deletion of a sync that
// found the cancelled ids, and returns which objects remain.
func (p *propEnv) runDeletion(t *rapid.T, tt *testing.T, w *v1alpha1.CalendarWatch, c deletionCase) (remaining map[string]bool, deleted map[string]string) {
	ctx := context.Background()
	for name, id := range c.appointments {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: name, Labels: map[string]string{v1alpha1.DefaultEventIDLabel: id}}}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range c.sellers {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: name}, Data: map[string]string{"seller": name}}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	deleted, err := p.r.deleteObjects(ctx, w, &runner.Run{Now: time.Now()}, changes{cancelled: c.cancelled})
	if err != nil {
		t.Fatal(err)
	}
	remaining = map[string]bool{}
	var list corev1.ConfigMapList
	if err := env.Client.List(ctx, &list, client.InNamespace(p.ns)); err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if cm.Name == "kube-root-ca.crt" {
			continue
		}
		remaining[cm.Name] = true
		if err := env.Client.Delete(ctx, &cm); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	return remaining, deleted
}

// cancelledSeries reports whether the appointment's event id is cancelled,
// directly or as an instance of a cancelled recurring event.
func cancelledSeries(id string, cancelled []string) bool {
	if slices.Contains(cancelled, id) {
		return true
	}
	i := strings.LastIndexByte(id, '_')
	return i > 0 && slices.Contains(cancelled, id[:i])
}

// Property 2: For any calendar event ID, if a corresponding appointment
// exists in the database, the system should successfully find it.
func TestProperty2AppointmentLookupByEventID(t *testing.T) {
	p := newPropEnv(t)
	w := p.newWatch(t, "primary")
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		c := drawDeletion(rt, fmt.Sprintf("p2-%d", n))
		_, deleted := p.runDeletion(rt, t, w, c)
		for name, id := range c.appointments {
			if slices.Contains(c.cancelled, id) && deleted[id] == "" {
				rt.Fatalf("appointment %s of cancelled event %s not found", name, id)
			}
		}
	})
}

// Property 3: For any calendar event that is deleted, if a corresponding
// appointment exists, the system should delete that appointment.
func TestProperty3AppointmentDeletionForDeletedEvents(t *testing.T) {
	p := newPropEnv(t)
	w := p.newWatch(t, "primary")
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		c := drawDeletion(rt, fmt.Sprintf("p3-%d", n))
		remaining, _ := p.runDeletion(rt, t, w, c)
		for name, id := range c.appointments {
			if cancelledSeries(id, c.cancelled) == remaining[name] {
				rt.Fatalf("appointment %s (event %s, cancelled %v) remaining=%v", name, id, cancelledSeries(id, c.cancelled), remaining[name])
			}
		}
	})
}

// Property 4: For any appointment deleted due to calendar sync, the system
// should create an activity log entry with the source marked as "Google
// Calendar Sync".
func TestProperty4ActivityLogWithSource(t *testing.T) {
	p := newPropEnv(t)
	w := p.newWatch(t, "primary")
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		p.rec.Reset()
		c := drawDeletion(rt, fmt.Sprintf("p4-%d", n))
		remaining, _ := p.runDeletion(rt, t, w, c)
		evs := p.rec.With("AppointmentDeleted")
		for name := range c.appointments {
			if remaining[name] {
				continue
			}
			found := false
			for _, e := range evs {
				found = found || (strings.Contains(e, "source="+SyncSource) && strings.HasSuffix(e, "related=ConfigMap/"+name))
			}
			if !found {
				rt.Fatalf("no Event with source %q for %s in %v", SyncSource, name, evs)
			}
		}
		if want := len(c.appointments) - countTrue(remaining, c.appointments); len(evs) != want {
			rt.Fatalf("%d Events for %d deletions", len(evs), want)
		}
	})
}

func countTrue(remaining map[string]bool, appts map[string]string) int {
	n := 0
	for name := range appts {
		if remaining[name] {
			n++
		}
	}
	return n
}

// Property 5: For any appointment deletion, the associated seller record
// should remain unchanged in the database.
func TestProperty5SellerRecordPreserved(t *testing.T) {
	p := newPropEnv(t)
	w := p.newWatch(t, "primary")
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		c := drawDeletion(rt, fmt.Sprintf("p5-%d", n))
		remaining, _ := p.runDeletion(rt, t, w, c)
		for _, s := range c.sellers {
			if !remaining[s] {
				rt.Fatalf("seller record %s deleted", s)
			}
		}
	})
}

// Property 6: For any webhook registration request, the system should
// generate a callback URL that is valid and publicly accessible.
func TestProperty6ValidCallbackURL(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		host := rapid.StringMatching(`[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,10}){1,3}`).Draw(rt, "host")
		prefix := rapid.SampledFrom([]string{"", "/", "/hooks", "/a/b/"}).Draw(rt, "prefix")
		public := "https://" + host + prefix
		addr := PushAddress(public)
		u, err := url.Parse(addr)
		if err != nil || u.Scheme != "https" || u.Host != host || !strings.HasSuffix(u.Path, calendarpush.PushPath) || strings.Contains(u.Path, "//") {
			rt.Fatalf("public %q → address %q", public, addr)
		}
	})
}

// A channel whose life is only a little longer than renewBefore (here
// 60 s against 52.4 s, a case rapid found) was due for renewal, with its
// spread and lead, before it was opened: its successor would have begun
// renewing the moment it opened, and so on. Each of these ids draws its
// own spread.
func TestARenewalNeverBeginsBeforeItsChannelOpened(t *testing.T) {
	opened := time.UnixMilli(1_000_000_000_001)
	exp := metav1.NewTime(opened.Add(time.Minute))
	renewBefore := 52414910840 * time.Nanosecond
	for i := range 200 {
		ch := &v1alpha1.ChannelStatus{ID: calendarpush.ChannelID(types.UID(fmt.Sprintf("uid-%d", i)), opened.UnixMilli()), Expiration: &exp}
		at, start := RenewAt(ch, renewBefore), renewStart(ch, renewBefore)
		if start.Before(opened) || at.After(exp.Add(-renewBefore)) || start.After(at) {
			t.Fatalf("%s: renewal due %s, begun %s, for a channel opened %s expiring %s", ch.ID, at, start, opened, exp)
		}
	}
}

// Property 7: For any webhook subscription that is approaching expiration,
// the system should automatically renew it before it expires.
func TestProperty7RenewalBeforeExpiration(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		opened := time.UnixMilli(rapid.Int64Range(1e12, 2e12).Draw(rt, "opened"))
		life := time.Duration(rapid.Int64Range(int64(time.Minute), int64(7*24*time.Hour)).Draw(rt, "granted life"))
		renewBefore := time.Duration(rapid.Int64Range(int64(time.Second), int64(7*24*time.Hour)).Draw(rt, "renewBefore"))
		exp := metav1.NewTime(opened.Add(life))
		ch := &v1alpha1.ChannelStatus{ID: calendarpush.ChannelID("u", opened.UnixMilli()), Expiration: &exp}
		at, start := RenewAt(ch, renewBefore), renewStart(ch, renewBefore)
		if !at.Before(exp.Time) || start.Before(opened) || start.After(at) {
			rt.Fatalf("renewal due %s, begun %s, for a channel opened %s expiring %s", at, start, opened, exp)
		}
		if life > renewBefore && (at.After(exp.Add(-renewBefore)) || start.Before(exp.Add(-renewBefore*115/100))) {
			rt.Fatalf("renewal due %s, begun %s: not within renewBefore %s (+15 %%) ahead of %s", at, start, renewBefore, exp)
		}
	})
}

// Property 8: For any employee connecting their Google Calendar, the system
// should create a webhook subscription for that employee's calendar.
func TestProperty8ChannelCreatedOnConnection(t *testing.T) {
	p := newPropEnv(t)
	run := p.r.Runner()
	rapid.Check(t, func(rt *rapid.T) {
		calID := rapid.OneOf(rapid.Just("primary"), rapid.StringMatching(`[a-z]{1,10}@(group\.calendar\.google\.com|example\.com)`)).Draw(rt, "calendar")
		w := p.newWatch(t, calID)
		before := len(p.cal.watches)
		p.reconcile(t, w, run)
		got := p.fetch(t, w)
		if len(p.cal.watches) != before+1 {
			rt.Fatalf("%d watch calls", len(p.cal.watches)-before)
		}
		req := p.cal.watches[before]
		if req.CalendarID != calID || got.Status.Channel == nil || got.Status.Channel.ID != req.ID || req.Token == "" || req.Address != PushAddress(p.r.PublicURL) {
			rt.Fatalf("watch %+v status %+v", req, got.Status.Channel)
		}
	})
}

func (p *propEnv) fetch(t *testing.T, w *v1alpha1.CalendarWatch) *v1alpha1.CalendarWatch {
	t.Helper()
	got := &v1alpha1.CalendarWatch{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(w), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// Property 9: For any employee disconnecting their Google Calendar, the
// system should cancel their webhook subscription.
func TestProperty9ChannelStoppedOnDisconnection(t *testing.T) {
	p := newPropEnv(t)
	run := p.r.Runner()
	rapid.Check(t, func(rt *rapid.T) {
		w := p.newWatch(t, "primary")
		p.reconcile(t, w, run)
		open := p.fetch(t, w).Status.Channel.ID
		before := len(p.cal.stops)
		if rapid.Bool().Draw(rt, "delete rather than suspend") {
			if err := env.Client.Delete(context.Background(), w); err != nil {
				t.Fatal(err)
			}
			p.reconcile(t, w, run)
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(w), &v1alpha1.CalendarWatch{}); !apierrors.IsNotFound(err) {
				rt.Fatalf("watch not deleted: %v", err)
			}
		} else {
			got := p.fetch(t, w)
			patch := client.MergeFrom(got.DeepCopy())
			got.Spec.Suspend = true
			if err := env.Client.Patch(context.Background(), got, patch); err != nil {
				t.Fatal(err)
			}
			p.reconcile(t, w, run)
			if p.fetch(t, w).Status.Channel != nil {
				rt.Fatal("a suspended watch still names a channel")
			}
		}
		if len(p.cal.stops) != before+1 || p.cal.stops[before] != open {
			rt.Fatalf("stops %v, open channel %s", p.cal.stops[before:], open)
		}
	})
}

// pagesOf draws a listing split into pages: only the last carries a sync
// token.
func pagesOf(rt *rapid.T) (pages []gcalendar.Page, cancelled []string, last string) {
	ids := rapid.SliceOfNDistinct(rapid.StringMatching(`[a-v0-9]{5,26}`), 0, 30, rapid.ID[string]).Draw(rt, "events")
	size := rapid.IntRange(1, 7).Draw(rt, "page size")
	for i := 0; i < len(ids) || i == 0; i += size {
		var p gcalendar.Page
		for _, id := range ids[i:min(i+size, len(ids))] {
			e := gcalendar.Event{ID: id, Status: "confirmed"}
			if rapid.Bool().Draw(rt, "cancelled") {
				e.Status = "cancelled"
				cancelled = append(cancelled, id)
			}
			p.Events = append(p.Events, e)
		}
		pages = append(pages, p)
	}
	for i := range pages {
		if i < len(pages)-1 {
			pages[i].NextPageToken = fmt.Sprintf("page-%d", i+1)
		}
	}
	last = "sync-" + rapid.StringMatching(`[A-Za-z0-9_-]{8,40}`).Draw(rt, "next sync token")
	pages[len(pages)-1].NextSyncToken = last
	return pages, cancelled, last
}

// syncOnce stores token as the watch's sync token and runs the sync phase.
func (p *propEnv) syncOnce(t *testing.T, w *v1alpha1.CalendarWatch, token string) runner.Outcome {
	t.Helper()
	ctx := context.Background()
	got := p.fetch(t, w)
	if out := p.r.channelSecret(ctx, got, &runner.Run{Now: p.clock.Now()}); !out.IsContinue() {
		t.Fatalf("channel secret: %s", out.Err())
	}
	sec, err := p.r.readChannelSecret(ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.r.saveCursor(ctx, sec, token, ""); err != nil {
		t.Fatal(err)
	}
	run := &runner.Run{Now: p.clock.Now(), Requested: true}
	grant.Set(run, grant.Grant{Token: "access"})
	return p.r.sync(ctx, got, run)
}

// Property 13: For any periodic sync job execution, the system should
// query Google Calendar using the stored sync token from the last sync.
func TestProperty13StoredSyncTokenUsed(t *testing.T) {
	p := newPropEnv(t)
	w := p.newWatch(t, "primary")
	rapid.Check(t, func(rt *rapid.T) {
		stored := "tok-" + rapid.StringMatching(`[A-Za-z0-9_-]{1,60}`).Draw(rt, "stored token")
		p.cal.lists = nil
		if out := p.syncOnce(t, w, stored); !out.IsContinue() {
			rt.Fatalf("sync: %v", out.Err())
		}
		if len(p.cal.lists) == 0 || p.cal.lists[0].SyncToken != stored || p.cal.lists[0].PageToken != "" {
			rt.Fatalf("first list %+v, stored %q", p.cal.lists, stored)
		}
	})
}

// Property 14: For any set of calendar changes returned by Google Calendar
// API, the system should correctly identify which events were deleted.
func TestProperty14DeletedEventIdentification(t *testing.T) {
	p := newPropEnv(t)
	rapid.Check(t, func(rt *rapid.T) {
		pages, cancelled, last := pagesOf(rt)
		p.cal.pages = pages
		sec := &corev1.Secret{Data: map[string][]byte{SyncTokenKey: []byte("stored")}}
		res, err := p.r.listChanges(context.Background(), &v1alpha1.CalendarWatch{}, &runner.Run{}, sec)
		if err != nil {
			rt.Fatal(err)
		}
		if !slices.Equal(res.cancelled, cancelled) || res.syncToken != last {
			rt.Fatalf("identified %v, want %v", res.cancelled, cancelled)
		}
	})
}

// Property 15: For any completed sync operation, the system should update
// the stored sync token with the new token from the API response.
func TestProperty15SyncTokenUpdatedAfterSync(t *testing.T) {
	p := newPropEnv(t)
	w := p.newWatch(t, "primary")
	rapid.Check(t, func(rt *rapid.T) {
		pages, _, last := pagesOf(rt)
		p.cal.pages = pages
		if out := p.syncOnce(t, w, "before"); !out.IsContinue() {
			rt.Fatalf("sync: %v", out.Err())
		}
		sec, err := p.r.readChannelSecret(context.Background(), p.fetch(t, w))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(sec.Data[SyncTokenKey]); got != last || len(sec.Data[PageTokenKey]) != 0 {
			rt.Fatalf("stored %q, want the last page's %q", got, last)
		}
	})
}

// Property 16: For any failed sync job, the system should retry with
// exponentially increasing delays between attempts.
func TestProperty16ExponentialBackoff(t *testing.T) {
	p := newPropEnv(t)
	w := p.newWatch(t, "primary")
	rapid.Check(t, func(rt *rapid.T) {
		failures := rapid.IntRange(1, 8).Draw(rt, "failures")
		run := p.r.Runner() // a fresh failure count
		p.cal.failN = failures
		var delays []time.Duration
		for range failures {
			got := p.fetch(t, w)
			patch := client.MergeFrom(got.DeepCopy())
			metav1.SetMetaDataAnnotation(&got.ObjectMeta, v1alpha1.RequestedAtAnnotation, fmt.Sprint(time.Now().UnixNano()))
			if err := env.Client.Patch(context.Background(), got, patch); err != nil {
				t.Fatal(err)
			}
			delays = append(delays, p.reconcile(t, w, run).RequeueAfter)
		}
		for i, d := range delays {
			want := Retries.Base << i
			if i >= Retries.Retries {
				if d < 13*time.Minute || d > 17*time.Minute {
					rt.Fatalf("failure %d: %s, want the backup timer", i+1, d)
				}
				continue
			}
			if d < want*9/10 || d > want*11/10 {
				rt.Fatalf("failure %d: %s, want %s ±10 %% (delays %v)", i+1, d, want, delays)
			}
		}
	})
}
