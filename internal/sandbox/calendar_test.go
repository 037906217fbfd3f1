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

package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// These tests drive the Calendar emulator through the real client,
// google.golang.org/api/calendar/v3, with tokens of the OAuth emulator.

const calendarScope = "https://www.googleapis.com/auth/calendar.readonly"

type calRig struct {
	s   *sandbox.Server
	cal *sandbox.GoogleCalendar
	url string
	g   *sandbox.GoogleOAuth
}

func newCalRig(t *testing.T) *calRig {
	t.Helper()
	g := sandbox.NewGoogleOAuth()
	g.AddClient("client-1", "secret-1")
	c := sandbox.NewGoogleCalendar(g)
	c.PushRetryBase = 10 * time.Millisecond
	t.Cleanup(c.Close)
	s := sandbox.New(g, c)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &calRig{s: s, cal: c, url: srv.URL, g: g}
}

// service is a calendar client whose tokens carry scope.
func (r *calRig) service(t *testing.T, scope string) *calendar.Service {
	t.Helper()
	ctx := context.Background()
	cfg := &oauth2.Config{
		ClientID: "client-1", ClientSecret: "secret-1",
		Endpoint: oauth2.Endpoint{TokenURL: r.url + "/googleoauth/token", AuthStyle: oauth2.AuthStyleInHeader},
	}
	ts := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: r.g.IssueRefreshToken("client-1", scope)})
	svc, err := calendar.NewService(ctx, option.WithEndpoint(r.url+"/googleapis/calendar/v3/"), option.WithHTTPClient(oauth2.NewClient(ctx, ts)))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func googleErr(t *testing.T, err error, code int, reason string) {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("got %v (%T), want a *googleapi.Error %d", err, err, code)
	}
	if ge.Code != code || (reason != "" && (len(ge.Errors) == 0 || ge.Errors[0].Reason != reason)) {
		t.Fatalf("got %d %+v, want %d %s", ge.Code, ge.Errors, code, reason)
	}
}

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func event(summary string, day int) sandbox.CalendarEvent {
	start := t0.AddDate(0, 0, day)
	return sandbox.CalendarEvent{Summary: summary, Start: start, End: start.Add(time.Hour)}
}

// listAll walks every page of a listing, returning the items, the pages,
// and the final sync token.
func listAll(t *testing.T, call func(pageToken string) (*calendar.Events, error)) ([]*calendar.Event, []*calendar.Events, string) {
	t.Helper()
	var items []*calendar.Event
	var pages []*calendar.Events
	tok := ""
	for {
		page, err := call(tok)
		if err != nil {
			t.Fatalf("page %d: %v", len(pages)+1, err)
		}
		pages = append(pages, page)
		items = append(items, page.Items...)
		if page.NextPageToken == "" {
			return items, pages, page.NextSyncToken
		}
		tok = page.NextPageToken
	}
}

func TestCalendarFullListPagesAndSyncTokenOnLastPageOnly(t *testing.T) {
	r := newCalRig(t)
	svc := r.service(t, calendarScope)
	for i := range 5 {
		r.cal.CreateEvent("primary", event("talk "+strconv.Itoa(i), i))
	}
	r.cal.SetPageSize(2)
	items, pages, syncToken := listAll(t, func(pt string) (*calendar.Events, error) {
		return svc.Events.List("primary").MaxResults(250).PageToken(pt).Do()
	})
	if len(pages) != 3 || len(items) != 5 {
		t.Fatalf("%d pages, %d items; want 3 pages of at most 2, 5 items", len(pages), len(items))
	}
	for i, p := range pages[:2] {
		if p.NextPageToken == "" || p.NextSyncToken != "" {
			t.Fatalf("page %d: nextPageToken %q nextSyncToken %q; want only a page token", i+1, p.NextPageToken, p.NextSyncToken)
		}
	}
	if syncToken == "" || pages[0].Kind != "calendar#events" {
		t.Fatalf("last page: sync token %q, kind %q", syncToken, pages[0].Kind)
	}
	idShape := regexp.MustCompile(`^[a-v0-9]{26}$`)
	seen := map[string]bool{}
	for _, e := range items {
		if !idShape.MatchString(e.Id) || seen[e.Id] || e.Status != "confirmed" || e.Start == nil || e.Start.DateTime == "" {
			t.Fatalf("item %+v", e)
		}
		seen[e.Id] = true
	}

	// Nothing changed: the incremental listing is empty and hands a token on.
	inc, err := svc.Events.List("primary").SyncToken(syncToken).Do()
	if err != nil || len(inc.Items) != 0 || inc.NextSyncToken == "" {
		t.Fatalf("incremental: %v %+v", err, inc)
	}
	// maxResults above 2500 is capped rather than refused.
	r.cal.SetPageSize(0)
	if _, err := svc.Events.List("primary").MaxResults(5000).Do(); err != nil {
		t.Fatal(err)
	}
}

