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
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
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

// newEventID is shaped like Google's: "characters allowed in the ID are
// those used in base32hex encoding, i.e. lowercase letters a-v and digits
// 0-9" (Event.id in the discovery document), 26 long.
func newEventID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return strings.ToLower(base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// eventIDChars is base32hex, lowercase.
var eventIDChars = regexp.MustCompile(`^[a-v0-9]+$`)

// validEventID applies Google's rules for an id a client provides: "characters
// allowed in the ID are those used in base32hex encoding, i.e. lowercase
// letters a-v and digits 0-9, see section 3.1.2 in RFC2938; the length of
// the ID must be between 5 and 1024 characters; the ID must be unique per
// calendar" (Event.id,
// https://developers.google.com/workspace/calendar/api/v3/reference/events#id).
// So a client-chosen id may be far longer than the 26 characters Google
// makes, and longer than a Kubernetes label value (63).
func validEventID(id string) bool {
	return len(id) >= 5 && len(id) <= 1024 && eventIDChars.MatchString(id)
}

// Errors of an event id a client provides, as events.insert answers them:
// 400 invalid "Invalid resource id value." (users' reports:
// https://github.com/wanasit/google-calendar/issues/25,
// https://github.com/googleworkspace/dotnet-samples/issues/33) and 409
// duplicate "The requested identifier already exists." (guides/errors,
// "409: The requested identifier already exists").
var (
	ErrInvalidEventID   = errors.New("sandbox: invalid resource id value")
	ErrDuplicateEventID = errors.New("sandbox: the requested identifier already exists")
)

// CreateEvent adds an event and pushes "exists" to the calendar's channels;
// it returns the event's id. It panics on an unknown calendar or a
// recurrence the emulator cannot expand (a mistake in the test).
func (c *GoogleCalendar) CreateEvent(calendarID string, e CalendarEvent) string {
	id, err := c.createEvent(calendarID, e)
	if err != nil {
		panic(err)
	}
	return id
}

func (c *GoogleCalendar) createEvent(calendarID string, e CalendarEvent) (string, error) {
	rule, err := parseRecurrence(e.Recurrence)
	if err != nil {
		return "", err
	}
	if e.End.Before(e.Start) {
		return "", errors.New("sandbox: event ends before it starts")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cal, ok := c.calendars[calendarID]
	if !ok {
		return "", fmt.Errorf("sandbox: no calendar %q", calendarID)
	}
	id := e.ID
	switch {
	case id == "":
		id = newEventID()
	case !validEventID(id):
		return "", fmt.Errorf("%w (%d characters; base32hex a-v0-9, 5 to 1024)", ErrInvalidEventID, len(id))
	case cal.events[id] != nil:
		return "", ErrDuplicateEventID
	}
	now := c.now().UTC()
	cal.ord++
	cal.seq++
	ev := &calEvent{
		id: id, ord: cal.ord, seq: cal.seq, summary: e.Summary,
		start: e.Start.UTC(), end: e.End.UTC(), recurrence: append([]string(nil), e.Recurrence...), rule: rule,
		status: "confirmed", created: now, updated: now,
	}
	cal.events[ev.id] = ev
	c.notifyLocked(cal)
	return ev.id, nil
}

// ErrCalendarNotFound is returned for an unknown calendar or event.
var ErrCalendarNotFound = errors.New("sandbox: no such calendar or event")

func (c *GoogleCalendar) eventLocked(calendarID, eventID string) (*calState, *calEvent, error) {
	cal, ok := c.calendars[calendarID]
	if !ok {
		return nil, nil, fmt.Errorf("%w: calendar %q", ErrCalendarNotFound, calendarID)
	}
	ev, ok := cal.events[eventID]
	if !ok {
		return nil, nil, fmt.Errorf("%w: event %q in %q", ErrCalendarNotFound, eventID, calendarID)
	}
	return cal, ev, nil
}

// touchLocked records a change of ev in the change log.
func (c *GoogleCalendar) touchLocked(cal *calState, ev *calEvent) {
	cal.seq++
	ev.seq = cal.seq
	ev.updated = c.now().UTC()
	if !ev.updated.After(ev.created) {
		ev.updated = ev.created.Add(time.Millisecond)
	}
}

// UpdateEvent renames an event and pushes "exists".
func (c *GoogleCalendar) UpdateEvent(calendarID, eventID, summary string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cal, ev, err := c.eventLocked(calendarID, eventID)
	if err != nil {
		return err
	}
	ev.summary = summary
	c.touchLocked(cal, ev)
	c.notifyLocked(cal)
	return nil
}

// CancelEvent deletes an event: its status becomes "cancelled" (the list
// method keeps returning it to incremental syncs and with showDeleted), and
// "exists" is pushed: for the events collection Google notifies every
// change with that state (guides/push, "Understand the notification
// message format": exists is "A change to the resource").
func (c *GoogleCalendar) CancelEvent(calendarID, eventID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cal, ev, err := c.eventLocked(calendarID, eventID)
	if err != nil {
		return err
	}
	ev.status = "cancelled"
	c.touchLocked(cal, ev)
	c.notifyLocked(cal)
	return nil
}

// CancelInstance cancels one occurrence of a recurring event, as deleting
// it in Google Calendar does: a cancelled exception whose id is the
// recurring event's id, "_", and the original start in UTC basic format
// (e.g. "abc_20260101T100000Z"), with recurringEventId and
// originalStartTime. It pushes "exists" and returns the instance's id.
func (c *GoogleCalendar) CancelInstance(calendarID, recurringEventID string, originalStart time.Time) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cal, parent, err := c.eventLocked(calendarID, recurringEventID)
	if err != nil {
		return "", err
	}
	if parent.rule == nil {
		return "", fmt.Errorf("sandbox: event %q is not recurring", recurringEventID)
	}
	originalStart = originalStart.UTC()
	found := false
	for _, s := range parent.rule.starts(parent.start) {
		if s.Equal(originalStart) {
			found = true
			break
		}
	}
	if !found {
		return "", fmt.Errorf("%w: event %q has no occurrence at %s", ErrCalendarNotFound, recurringEventID, originalStart.Format(time.RFC3339))
	}
	id := instanceID(recurringEventID, originalStart)
	ex, ok := cal.events[id]
	if !ok {
		now := c.now().UTC()
		cal.ord++
		ex = &calEvent{
			id: id, ord: cal.ord, summary: parent.summary, start: originalStart,
			end: originalStart.Add(parent.end.Sub(parent.start)), recurringEventID: recurringEventID,
			originalStart: originalStart, created: now,
		}
		cal.events[id] = ex
	}
	ex.status = "cancelled"
	c.touchLocked(cal, ex)
	c.notifyLocked(cal)
	return id, nil
}

func instanceID(recurringEventID string, originalStart time.Time) string {
	return recurringEventID + "_" + originalStart.UTC().Format("20060102T150405Z")
}

// PurgeEvent removes an event (and a recurring event's exceptions) as if it
// had been deleted long ago: "Such cancelled events will eventually
// disappear" (Event.status in the discovery document). Nothing is pushed
// and no listing returns it any more, not even with showDeleted.
func (c *GoogleCalendar) PurgeEvent(calendarID, eventID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cal, _, err := c.eventLocked(calendarID, eventID)
	if err != nil {
		return err
	}
	delete(cal.events, eventID)
	for id, ev := range cal.events {
		if ev.recurringEventID == eventID {
			delete(cal.events, id)
		}
	}
	return nil
}

// InvalidateSyncTokens makes every sync token and page token of the
// calendar issued so far answer 410 fullSyncRequired, as Google does when a
// token expires or is invalidated (guides/sync, "Incremental sync").
func (c *GoogleCalendar) InvalidateSyncTokens(calendarID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cal, ok := c.calendars[calendarID]; ok {
		cal.epoch++
		cal.doomArmed, cal.doomList = false, ""
	}
}

// InvalidateSyncTokensAfterPages arms a 410 in the middle of a listing: the
// next incremental listing (one started with a syncToken) is answered n
// pages, and its page n+1 answers 410 (which also invalidates every token
// issued so far). A listing of n pages or fewer ends normally and disarms
// it; use SetPageSize to get enough pages.
func (c *GoogleCalendar) InvalidateSyncTokensAfterPages(calendarID string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cal, ok := c.calendars[calendarID]; ok {
		cal.doomArmed, cal.doomPages, cal.doomList = true, n, ""
	}
}

// SetPageSize serves at most max items a page whatever maxResults asks:
// "The number of events in the resulting page may be less than this value,
// or none at all, even if there are more events matching the query"
// (maxResults in the discovery document). 0 restores maxResults.
func (c *GoogleCalendar) SetPageSize(maxItems int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pageSize = maxItems
}

// googleError writes Google's JSON error body: {"error": {"errors": [...],
// "code", "message"}} (guides/errors).
func googleError(w http.ResponseWriter, status int, domain, reason, message string, extra ...string) {
	item := map[string]string{"domain": domain, "reason": reason, "message": message}
	for i := 0; i+1 < len(extra); i += 2 {
		item[extra[i]] = extra[i+1]
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	b, _ := json.MarshalIndent(map[string]any{"error": map[string]any{
		"errors": []map[string]string{item}, "code": status, "message": message,
	}}, "", "  ")
	_, _ = w.Write(b)
}

func calendarNotFound(w http.ResponseWriter) {
	// guides/errors, "404: Not found".
	googleError(w, http.StatusNotFound, "global", "notFound", "Not Found")
}

func badRequest(w http.ResponseWriter, reason, message string, extra ...string) {
	googleError(w, http.StatusBadRequest, "global", reason, message, extra...)
}

// authorize checks the Bearer token and its scope; it answers the error and
// returns false when the request may not proceed.
func (c *GoogleCalendar) authorize(w http.ResponseWriter, r *http.Request, allowed func(scope string) bool) bool {
	h := r.Header.Get("Authorization")
	tok, isBearer := strings.CutPrefix(h, "Bearer ")
	if h == "" {
		// No credentials: Google answers 401 reason "required" ("Login
		// Required."), and a Bearer challenge.
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
		googleError(w, http.StatusUnauthorized, "global", "required", "Login Required.",
			"locationType", "header", "location", "Authorization")
		return false
	}
	scope, ok := "", false
	if isBearer && c.oauth != nil {
		scope, ok = c.oauth.ValidAccessToken(strings.TrimSpace(tok))
	}
	if !ok {
		// guides/errors, "401: Invalid Credentials": "The access token
		// you're using is either expired or invalid."
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="invalid_token"`)
		googleError(w, http.StatusUnauthorized, "global", "authError", "Invalid Credentials",
			"locationType", "header", "location", "Authorization")
		return false
	}
	for _, s := range strings.Fields(scope) {
		if allowed(s) {
			return true
		}
	}
	// A token without a calendar scope: Google's 403 insufficientPermissions
	// ("Request had insufficient authentication scopes.").
	w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="insufficient_scope", scope="`+calendarScopes[0]+`"`)
	googleError(w, http.StatusForbidden, "global", "insufficientPermissions", "Request had insufficient authentication scopes.")
	return false
}

func eventsScope(s string) bool {
	for _, a := range calendarScopes {
		if s == a {
			return true
		}
	}
	return false
}

// anyCalendarScope: channels.stop accepts every Calendar scope (its
// "scopes" in the discovery document).
func anyCalendarScope(s string) bool {
	return s == "https://www.googleapis.com/auth/calendar" || strings.HasPrefix(s, "https://www.googleapis.com/auth/calendar.")
}

// listToken is what a sync token or a page token carries (base64 JSON, so
// opaque to clients as Google's are).
type listToken struct {
	Cal   string `json:"c"`
	Epoch int64  `json:"e"`
	// Since is the change-log position of an incremental listing (-1 for a
	// full one); AsOf is the position the listing's nextSyncToken will carry.
	Since int64 `json:"s"`
	AsOf  int64 `json:"a"`
	// Page-token only: the listing's parameters, the sort key of the last
	// item served, how many pages were served, and the listing's id.
	Query string  `json:"q,omitempty"`
	After []int64 `json:"k,omitempty"`
	Pages int     `json:"p,omitempty"`
	List  string  `json:"l,omitempty"`
}

func encodeToken(t listToken) string {
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeToken(s string) (listToken, bool) {
	var t listToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &t) != nil || t.Cal == "" {
		return listToken{}, false
	}
	return t, true
}

// listingParams are the events.list parameters that shape the result.
type listingParams struct {
	maxResults            int
	showDeleted, single   bool
	timeMin, timeMax      time.Time
	updatedMin            time.Time
	q, orderBy, iCalUID   string
	hasTimeMin, hasTimeMx bool
	hasUpdatedMin         bool
}

// fullSyncRequired is the 410 of guides/errors, "410: Gone": "The
// syncToken parameter is no longer valid" with reason fullSyncRequired.
func fullSyncRequired(w http.ResponseWriter) {
	googleError(w, http.StatusGone, "calendar", "fullSyncRequired", "Sync token is no longer valid, a full sync is required.",
		"locationType", "parameter", "location", "syncToken")
}

func parseListing(q url.Values) (listingParams, string, string) {
	p := listingParams{maxResults: 250}
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return p, "maxResults", "Invalid value '" + v + "'. Values must be within the range: [1, 2500]"
		}
		// "The page size can never be larger than 2500 events." (maxResults
		// in the discovery document): a larger value is capped.
		p.maxResults = min(n, 2500)
	}
	p.showDeleted = q.Get("showDeleted") == "true"
	p.single = q.Get("singleEvents") == "true"
	for _, f := range []struct {
		name string
		dst  *time.Time
		has  *bool
	}{{"timeMin", &p.timeMin, &p.hasTimeMin}, {"timeMax", &p.timeMax, &p.hasTimeMx}, {"updatedMin", &p.updatedMin, &p.hasUpdatedMin}} {
		if v := q.Get(f.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return p, f.name, "Bad Request"
			}
			*f.dst, *f.has = t.UTC(), true
		}
	}
	p.q, p.orderBy, p.iCalUID = q.Get("q"), q.Get("orderBy"), q.Get("iCalUID")
	return p, "", ""
}

