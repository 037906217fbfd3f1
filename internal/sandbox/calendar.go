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

package sandbox

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// Route names of the Google Calendar emulator.
const (
	CalendarEventsList   = "googleapis.calendar.events.list"
	CalendarEventsWatch  = "googleapis.calendar.events.watch"
	CalendarChannelsStop = "googleapis.calendar.channels.stop"
)

// Google's error bodies for quota faults, as printed in "Handle API errors"
// (https://developers.google.com/workspace/calendar/api/guides/errors), for
// tests to answer with, e.g. Fault{Status: 403, Body: GoogleRateLimitBody}.
const (
	// GoogleRateLimitBody is 403 rateLimitExceeded (the project's rate).
	GoogleRateLimitBody = `{"error":{"errors":[{"domain":"usageLimits","reason":"rateLimitExceeded","message":"Rate Limit Exceeded"}],"code":403,"message":"Rate Limit Exceeded"}}`
	// GoogleUserRateLimitBody is 403 userRateLimitExceeded (one user's rate).
	GoogleUserRateLimitBody = `{"error":{"errors":[{"domain":"usageLimits","reason":"userRateLimitExceeded","message":"User Rate Limit Exceeded"}],"code":403,"message":"User Rate Limit Exceeded"}}`
	// GoogleTooManyRequestsBody is 429 rateLimitExceeded.
	GoogleTooManyRequestsBody = `{"error":{"errors":[{"domain":"usageLimits","reason":"rateLimitExceeded","message":"Rate Limit Exceeded"}],"code":429,"message":"Rate Limit Exceeded"}}`
	// GoogleCalendarUsageLimitsBody is 403 quotaExceeded, the calendar's own
	// usage limits.
	GoogleCalendarUsageLimitsBody = `{"error":{"errors":[{"domain":"usageLimits","reason":"quotaExceeded","message":"Calendar usage limits exceeded."}],"code":403,"message":"Calendar usage limits exceeded."}}`
)

// calendarScopes may call events.list and events.watch: the "scopes" of both
// methods in the calendar/v3 discovery document (calendar-api.json, shipped
// with google.golang.org/api/calendar/v3).
var calendarScopes = []string{
	"https://www.googleapis.com/auth/calendar",
	"https://www.googleapis.com/auth/calendar.readonly",
	"https://www.googleapis.com/auth/calendar.events",
	"https://www.googleapis.com/auth/calendar.events.readonly",
	"https://www.googleapis.com/auth/calendar.app.created",
	"https://www.googleapis.com/auth/calendar.events.owned",
	"https://www.googleapis.com/auth/calendar.events.owned.readonly",
	"https://www.googleapis.com/auth/calendar.events.public.readonly",
	"https://www.googleapis.com/auth/calendar.events.freebusy",
}