func TestCalendarIncrementalListingReturnsCancelledEventsMinimal(t *testing.T) {
	r := newCalRig(t)
	svc := r.service(t, calendarScope)
	a := r.cal.CreateEvent("primary", event("A", 1))
	b := r.cal.CreateEvent("primary", event("B", 2))
	_, _, tok := listAll(t, func(pt string) (*calendar.Events, error) {
		return svc.Events.List("primary").PageToken(pt).Do()
	})
	if err := r.cal.CancelEvent("primary", a); err != nil {
		t.Fatal(err)
	}
	if err := r.cal.UpdateEvent("primary", b, "B renamed"); err != nil {
		t.Fatal(err)
	}
	c := r.cal.CreateEvent("primary", event("C", 3))

	inc, err := svc.Events.List("primary").SyncToken(tok).Do()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*calendar.Event{}
	for _, e := range inc.Items {
		got[e.Id] = e
	}
	if len(got) != 3 {
		t.Fatalf("incremental items %d, want A (cancelled), B, C", len(inc.Items))
	}
	if ca := got[a]; ca.Status != "cancelled" || ca.Summary != "" || ca.Start != nil || ca.Kind != "calendar#event" || ca.Etag == "" {
		t.Fatalf("cancelled event is not minimal: %+v", ca)
	}
	if got[b].Summary != "B renamed" || got[c].Summary != "C" {
		t.Fatalf("B %+v, C %+v", got[b], got[c])
	}

	// A full listing leaves the cancelled event out unless showDeleted.
	full, err := svc.Events.List("primary").Do()
	if err != nil || len(full.Items) != 2 {
		t.Fatalf("full listing: %v, %d items", err, len(full.Items))
	}
	withDeleted, err := svc.Events.List("primary").ShowDeleted(true).Do()
	if err != nil || len(withDeleted.Items) != 3 {
		t.Fatalf("showDeleted: %v, %d items", err, len(withDeleted.Items))
	}

	// A purged event is gone from every listing.
	if err := r.cal.PurgeEvent("primary", a); err != nil {
		t.Fatal(err)
	}
	withDeleted, err = svc.Events.List("primary").ShowDeleted(true).Do()
	if err != nil || len(withDeleted.Items) != 2 {
		t.Fatalf("after purge: %v, %d items", err, len(withDeleted.Items))
	}
}

func TestCalendarCancelledRecurringInstance(t *testing.T) {
	r := newCalRig(t)
	svc := r.service(t, calendarScope)
	series := r.cal.CreateEvent("primary", sandbox.CalendarEvent{
		Summary: "standup", Start: t0, End: t0.Add(15 * time.Minute), Recurrence: []string{"RRULE:FREQ=DAILY;COUNT=3"},
	})
	items, _, tok := listAll(t, func(pt string) (*calendar.Events, error) {
		return svc.Events.List("primary").SingleEvents(true).OrderBy("startTime").PageToken(pt).Do()
	})
	if len(items) != 3 || items[1].RecurringEventId != series || items[1].Id != series+"_20260303T100000Z" {
		t.Fatalf("instances: %d, second %+v", len(items), items[1])
	}
	if _, err := r.cal.CancelInstance("primary", series, t0.Add(36*time.Hour)); err == nil {
		t.Fatal("cancelled an occurrence the rule does not have")
	}
	id, err := r.cal.CancelInstance("primary", series, t0.AddDate(0, 0, 1))
	if err != nil || id != series+"_20260303T100000Z" {
		t.Fatalf("CancelInstance = %q, %v", id, err)
	}

	inc, err := svc.Events.List("primary").SingleEvents(true).SyncToken(tok).Do()
	if err != nil || len(inc.Items) != 1 {
		t.Fatalf("incremental: %v %+v", err, inc)
	}
	e := inc.Items[0]
	if e.Id != id || e.Status != "cancelled" || e.RecurringEventId != series || e.OriginalStartTime == nil ||
		e.OriginalStartTime.DateTime != "2026-03-03T10:00:00Z" || e.Summary != "" {
		t.Fatalf("cancelled instance %+v", e)
	}
	// Without singleEvents the exception is listed beside its series, even
	// without showDeleted.
	full, err := svc.Events.List("primary").Do()
	if err != nil || len(full.Items) != 2 {
		t.Fatalf("full listing: %v, %d items", err, len(full.Items))
	}
	single, err := svc.Events.List("primary").SingleEvents(true).Do()
	if err != nil || len(single.Items) != 2 {
		t.Fatalf("single events: %v, %d items, want the 2 remaining instances", err, len(single.Items))
	}
}