// eventsList serves GET calendars/{calendarId}/events.
func (c *GoogleCalendar) eventsList(w http.ResponseWriter, r *http.Request) {
	if !c.authorize(w, r, eventsScope) {
		return
	}
	calID := r.PathValue("calendarId")
	q := r.URL.Query()
	pageToken := q.Get("pageToken")
	// A page token carries its listing's parameters: the next page is "the
	// exact same request as previously" plus pageToken (guides/pagination),
	// so the first page's parameters are the ones that count.
	var pt listToken
	if pageToken != "" {
		var ok bool
		if pt, ok = decodeToken(pageToken); !ok || pt.Cal != calID {
			badRequest(w, "invalid", "Invalid page token value.", "locationType", "parameter", "location", "pageToken")
			return
		}
		if orig, err := url.ParseQuery(pt.Query); err == nil {
			q = orig
		}
	}
	syncToken := q.Get("syncToken")
	p, badParam, msg := parseListing(q)
	if badParam != "" {
		badRequest(w, "invalid", msg, "locationType", "parameter", "location", badParam)
		return
	}
	if syncToken != "" {
		// "There are several query parameters that cannot be specified
		// together with nextSyncToken ... iCalUID, orderBy,
		// privateExtendedProperty, q, sharedExtendedProperty, timeMin,
		// timeMax, updatedMin" (syncToken in the discovery document).
		for _, name := range []string{"iCalUID", "orderBy", "privateExtendedProperty", "q", "sharedExtendedProperty", "timeMin", "timeMax", "updatedMin"} {
			if q.Has(name) {
				badRequest(w, "invalid", "Sync token cannot be used with the "+name+" parameter.", "locationType", "parameter", "location", name)
				return
			}
		}
	}
	if p.hasTimeMin && p.hasTimeMx && !p.timeMax.After(p.timeMin) {
		// guides/errors, "400: Bad Request", its example body.
		googleError(w, http.StatusBadRequest, "calendar", "timeRangeEmpty", "The specified time range is empty.",
			"locationType", "parameter", "location", "timeMax")
		return
	}
	if p.orderBy != "" && p.orderBy != "startTime" && p.orderBy != "updated" {
		badRequest(w, "invalid", "Invalid value for: "+p.orderBy+" is not a valid value", "locationType", "parameter", "location", "orderBy")
		return
	}
	if p.orderBy == "startTime" && !p.single {
		// orderBy=startTime "is only available when querying single events
		// (i.e. the parameter singleEvents is True)".
		badRequest(w, "badRequest", "The requested ordering is not available for the particular query.")
		return
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	cal, ok := c.calendars[calID]
	if !ok {
		calendarNotFound(w)
		return
	}
	var tok listToken
	switch {
	case pageToken != "":
		tok = pt
		if tok.Epoch != cal.epoch {
			fullSyncRequired(w)
			return
		}
		if cal.doomList != "" && tok.List == cal.doomList && tok.Pages >= cal.doomPages {
			cal.epoch++
			cal.doomList = ""
			fullSyncRequired(w)
			return
		}
	case syncToken != "":
		st, ok := decodeToken(syncToken)
		if !ok || st.Cal != calID || st.Epoch != cal.epoch || st.AsOf > cal.seq {
			fullSyncRequired(w)
			return
		}
		tok = listToken{Cal: calID, Epoch: cal.epoch, Since: st.AsOf, AsOf: cal.seq, List: randomToken(12)}
		if cal.doomArmed {
			cal.doomArmed, cal.doomList = false, tok.List
			if cal.doomPages <= 0 {
				cal.epoch++
				cal.doomList = ""
				fullSyncRequired(w)
				return
			}
		}
	default:
		tok = listToken{Cal: calID, Epoch: cal.epoch, Since: -1, AsOf: cal.seq, List: randomToken(12)}
	}

	items := c.listItemsLocked(cal, p, tok.Since)
	start := 0
	if tok.After != nil {
		start = sort.Search(len(items), func(i int) bool { return keyLess(tok.After, items[i].key) })
	}
	size := p.maxResults
	if c.pageSize > 0 {
		size = min(size, c.pageSize)
	}
	end := min(start+size, len(items))
	page := items[start:end]

	out := map[string]any{
		"kind": "calendar#events", "etag": fmt.Sprintf(`"p%d"`, cal.seq), "summary": calID, "description": "",
		"updated": c.now().UTC().Format("2006-01-02T15:04:05.000Z"), "timeZone": "UTC", "accessRole": "owner",
		"defaultReminders": []any{},
	}
	body := make([]map[string]any, 0, len(page))
	for _, it := range page {
		body = append(body, it.json)
	}
	out["items"] = body
	if end < len(items) {
		next := tok
		next.After = page[len(page)-1].key
		next.Pages++
		next.Query = queryWithout(q, "pageToken")
		out["nextPageToken"] = encodeToken(next)
	} else {
		// "If the result set is too large and the response gets
		// paginated, then the nextSyncToken field is present only on the
		// very last page." (guides/sync). Changes made while the listing
		// was paged are after AsOf, so the next incremental sync returns
		// them.
		out["nextSyncToken"] = encodeToken(listToken{Cal: calID, Epoch: cal.epoch, Since: -1, AsOf: tok.AsOf})
		if tok.List != "" && tok.List == cal.doomList {
			cal.doomList = ""
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func queryWithout(q url.Values, drop string) string {
	v := url.Values{}
	for k, vs := range q {
		if k != drop {
			v[k] = vs
		}
	}
	return v.Encode()
}

// listItem is one item of a listing with its sort key.
type listItem struct {
	key  []int64
	json map[string]any
}

func keyLess(a, b []int64) bool {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// listItemsLocked computes a listing's items, sorted. since >= 0 makes it
// incremental: only what changed after that change-log position, deleted
// events always included ("All events deleted since the previous list
// request will always be in the result set", syncToken in the discovery
// document), and no time, text or order filters (refused earlier).
func (c *GoogleCalendar) listItemsLocked(cal *calState, p listingParams, since int64) []listItem {
	incremental := since >= 0
	// Cancelled events are listed "only on incremental sync (when syncToken
	// or updatedMin are specified) or if the showDeleted flag is set to
	// true" (Event.status in the discovery document).
	withDeleted := incremental || p.showDeleted || p.hasUpdatedMin
	var items []listItem
	add := func(ev *calEvent, seq int64, j map[string]any, start, end, updated time.Time) {
		if incremental && seq <= since {
			return
		}
		if !incremental {
			if p.hasTimeMin && !end.After(p.timeMin) { // timeMin bounds the end, exclusive
				return
			}
			if p.hasTimeMx && !start.Before(p.timeMax) { // timeMax bounds the start, exclusive
				return
			}
			if p.hasUpdatedMin && updated.Before(p.updatedMin) {
				return
			}
			if p.q != "" && !strings.Contains(strings.ToLower(ev.summary), strings.ToLower(p.q)) {
				return
			}
			if p.iCalUID != "" && p.iCalUID != iCalUID(ev) {
				return
			}
		}
		var key []int64
		switch p.orderBy {
		case "startTime":
			key = []int64{start.UnixNano(), ev.ord, start.UnixNano()}
		case "updated":
			key = []int64{updated.UnixNano(), seq, ev.ord, start.UnixNano()}
		default:
			key = []int64{ev.ord, start.UnixNano()}
		}
		items = append(items, listItem{key: key, json: j})
	}

	for _, ev := range cal.events {
		cancelled := ev.status == "cancelled"
		switch {
		case ev.rule == nil && ev.recurringEventID == "":
			if cancelled && !withDeleted {
				continue
			}
			add(ev, ev.seq, eventJSON(ev), ev.start, ev.end, ev.updated)
		case ev.rule != nil && !p.single:
			if cancelled && !withDeleted {
				continue
			}
			starts := ev.rule.starts(ev.start)
			last := starts[len(starts)-1].Add(ev.end.Sub(ev.start))
			if ev.rule.unbounded {
				last = time.Unix(1<<40, 0)
			}
			add(ev, ev.seq, eventJSON(ev), ev.start, last, ev.updated)
		case ev.rule != nil && p.single:
			// Instances of the recurring event; an exception stands in for
			// its instance, and a cancelled recurring event lists its
			// instances cancelled ("If showDeleted and singleEvents are both
			// True, only single instances of deleted events (but not the
			// underlying recurring events) are returned.").
			d := ev.end.Sub(ev.start)
			for _, s := range ev.rule.starts(ev.start) {
				id := instanceID(ev.id, s)
				ex := cal.events[id]
				seq, updated := ev.seq, ev.updated
				inst := &calEvent{
					id: id, ord: ev.ord, summary: ev.summary, start: s, end: s.Add(d), status: ev.status,
					recurringEventID: ev.id, originalStart: s, created: ev.created, updated: ev.updated,
				}
				if ex != nil {
					cp := *ex
					inst = &cp
					inst.ord = ev.ord
					if ex.seq > seq {
						seq, updated = ex.seq, ex.updated
					}
					if cancelled {
						inst = &calEvent{id: id, ord: ev.ord, status: "cancelled", recurringEventID: ev.id, originalStart: s, start: s, end: s.Add(d), updated: updated}
					}
				}
				if inst.status == "cancelled" && !withDeleted {
					continue
				}
				inst.seq = seq
				add(inst, seq, eventJSON(inst), inst.start, inst.end, updated)
			}
		case ev.recurringEventID != "" && !p.single:
			// An exception, listed beside its recurring event. "Cancelled
			// instances of recurring events (but not the underlying
			// recurring event) will still be included if showDeleted and
			// singleEvents are both False." (showDeleted in the discovery
			// document)
			parent := cal.events[ev.recurringEventID]
			if parent == nil || (parent.status == "cancelled" && !withDeleted) {
				continue
			}
			add(ev, ev.seq, eventJSON(ev), ev.start, ev.end, ev.updated)
		}
	}
	sort.Slice(items, func(i, j int) bool { return keyLess(items[i].key, items[j].key) })
	return items
}

func iCalUID(ev *calEvent) string {
	id := ev.id
	if ev.recurringEventID != "" {
		id = ev.recurringEventID
	}
	return id + "@google.com"
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// eventJSON is an Event resource. A cancelled event is minimal: "Deleted
// events are only guaranteed to have the id field populated", and
// "Cancelled exceptions are only guaranteed to have values for the id,
// recurringEventId and originalStartTime fields populated" (Event.status in
// the discovery document); the emulator gives no more, so that a client
// cannot come to rely on more.
func eventJSON(ev *calEvent) map[string]any {
	j := map[string]any{
		"kind":   "calendar#event",
		"etag":   fmt.Sprintf(`"%d"`, ev.updated.UnixMicro()*10+ev.seq%10),
		"id":     ev.id,
		"status": ev.status,
	}
	if ev.recurringEventID != "" {
		j["recurringEventId"] = ev.recurringEventID
		j["originalStartTime"] = map[string]string{"dateTime": rfc3339(ev.originalStart), "timeZone": "UTC"}
	}
	if ev.status == "cancelled" {
		return j
	}
	j["htmlLink"] = "https://www.google.com/calendar/event?eid=" + base64.RawURLEncoding.EncodeToString([]byte(ev.id))
	j["created"] = ev.created.Format("2006-01-02T15:04:05.000Z")
	j["updated"] = ev.updated.Format("2006-01-02T15:04:05.000Z")
	j["summary"] = ev.summary
	j["creator"] = map[string]any{"email": "sandbox@example.com", "self": true}
	j["organizer"] = map[string]any{"email": "sandbox@example.com", "self": true}
	j["start"] = map[string]string{"dateTime": rfc3339(ev.start), "timeZone": "UTC"}
	j["end"] = map[string]string{"dateTime": rfc3339(ev.end), "timeZone": "UTC"}
	if len(ev.recurrence) > 0 && ev.recurringEventID == "" {
		j["recurrence"] = ev.recurrence
	}
	j["iCalUID"] = iCalUID(ev)
	j["sequence"] = 0
	j["eventType"] = "default"
	j["reminders"] = map[string]any{"useDefault": true}
	return j
}

// rrule is the subset of RFC 5545 recurrence rules the emulator expands:
// FREQ=DAILY or WEEKLY with INTERVAL, COUNT or UNTIL.
type rrule struct {
	step      time.Duration
	count     int
	until     time.Time
	unbounded bool
}

// maxInstances bounds the expansion of a rule without COUNT or UNTIL.
const maxInstances = 400

func parseRecurrence(lines []string) (*rrule, error) {
	if len(lines) == 0 {
		return nil, nil
	}
	if len(lines) > 1 || !strings.HasPrefix(lines[0], "RRULE:") {
		return nil, fmt.Errorf("sandbox: the emulator expands one RRULE line, got %q", lines)
	}
	r := &rrule{}
	interval := 1
	var freq time.Duration
	for _, part := range strings.Split(strings.TrimPrefix(lines[0], "RRULE:"), ";") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "FREQ":
			switch v {
			case "DAILY":
				freq = 24 * time.Hour
			case "WEEKLY":
				freq = 7 * 24 * time.Hour
			default:
				return nil, fmt.Errorf("sandbox: the emulator expands FREQ=DAILY or WEEKLY, got %q", v)
			}
		case "INTERVAL":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("sandbox: bad INTERVAL %q", v)
			}
			interval = n
		case "COUNT":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("sandbox: bad COUNT %q", v)
			}
			r.count = n
		case "UNTIL":
			t, err := time.Parse("20060102T150405Z", v)
			if err != nil {
				if t, err = time.Parse("20060102", v); err != nil {
					return nil, fmt.Errorf("sandbox: bad UNTIL %q", v)
				}
			}
			r.until = t.UTC()
		default:
			return nil, fmt.Errorf("sandbox: the emulator does not expand %s", k)
		}
	}
	if freq == 0 {
		return nil, errors.New("sandbox: RRULE without FREQ")
	}
	r.step = freq * time.Duration(interval)
	r.unbounded = r.count == 0 && r.until.IsZero()
	return r, nil
}

// starts lists the occurrences' start times from the first one.
func (r *rrule) starts(first time.Time) []time.Time {
	var out []time.Time
	for t := first.UTC(); len(out) < maxInstances; t = t.Add(r.step) {
		if r.count > 0 && len(out) >= r.count {
			break
		}
		if !r.until.IsZero() && t.After(r.until) {
			break
		}
		out = append(out, t)
	}
	return out
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

// registerAdmin adds the same controls as the Go methods over HTTP, for the
// demo (JSON bodies; times in RFC 3339):
//
//	POST   /_sandbox/calendar/calendars                                 {"id"}
//	POST   /_sandbox/calendar/calendars/{cal}/events                    {"id"?,"summary","start","end","recurrence"} → {"id"}
//	PATCH  /_sandbox/calendar/calendars/{cal}/events/{event}            {"summary"}
//	DELETE /_sandbox/calendar/calendars/{cal}/events/{event}[?purge=true]
//	POST   /_sandbox/calendar/calendars/{cal}/events/{event}/cancelInstance {"originalStart"} → {"id"}
//	POST   /_sandbox/calendar/calendars/{cal}/invalidateSyncTokens      {"afterPages"?}
//	POST   /_sandbox/calendar/calendars/{cal}/notify
//	GET    /_sandbox/calendar/calendars/{cal}/channels
//	PUT    /_sandbox/calendar/pageSize                                  {"max"}
//	POST   /_sandbox/calendar/refusals                                  {"prefix","status"}
//	PUT    /_sandbox/calendar/pushFault                                 {"drop","duplicate","delay","reorder"}
//	GET    /_sandbox/calendar/pushes
func (c *GoogleCalendar) registerAdmin(s *Server) {
	const p = "/_sandbox/calendar"
	s.HandleAdmin("POST "+p+"/calendars", func(w http.ResponseWriter, r *http.Request) {
		var b struct{ ID string }
		if !adminDecode(w, r, &b) {
			return
		}
		if b.ID == "" {
			adminError(w, http.StatusBadRequest, errors.New("id is required"))
			return
		}
		c.AddCalendar(b.ID)
		w.WriteHeader(http.StatusNoContent)
	})
	s.HandleAdmin("POST "+p+"/calendars/{cal}/events", func(w http.ResponseWriter, r *http.Request) {
		var b CalendarEvent
		if !adminDecode(w, r, &b) {
			return
		}
		id, err := c.createEvent(r.PathValue("cal"), b)
		switch {
		case errors.Is(err, ErrDuplicateEventID):
			adminError(w, http.StatusConflict, err)
			return
		case err != nil:
			adminError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, http.StatusCreated, map[string]string{"id": id})
	})
	s.HandleAdmin("PATCH "+p+"/calendars/{cal}/events/{event}", func(w http.ResponseWriter, r *http.Request) {
		var b struct{ Summary string }
		if !adminDecode(w, r, &b) {
			return
		}
		adminDone(w, c.UpdateEvent(r.PathValue("cal"), r.PathValue("event"), b.Summary))
	})
	s.HandleAdmin("DELETE "+p+"/calendars/{cal}/events/{event}", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("purge") == "true" {
			adminDone(w, c.PurgeEvent(r.PathValue("cal"), r.PathValue("event")))
			return
		}
		adminDone(w, c.CancelEvent(r.PathValue("cal"), r.PathValue("event")))
	})
	s.HandleAdmin("POST "+p+"/calendars/{cal}/events/{event}/cancelInstance", func(w http.ResponseWriter, r *http.Request) {
		var b struct{ OriginalStart time.Time }
		if !adminDecode(w, r, &b) {
			return
		}
		id, err := c.CancelInstance(r.PathValue("cal"), r.PathValue("event"), b.OriginalStart)
		if err != nil {
			adminError(w, http.StatusNotFound, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"id": id})
	})
	s.HandleAdmin("POST "+p+"/calendars/{cal}/invalidateSyncTokens", func(w http.ResponseWriter, r *http.Request) {
		var b struct{ AfterPages *int }
		if r.ContentLength != 0 && !adminDecode(w, r, &b) {
			return
		}
		if b.AfterPages != nil {
			c.InvalidateSyncTokensAfterPages(r.PathValue("cal"), *b.AfterPages)
		} else {
			c.InvalidateSyncTokens(r.PathValue("cal"))
		}
		w.WriteHeader(http.StatusNoContent)
	})
	s.HandleAdmin("POST "+p+"/calendars/{cal}/notify", func(w http.ResponseWriter, r *http.Request) {
		c.Notify(r.PathValue("cal"))
		w.WriteHeader(http.StatusNoContent)
	})
	s.HandleAdmin("GET "+p+"/calendars/{cal}/channels", func(w http.ResponseWriter, r *http.Request) {
		chs := c.Channels(r.PathValue("cal"))
		if chs == nil {
			chs = []CalendarChannel{}
		}
		writeJSON(w, http.StatusOK, chs)
	})
	s.HandleAdmin("PUT "+p+"/pageSize", func(w http.ResponseWriter, r *http.Request) {
		var b struct{ Max int }
		if !adminDecode(w, r, &b) {
			return
		}
		c.SetPageSize(b.Max)
		w.WriteHeader(http.StatusNoContent)
	})
	s.HandleAdmin("POST "+p+"/refusals", func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Prefix string
			Status int
		}
		if !adminDecode(w, r, &b) {
			return
		}
		if b.Status < 400 || b.Status > 599 {
			adminError(w, http.StatusBadRequest, errors.New("status must be 4xx or 5xx"))
			return
		}
		c.RefuseAddress(b.Prefix, b.Status)
		w.WriteHeader(http.StatusNoContent)
	})
	s.HandleAdmin("PUT "+p+"/pushFault", func(w http.ResponseWriter, r *http.Request) {
		var b PushFault
		if !adminDecode(w, r, &b) {
			return
		}
		c.SetPushFault(b)
		w.WriteHeader(http.StatusNoContent)
	})
	s.HandleAdmin("GET "+p+"/pushes", func(w http.ResponseWriter, _ *http.Request) {
		ps := c.Pushes()
		if ps == nil {
			ps = []PushRecord{}
		}
		writeJSON(w, http.StatusOK, ps)
	})
}

func adminDecode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		adminError(w, http.StatusBadRequest, fmt.Errorf("body: %w", err))
		return false
	}
	return true
}

func adminError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

func adminDone(w http.ResponseWriter, err error) {
	if err != nil {
		adminError(w, http.StatusNotFound, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
