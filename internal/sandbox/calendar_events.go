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
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Events of the Calendar emulator: the Go controls that create, change and
// cancel them (each a change in the calendar's log, pushed to its
// channels), and the Event resource they are listed as.

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