func TestCalendarSyncTokenWithFiltersIs400(t *testing.T) {
	r := newCalRig(t)
	svc := r.service(t, calendarScope)
	first, err := svc.Events.List("primary").Do()
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Events.List("primary").SyncToken(first.NextSyncToken).TimeMin(t0.Format(time.RFC3339)).Do()
	googleErr(t, err, http.StatusBadRequest, "invalid")
	_, err = svc.Events.List("primary").SyncToken(first.NextSyncToken).Q("x").Do()
	googleErr(t, err, http.StatusBadRequest, "invalid")
	_, err = svc.Events.List("primary").TimeMin(t0.Format(time.RFC3339)).TimeMax(t0.Format(time.RFC3339)).Do()
	googleErr(t, err, http.StatusBadRequest, "timeRangeEmpty")
	_, err = svc.Events.List("nobody@example.com").Do()
	googleErr(t, err, http.StatusNotFound, "notFound")
}

func TestCalendarInvalidatedSyncTokensAre410(t *testing.T) {
	r := newCalRig(t)
	svc := r.service(t, calendarScope)
	r.cal.CreateEvent("primary", event("A", 1))
	_, _, tok := listAll(t, func(pt string) (*calendar.Events, error) {
		return svc.Events.List("primary").PageToken(pt).Do()
	})
	r.cal.InvalidateSyncTokens("primary")
	_, err := svc.Events.List("primary").SyncToken(tok).Do()
	googleErr(t, err, http.StatusGone, "fullSyncRequired")
	_, err = svc.Events.List("primary").SyncToken("not-a-token").Do()
	googleErr(t, err, http.StatusGone, "fullSyncRequired")

	// A fresh full sync gets a working token.
	_, _, tok = listAll(t, func(pt string) (*calendar.Events, error) {
		return svc.Events.List("primary").PageToken(pt).Do()
	})
	for i := range 3 {
		r.cal.CreateEvent("primary", event("more", i))
	}
	// 410 in the middle of an incremental listing: page 1 is served, page 2 is gone.
	r.cal.SetPageSize(1)
	r.cal.InvalidateSyncTokensAfterPages("primary", 1)
	page, err := svc.Events.List("primary").SyncToken(tok).Do()
	if err != nil || len(page.Items) != 1 || page.NextPageToken == "" {
		t.Fatalf("page 1: %v %+v", err, page)
	}
	_, err = svc.Events.List("primary").SyncToken(tok).PageToken(page.NextPageToken).Do()
	googleErr(t, err, http.StatusGone, "fullSyncRequired")
	_, err = svc.Events.List("primary").SyncToken(tok).Do()
	googleErr(t, err, http.StatusGone, "fullSyncRequired")
	// The full listing that follows is not affected.
	items, _, _ := listAll(t, func(pt string) (*calendar.Events, error) {
		return svc.Events.List("primary").PageToken(pt).Do()
	})
	if len(items) != 4 {
		t.Fatalf("full sync after 410: %d items", len(items))
	}
}

func TestCalendarAuthentication(t *testing.T) {
	r := newCalRig(t)
	resp, err := http.Get(r.url + "/googleapis/calendar/v3/calendars/primary/events")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	req, _ := http.NewRequest(http.MethodGet, r.url+"/googleapis/calendar/v3/calendars/primary/events", nil)
	req.Header.Set("Authorization", "Bearer ya29.forged")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error struct {
			Code   int
			Errors []struct{ Reason, Message string }
		}
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || body.Error.Errors[0].Reason != "authError" || body.Error.Errors[0].Message != "Invalid Credentials" {
		t.Fatalf("forged token: %d %+v", resp.StatusCode, body)
	}
	// A token without a calendar scope is 403.
	_, err = r.service(t, "https://www.googleapis.com/auth/spreadsheets").Events.List("primary").Do()
	googleErr(t, err, http.StatusForbidden, "insufficientPermissions")
}

