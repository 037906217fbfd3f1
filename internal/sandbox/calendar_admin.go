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
	"errors"
	"net/http"
	"time"
)

// The Calendar emulator's controls over HTTP.

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
	s.HandleAdmin("POST "+p+"/calendars", adminBody(func(_ *http.Request, b struct{ ID string }) error {
		if b.ID == "" {
			return errAdminNoID
		}
		c.AddCalendar(b.ID)
		return nil
	}))
	s.HandleAdmin("POST "+p+"/calendars/{cal}/events", c.adminCreateEvent)
	s.HandleAdmin("PATCH "+p+"/calendars/{cal}/events/{event}", adminBody(func(r *http.Request, b struct{ Summary string }) error {
		return c.UpdateEvent(r.PathValue("cal"), r.PathValue("event"), b.Summary)
	}))
	s.HandleAdmin("DELETE "+p+"/calendars/{cal}/events/{event}", c.adminDeleteEvent)
	s.HandleAdmin("POST "+p+"/calendars/{cal}/events/{event}/cancelInstance", c.adminCancelInstance)
	s.HandleAdmin("POST "+p+"/calendars/{cal}/invalidateSyncTokens", c.adminInvalidateSyncTokens)
	s.HandleAdmin("POST "+p+"/calendars/{cal}/notify", func(w http.ResponseWriter, r *http.Request) {
		c.Notify(r.PathValue("cal"))
		w.WriteHeader(http.StatusNoContent)
	})
	s.HandleAdmin("GET "+p+"/calendars/{cal}/channels", adminList(func(r *http.Request) []CalendarChannel {
		return c.Channels(r.PathValue("cal"))
	}))
	s.HandleAdmin("PUT "+p+"/pageSize", adminBody(func(_ *http.Request, b struct{ Max int }) error {
		c.SetPageSize(b.Max)
		return nil
	}))
	s.HandleAdmin("POST "+p+"/refusals", adminBody(func(_ *http.Request, b struct {
		Prefix string
		Status int
	}) error {
		if b.Status < 400 || b.Status > 599 {
			return adminBadRequest(errors.New("status must be 4xx or 5xx"))
		}
		c.RefuseAddress(b.Prefix, b.Status)
		return nil
	}))
	s.HandleAdmin("PUT "+p+"/pushFault", adminBody(func(_ *http.Request, b PushFault) error {
		c.SetPushFault(b)
		return nil
	}))
	s.HandleAdmin("GET "+p+"/pushes", adminList(func(*http.Request) []PushRecord { return c.Pushes() }))
}

// adminCreateEvent creates an event: 201 {"id"}, 409 for an id the
// calendar already has, 400 for anything else wrong.
func (c *GoogleCalendar) adminCreateEvent(w http.ResponseWriter, r *http.Request) {
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
}

// adminDeleteEvent cancels an event, or with ?purge=true removes it.
func (c *GoogleCalendar) adminDeleteEvent(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("purge") == "true" {
		adminDone(w, c.PurgeEvent(r.PathValue("cal"), r.PathValue("event")))
		return
	}
	adminDone(w, c.CancelEvent(r.PathValue("cal"), r.PathValue("event")))
}

// adminCancelInstance cancels one occurrence: 200 {"id"} of the instance.
func (c *GoogleCalendar) adminCancelInstance(w http.ResponseWriter, r *http.Request) {
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
}

// adminInvalidateSyncTokens invalidates the tokens at once, or with
// {"afterPages"} in the middle of the next incremental listing.
func (c *GoogleCalendar) adminInvalidateSyncTokens(w http.ResponseWriter, r *http.Request) {
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
}