// CalendarEvent is an event created from a test or the demo.
type CalendarEvent struct {
	// ID is the id the client chose, as events.insert lets it (empty: the
	// emulator makes one, as Google does). It must follow Google's rules
	// for provided ids (validEventID).
	ID         string    `json:"id,omitempty"`
	Summary    string    `json:"summary"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	Recurrence []string  `json:"recurrence,omitempty"` // e.g. "RRULE:FREQ=DAILY;COUNT=5"
}

// GoogleCalendar emulates the parts of the Google Calendar API v3 that a
// synchronizer uses, as Google documents them, so that the real
// google.golang.org/api/calendar/v3 client works against it unchanged:
//
//   - events.list with full and incremental synchronization ("Synchronize
//     resources efficiently",
//     https://developers.google.com/workspace/calendar/api/guides/sync):
//     pages, sync tokens that are positions in the calendar's change log,
//     410 fullSyncRequired when a token is no longer valid (also in the
//     middle of a paginated listing), and cancelled events in their
//     minimal form.
//   - events.watch and channels.stop, and a push sender that delivers
//     notifications as "Push notifications" describes
//     (https://developers.google.com/workspace/calendar/api/guides/push):
//     a sync message numbered 1, then "exists" for every change, with
//     Google's headers, retries of 500/502/503/504 with exponential backoff,
//     and faults (drops, duplicates, delays, reordering) since Google
//     warns that notifications are not 100% reliable.
//
// Requests are authenticated with access tokens of the GoogleOAuth emulator.
type GoogleCalendar struct {
	// Now is the clock (time.Now when nil): channel expiration and the
	// events' updated times.
	Now func() time.Time
	// MaxChannelTTL caps the expiration granted to a channel (7 days);
	// Google grants "the more restrictive" of the requested time and its
	// own limits (guides/push, "Renew notification channels").
	MaxChannelTTL time.Duration
	// PushRetryBase is the first wait before a push answered 500, 502, 503
	// or 504 is sent again; it doubles at every try (1 s).
	PushRetryBase time.Duration
	// PushAttempts is how many times one notification is tried before the
	// sender gives up (5). Google does not document its number.
	PushAttempts int
	// PushTimeout bounds one delivery attempt (10 s).
	PushTimeout time.Duration
	// RequireHTTPS refuses watch addresses that are not https:// as Google
	// does (400 push.webhookUrlNotHttps). Off by default so that tests can
	// use plain loopback receivers.
	RequireHTTPS bool

	oauth *GoogleOAuth

	mu        sync.Mutex
	calendars map[string]*calState
	channels  map[string]*calChannel // by channel id, stopped ones too
	pageSize  int
	refusals  []addressRefusal
	fault     PushFault
	pushes    []PushRecord
	pending   int           // notifications queued or in flight
	idle      chan struct{} // closed when pending drops to 0
	client    *http.Client
	closed    bool
	stop      chan struct{}
	workers   sync.WaitGroup
}

type addressRefusal struct {
	prefix string
	status int
}

// calState is one calendar: its events and its change log.
type calState struct {
	id         string
	resourceID string
	events     map[string]*calEvent
	ord        int64 // last creation order handed out
	seq        int64 // position of the last change in the change log
	epoch      int64 // bumped by InvalidateSyncTokens; tokens of older epochs are gone
	// doom is armed by InvalidateSyncTokensAfterPages: the next incremental
	// listing is served doomPages pages and then 410s.
	doomArmed bool
	doomPages int
	doomList  string // the listing the doom attached to
}

// calEvent is a stored event: a single or recurring event, or an exception
// of a recurring event (recurringEventID set).
type calEvent struct {
	id               string
	ord              int64
	seq              int64 // change-log position of its last change
	summary          string
	start, end       time.Time
	recurrence       []string
	rule             *rrule
	status           string // confirmed or cancelled
	recurringEventID string
	originalStart    time.Time
	created, updated time.Time
}

// NewGoogleCalendar returns the emulator with the "primary" calendar; oauth
// authenticates the Bearer tokens of requests.
func NewGoogleCalendar(oauth *GoogleOAuth) *GoogleCalendar {
	c := &GoogleCalendar{
		MaxChannelTTL: 7 * 24 * time.Hour,
		PushRetryBase: time.Second,
		PushAttempts:  5,
		PushTimeout:   10 * time.Second,
		oauth:         oauth,
		calendars:     map[string]*calState{},
		channels:      map[string]*calChannel{},
		stop:          make(chan struct{}),
	}
	c.AddCalendar("primary")
	return c
}

// Upstream implements Emulator.
func (c *GoogleCalendar) Upstream() upstream.Name { return upstream.GoogleAPIs }

// Register implements Emulator. The API lives at
// https://www.googleapis.com/calendar/v3/ (rootUrl and servicePath of the
// discovery document), so under the googleapis upstream's prefix.
func (c *GoogleCalendar) Register(s *Server) {
	base := "/" + string(upstream.GoogleAPIs) + "/calendar/v3"
	s.Handle(CalendarEventsList, "GET "+base+"/calendars/{calendarId}/events", c.eventsList)
	s.Handle(CalendarEventsWatch, "POST "+base+"/calendars/{calendarId}/events/watch", c.eventsWatch)
	s.Handle(CalendarChannelsStop, "POST "+base+"/channels/stop", c.channelsStop)
	c.registerAdmin(s)
}

func (c *GoogleCalendar) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// AddCalendar creates an empty calendar ("primary" exists from the start).
func (c *GoogleCalendar) AddCalendar(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.calendars[id]; ok {
		return
	}
	// resourceId: "An opaque ID that identifies the resource being watched
	// on this channel. Stable across different API versions." (Channel in
	// the discovery document): one per calendar's events collection.
	c.calendars[id] = &calState{id: id, resourceID: randomToken(27), events: map[string]*calEvent{}}
}

// Close stops the push sender: queued notifications are abandoned and
// attempts in flight are cancelled.
func (c *GoogleCalendar) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	close(c.stop)
	c.mu.Unlock()
	c.workers.Wait()
}

// WaitPushesIdle waits until no notification is queued or being delivered
// (a notification held back by a Reorder fault is neither).
func (c *GoogleCalendar) WaitPushesIdle(ctx context.Context) error {
	c.mu.Lock()
	if c.pending == 0 {
		c.mu.Unlock()
		return nil
	}
	idle := c.idle
	c.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