func TestCalendarRouteFaultsAnswerGoogleQuotaBodies(t *testing.T) {
	r := newCalRig(t)
	svc := r.service(t, calendarScope)
	r.s.SetFault(sandbox.CalendarEventsList, sandbox.Fault{Status: http.StatusForbidden, Body: sandbox.GoogleRateLimitBody, Times: 1})
	_, err := svc.Events.List("primary").Do()
	googleErr(t, err, http.StatusForbidden, "rateLimitExceeded")
	if r.s.Calls(sandbox.CalendarEventsList) != 1 {
		t.Fatalf("calls = %d", r.s.Calls(sandbox.CalendarEventsList))
	}
}

// receiver records notifications and answers statuses from a script.
type receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	got     []http.Header
	answers []int // answered in turn; 200 when exhausted
}

func newReceiver(t *testing.T, answers ...int) *receiver {
	t.Helper()
	rc := &receiver{answers: answers}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if r.Method != http.MethodPost || r.ContentLength > 0 {
			t.Errorf("notification %s with %d bytes", r.Method, r.ContentLength)
		}
		rc.got = append(rc.got, r.Header.Clone())
		status := http.StatusOK
		if len(rc.answers) > 0 {
			status, rc.answers = rc.answers[0], rc.answers[1:]
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) received() []http.Header {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]http.Header(nil), rc.got...)
}

// numbers lists the received (state, message number) pairs.
func (rc *receiver) numbers(t *testing.T) ([]string, []int64) {
	t.Helper()
	var states []string
	var nums []int64
	for _, h := range rc.received() {
		n, err := strconv.ParseInt(h.Get("X-Goog-Message-Number"), 10, 64)
		if err != nil {
			t.Fatalf("message number %q", h.Get("X-Goog-Message-Number"))
		}
		states = append(states, h.Get("X-Goog-Resource-State"))
		nums = append(nums, n)
	}
	return states, nums
}

func idle(t *testing.T, c *sandbox.GoogleCalendar) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitPushesIdle(ctx); err != nil {
		t.Fatal(err)
	}
}

func watch(t *testing.T, svc *calendar.Service, id, address, token string) *calendar.Channel {
	t.Helper()
	ch, err := svc.Events.Watch("primary", &calendar.Channel{Id: id, Type: "web_hook", Address: address, Token: token}).Do()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestCalendarWatchGrantsAtMostTheCap(t *testing.T) {
	r := newCalRig(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.cal.Now = func() time.Time { return now }
	r.cal.MaxChannelTTL = time.Hour
	svc := r.service(t, calendarScope)
	rc := newReceiver(t)

	ch, err := svc.Events.Watch("primary", &calendar.Channel{
		Id: "chan-1", Type: "web_hook", Address: rc.srv.URL, Token: "tok", Expiration: now.Add(2 * time.Hour).UnixMilli(),
	}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if ch.Expiration != now.Add(time.Hour).UnixMilli() || ch.Kind != "api#channel" || ch.Token != "tok" || ch.ResourceId == "" ||
		!strings.HasPrefix(ch.ResourceUri, "https://www.googleapis.com/calendar/v3/calendars/primary/events") {
		t.Fatalf("channel %+v", ch)
	}
	short, err := svc.Events.Watch("primary", &calendar.Channel{
		Id: "chan-2", Type: "web_hook", Address: rc.srv.URL, Expiration: now.Add(10 * time.Minute).UnixMilli(),
	}).Do()
	if err != nil || short.Expiration != now.Add(10*time.Minute).UnixMilli() || short.ResourceId != ch.ResourceId {
		t.Fatalf("shorter request: %v %+v", err, short)
	}
	if got := r.cal.Channels("primary"); len(got) != 2 || got[0].Address != rc.srv.URL || got[0].Token != "tok" {
		t.Fatalf("Channels = %+v", got)
	}

	_, err = svc.Events.Watch("primary", &calendar.Channel{Id: "chan-1", Type: "web_hook", Address: rc.srv.URL}).Do()
	googleErr(t, err, http.StatusBadRequest, "channelIdNotUnique")
	_, err = svc.Events.Watch("primary", &calendar.Channel{Id: "has.dot", Type: "web_hook", Address: rc.srv.URL}).Do()
	googleErr(t, err, http.StatusBadRequest, "invalid")
	_, err = svc.Events.Watch("primary", &calendar.Channel{Id: strings.Repeat("x", 65), Type: "web_hook", Address: rc.srv.URL}).Do()
	googleErr(t, err, http.StatusBadRequest, "invalid")
	_, err = svc.Events.Watch("primary", &calendar.Channel{Id: "c3", Type: "web_hook", Address: rc.srv.URL, Token: strings.Repeat("t", 257)}).Do()
	googleErr(t, err, http.StatusBadRequest, "invalid")

	r.cal.RequireHTTPS = true
	_, err = svc.Events.Watch("primary", &calendar.Channel{Id: "c4", Type: "web_hook", Address: rc.srv.URL}).Do()
	googleErr(t, err, http.StatusBadRequest, "push.webhookUrlNotHttps")
	r.cal.RequireHTTPS = false
	r.cal.RefuseAddress(rc.srv.URL+"/refused", http.StatusUnauthorized)
	_, err = svc.Events.Watch("primary", &calendar.Channel{Id: "c5", Type: "web_hook", Address: rc.srv.URL + "/refused/x"}).Do()
	googleErr(t, err, http.StatusUnauthorized, "push.webhookUrlUnauthorized")
	idle(t, r.cal)
}

func TestCalendarStopIs204ThenNotFound(t *testing.T) {
	r := newCalRig(t)
	svc := r.service(t, calendarScope)
	rc := newReceiver(t)
	ch := watch(t, svc, "chan-1", rc.srv.URL, "")
	idle(t, r.cal)

	err := svc.Channels.Stop(&calendar.Channel{Id: ch.Id, ResourceId: "someone-else"}).Do()
	googleErr(t, err, http.StatusNotFound, "notFound")
	if err := svc.Channels.Stop(&calendar.Channel{Id: ch.Id, ResourceId: ch.ResourceId}).Do(); err != nil {
		t.Fatal(err)
	}
	err = svc.Channels.Stop(&calendar.Channel{Id: ch.Id, ResourceId: ch.ResourceId}).Do()
	googleErr(t, err, http.StatusNotFound, "notFound")
	if len(r.cal.Channels("primary")) != 0 {
		t.Fatal("a stopped channel is listed")
	}

	// A stopped channel gets nothing, and its id may be used again.
	before := len(rc.received())
	r.cal.CreateEvent("primary", event("A", 1))
	idle(t, r.cal)
	if n := len(rc.received()); n != before {
		t.Fatalf("stopped channel got %d notifications", n-before)
	}
	watch(t, svc, "chan-1", rc.srv.URL, "")
	idle(t, r.cal)
}

func TestCalendarPushSyncThenExistsWithHeaders(t *testing.T) {
	r := newCalRig(t)
	svc := r.service(t, calendarScope)
	rc := newReceiver(t)
	other := newReceiver(t)
	ch := watch(t, svc, "chan-1", rc.srv.URL+"/hook", "target=tok")
	watch(t, svc, "chan-2", other.srv.URL, "")

	id := r.cal.CreateEvent("primary", event("A", 1))
	if err := r.cal.UpdateEvent("primary", id, "A2"); err != nil {
		t.Fatal(err)
	}
	if err := r.cal.CancelEvent("primary", id); err != nil {
		t.Fatal(err)
	}
	r.cal.Notify("primary")
	r.cal.AddCalendar("other")
	r.cal.CreateEvent("other", event("elsewhere", 1)) // not watched
	idle(t, r.cal)

	states, nums := rc.numbers(t)
	if strings.Join(states, ",") != "sync,exists,exists,exists,exists" || nums[0] != 1 {
		t.Fatalf("states %v numbers %v", states, nums)
	}
	for i := 1; i < len(nums); i++ {
		if nums[i] <= nums[i-1] || nums[i]-nums[i-1] > 3 {
			t.Fatalf("numbers %v: want increasing by 1 to 3", nums)
		}
	}
	h := rc.received()[1]
	exp, err := time.Parse(http.TimeFormat, h.Get("X-Goog-Channel-Expiration"))
	if h.Get("X-Goog-Channel-ID") != "chan-1" || h.Get("X-Goog-Channel-Token") != "target=tok" ||
		h.Get("X-Goog-Resource-ID") != ch.ResourceId || h.Get("X-Goog-Resource-URI") != ch.ResourceUri ||
		err != nil || exp.UnixMilli() != ch.Expiration/1000*1000 {
		t.Fatalf("headers %v (expiration %v)", h, err)
	}
	if oh := other.received(); len(oh) != 5 || oh[0].Get("X-Goog-Channel-Token") != "" || len(oh[0].Values("X-Goog-Channel-Token")) != 0 {
		t.Fatalf("second channel got %d, token header %q", len(oh), oh[0].Values("X-Goog-Channel-Token"))
	}
}

func TestCalendarPushRetriesServerErrors(t *testing.T) {
	r := newCalRig(t)
	svc := r.service(t, calendarScope)
	rc := newReceiver(t, http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusOK, http.StatusNotFound)
	watch(t, svc, "chan-1", rc.srv.URL, "")
	idle(t, r.cal)
	r.cal.CreateEvent("primary", event("A", 1))
	idle(t, r.cal)

	var got []string
	for _, p := range r.cal.Pushes() {
		got = append(got, p.State+":"+strconv.Itoa(p.Status)+"#"+strconv.Itoa(p.Attempt))
	}
	// The sync message is tried until it succeeds; a 404 is not retried.
	if strings.Join(got, " ") != "sync:503#1 sync:502#2 sync:200#3 exists:404#1" {
		t.Fatalf("attempts %v", got)
	}
	// A receiver that always fails is given up on.
	r.cal.PushAttempts = 3
	fails := newReceiver(t, 500, 500, 500, 500, 500)
	watch(t, svc, "chan-2", fails.srv.URL, "")
	idle(t, r.cal)
	if n := len(fails.received()); n != 3 {
		t.Fatalf("tried %d times, want 3", n)
	}
}

func TestCalendarPushFaults(t *testing.T) {
	r := newCalRig(t)
	svc := r.service(t, calendarScope)
	rc := newReceiver(t)
	watch(t, svc, "chan-1", rc.srv.URL, "")
	idle(t, r.cal)
	ev := r.cal.CreateEvent("primary", event("A", 1))
	idle(t, r.cal)

	// Drop: the message number is used up, nothing arrives.
	r.cal.SetPushFault(sandbox.PushFault{Drop: 1})
	r.cal.Notify("primary")
	r.cal.Notify("primary")
	idle(t, r.cal)
	_, nums := rc.numbers(t)
	if len(nums) != 3 {
		t.Fatalf("after a drop: numbers %v, want 3", nums)
	}
	pushes := r.cal.Pushes()
	var dropped *sandbox.PushRecord
	for i := range pushes {
		if pushes[i].Dropped {
			dropped = &pushes[i]
		}
	}
	if dropped == nil || dropped.MessageNumber <= nums[1] || dropped.MessageNumber >= nums[2] {
		t.Fatalf("dropped %+v between %v", dropped, nums)
	}

	// Duplicate: the same message twice.
	r.cal.SetPushFault(sandbox.PushFault{Duplicate: 1})
	if err := r.cal.UpdateEvent("primary", ev, "A2"); err != nil {
		t.Fatal(err)
	}
	idle(t, r.cal)
	_, nums = rc.numbers(t)
	if len(nums) != 5 || nums[3] != nums[4] {
		t.Fatalf("after a duplicate: numbers %v", nums)
	}

	// Reorder: the held notification comes after the next one.
	r.cal.SetPushFault(sandbox.PushFault{Reorder: true})
	r.cal.Notify("primary")
	idle(t, r.cal) // the held one is not pending
	if _, nums = rc.numbers(t); len(nums) != 5 {
		t.Fatalf("held notification was sent: %v", nums)
	}
	r.cal.Notify("primary")
	idle(t, r.cal)
	_, nums = rc.numbers(t)
	if len(nums) != 7 || nums[5] <= nums[6] {
		t.Fatalf("after a reorder: numbers %v, want the last two swapped", nums)
	}

	// Delay holds each notification back without losing it.
	r.cal.SetPushFault(sandbox.PushFault{Delay: sandbox.Duration(20 * time.Millisecond)})
	start := time.Now()
	r.cal.Notify("primary")
	idle(t, r.cal)
	if time.Since(start) < 20*time.Millisecond || len(rc.received()) != 8 {
		t.Fatalf("delayed notification: %s, %d received", time.Since(start), len(rc.received()))
	}
}

func TestCalendarExpiredChannelGetsNothing(t *testing.T) {
	r := newCalRig(t)
	var mu sync.Mutex
	now := time.Now()
	r.cal.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	svc := r.service(t, calendarScope)
	rc := newReceiver(t)
	_, err := svc.Events.Watch("primary", &calendar.Channel{Id: "c", Type: "web_hook", Address: rc.srv.URL, Params: map[string]string{"ttl": "60"}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	idle(t, r.cal)
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	r.cal.CreateEvent("primary", event("A", 1))
	idle(t, r.cal)
	if n := len(rc.received()); n != 1 || len(r.cal.Channels("primary")) != 0 {
		t.Fatalf("expired channel: %d notifications, %d channels", n, len(r.cal.Channels("primary")))
	}
}

func TestCalendarAdminOverHTTP(t *testing.T) {
	r := newCalRig(t)
	svc := r.service(t, calendarScope)
	post := func(method, path, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, r.url+"/_sandbox/calendar"+path, bytes.NewBufferString(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if resp := post(http.MethodPost, "/calendars", `{"id":"team"}`); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("add calendar: %d", resp.StatusCode)
	}
	resp := post(http.MethodPost, "/calendars/team/events", `{"summary":"demo","start":"2026-03-02T10:00:00Z","end":"2026-03-02T11:00:00Z"}`)
	var created struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %v", resp.StatusCode, err)
	}
	if resp := post(http.MethodPatch, "/calendars/team/events/"+created.ID, `{"summary":"renamed"}`); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("update: %d", resp.StatusCode)
	}
	list, err := svc.Events.List("team").Do()
	if err != nil || len(list.Items) != 1 || list.Items[0].Summary != "renamed" {
		t.Fatalf("list: %v %+v", err, list)
	}
	if resp := post(http.MethodPost, "/calendars/team/events", `{"summary":"x","start":"2026-03-02T10:00:00Z","end":"2026-03-02T11:00:00Z","recurrence":["RRULE:FREQ=YEARLY"]}`); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("unsupported recurrence: %d", resp.StatusCode)
	}
	if resp := post(http.MethodDelete, "/calendars/team/events/"+created.ID, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("cancel: %d", resp.StatusCode)
	}
	if resp := post(http.MethodPost, "/calendars/team/invalidateSyncTokens", ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("invalidate: %d", resp.StatusCode)
	}
	if resp := post(http.MethodGet, "/pushes", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("pushes: %d", resp.StatusCode)
	}
}

// Event.id: a client may choose an id of 5 to 1024 base32hex characters;
// others are refused, and so is one already used in the calendar. The id
// comes back as it was chosen, also when cancelled.
func TestCalendarClientChosenEventIDs(t *testing.T) {
	r := newCalRig(t)
	svc := r.service(t, calendarScope)
	long := strings.Repeat("0123456789abcdefghijklmnopqrstuv", 32)
	e := event("long", 1)
	e.ID = long
	if got := r.cal.CreateEvent("primary", e); got != long {
		t.Fatalf("id %q", got)
	}
	for _, bad := range []string{"abcd", long + "0", "UPPERCASE", "with-dash", "wxyz0"} {
		e.ID = bad
		if _, err := createEvent(r, e); !errors.Is(err, sandbox.ErrInvalidEventID) {
			t.Errorf("%.20s… (%d): %v, want invalid", bad, len(bad), err)
		}
	}
	e.ID = long
	if _, err := createEvent(r, e); !errors.Is(err, sandbox.ErrDuplicateEventID) {
		t.Fatalf("a reused id: %v", err)
	}
	_, _, tok := listAll(t, func(pt string) (*calendar.Events, error) { return svc.Events.List("primary").PageToken(pt).Do() })
	if err := r.cal.CancelEvent("primary", long); err != nil {
		t.Fatal(err)
	}
	inc, err := svc.Events.List("primary").SyncToken(tok).Do()
	if err != nil || len(inc.Items) != 1 || inc.Items[0].Id != long || inc.Items[0].Status != "cancelled" {
		t.Fatalf("incremental listing %v %v", inc, err)
	}
}

// createEvent is CreateEvent without its panic.
func createEvent(r *calRig, e sandbox.CalendarEvent) (id string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err, _ = p.(error)
		}
	}()
	return r.cal.CreateEvent("primary", e), nil
}
