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
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file is the watch half of the Calendar emulator: events.watch and
// channels.stop, after "Push notifications"
// (https://developers.google.com/workspace/calendar/api/guides/push).

// CalendarChannel is an open notification channel.
type CalendarChannel struct {
	ID          string    `json:"id"`
	ResourceID  string    `json:"resourceId"`
	ResourceURI string    `json:"resourceUri"`
	CalendarID  string    `json:"calendarId"`
	Address     string    `json:"address"`
	Token       string    `json:"token,omitempty"`
	Expiration  time.Time `json:"expiration"`
}

type calChannel struct {
	CalendarChannel
	stopped bool
	msgNum  int64
	queue   []pushMsg
	held    *pushMsg // a notification a Reorder fault holds back
	running bool
}

// channelID is the character set Google accepts ("Channel id must match
// [A-Za-z0-9\-_\+/=]+" is its 400 answer), at most 64 long ("Maximum
// length: 64 characters", guides/push, "Required properties").
var channelID = regexp.MustCompile(`^[A-Za-z0-9\-_+/=]{1,64}$`)

// channelRequest is the events.watch body. expiration is a string of
// milliseconds (int64 as string in the discovery document) but clients send
// a number too (the guide's own example does).
type channelRequest struct {
	ID         string            `json:"id"`
	Type       string            `json:"type"`
	Address    string            `json:"address"`
	Token      string            `json:"token"`
	Expiration json.RawMessage   `json:"expiration"`
	Params     map[string]string `json:"params"`
	ResourceID string            `json:"resourceId"`
}

func (r channelRequest) expirationMillis() (int64, bool, error) {
	raw := strings.TrimSpace(string(r.Expiration))
	if raw == "" || raw == "null" {
		return 0, false, nil
	}
	raw = strings.Trim(raw, `"`)
	if raw == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	return n, true, err
}

// RefuseAddress makes events.watch refuse addresses starting with prefix
// with status and Google's error body, as it refuses an address whose
// domain is not verified for the project (guides/push, "Required
// properties": the address must be on a valid HTTPS endpoint).
// A status of 0 accepts the prefix again.
func (c *GoogleCalendar) RefuseAddress(prefix string, status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refusals = slices.DeleteFunc(c.refusals, func(r addressRefusal) bool { return r.prefix == prefix })
	if status != 0 {
		c.refusals = append(c.refusals, addressRefusal{prefix: prefix, status: status})
	}
}

// Channels lists a calendar's open channels: neither stopped nor expired.
func (c *GoogleCalendar) Channels(calendarID string) []CalendarChannel {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	var out []CalendarChannel
	for _, ch := range c.channels {
		if ch.CalendarID == calendarID && ch.openAt(now) {
			out = append(out, ch.CalendarChannel)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (ch *calChannel) openAt(now time.Time) bool {
	return !ch.stopped && now.Before(ch.Expiration)
}

// eventsWatch serves POST calendars/{calendarId}/events/watch.
func (c *GoogleCalendar) eventsWatch(w http.ResponseWriter, r *http.Request) {
	if !c.authorize(w, r, eventsScope) {
		return
	}
	req, ok := readChannelRequest(w, r)
	if !ok {
		return
	}
	watch, ok := c.checkWatch(w, req)
	if !ok {
		return
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refusedLocked(w, req.Address) {
		return
	}
	calID := r.PathValue("calendarId")
	cal, ok := c.calendars[calID]
	if !ok {
		calendarNotFound(w)
		return
	}
	now := c.now()
	if old, ok := c.channels[req.ID]; ok && old.openAt(now) {
		// "channel id not unique" lasts as long as the channel does.
		badRequest(w, "channelIdNotUnique", "Channel id not unique")
		return
	}
	granted, ok := c.grantExpiration(w, watch, now)
	if !ok {
		return
	}
	ch := &calChannel{CalendarChannel: CalendarChannel{
		ID: req.ID, ResourceID: cal.resourceID, ResourceURI: resourceURI(calID), CalendarID: calID,
		Address: req.Address, Token: req.Token, Expiration: granted,
	}}
	c.channels[req.ID] = ch
	// "After creating a notification channel to watch a resource, the
	// Google Calendar API sends a sync message to indicate that
	// notifications are starting", and "Sync messages always have an
	// X-Goog-Message-Number HTTP header value of 1" (guides/push). It goes
	// out at once, possibly before this answer.
	c.enqueueLocked(ch, "sync")
	writeChannel(w, ch)
}

// readChannelRequest decodes the Channel body of events.watch and
// channels.stop; it answers 400 parseError and returns false when the body
// is not one.
func readChannelRequest(w http.ResponseWriter, r *http.Request) (channelRequest, bool) {
	var req channelRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		badRequest(w, "parseError", "Parse Error")
		return req, false
	}
	return req, true
}

// watchRequest is a checked events.watch body with the lifetime it asks
// for: params.ttl (0 when absent) and expiration, in milliseconds.
type watchRequest struct {
	channelRequest
	ttl       time.Duration
	expMillis int64
	hasExp    bool
}

// checkWatch checks an events.watch body as Google does before it looks at
// the calendar; it answers 400 and returns false when the body is refused.
func (c *GoogleCalendar) checkWatch(w http.ResponseWriter, req channelRequest) (watchRequest, bool) {
	watch := watchRequest{channelRequest: req}
	if !checkChannelFields(w, req) || !c.checkWatchAddress(w, req.Address) {
		return watch, false
	}
	var err error
	watch.expMillis, watch.hasExp, err = req.expirationMillis()
	if err != nil {
		badRequest(w, "invalid", "Invalid value for: expiration", "locationType", "other", "location", "expiration")
		return watch, false
	}
	if v, ok := req.Params["ttl"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			badRequest(w, "invalid", "Invalid value for: params.ttl", "locationType", "other", "location", "params.ttl")
			return watch, false
		}
		watch.ttl = time.Duration(n) * time.Second
	}
	return watch, true
}

// checkChannelFields checks the channel's id, type and token.
func checkChannelFields(w http.ResponseWriter, req channelRequest) bool {
	switch {
	case req.ID == "":
		badRequest(w, "required", "Required", "locationType", "other", "location", "id")
		return false
	case !channelID.MatchString(req.ID):
		badRequest(w, "invalid", `Channel id must match [A-Za-z0-9\-_\+/=]+`, "locationType", "other", "location", "id")
		return false
	case req.Type != "web_hook" && req.Type != "webhook":
		// "Valid values are "web_hook" (or "webhook")." (Channel.type in
		// the discovery document)
		badRequest(w, "push.channelTypeNotSupported", "Unsupported channel type: "+req.Type)
		return false
	case len(req.Token) > 256:
		// token: "Maximum length: 256 characters" (guides/push,
		// "Optional properties").
		badRequest(w, "invalid", "Channel token too long", "locationType", "other", "location", "token")
		return false
	}
	return true
}

// checkWatchAddress checks the address notifications are to be sent to.
func (c *GoogleCalendar) checkWatchAddress(w http.ResponseWriter, address string) bool {
	addr, err := url.Parse(address)
	if err != nil || addr.Host == "" || (addr.Scheme != "https" && addr.Scheme != "http") {
		badRequest(w, "push.webhookUrlNoHostOrAddress", "Invalid notification address: "+address)
		return false
	}
	if c.RequireHTTPS && addr.Scheme != "https" {
		// guides/push: the receiver "is an HTTPS server"; Google answers
		// push.webhookUrlNotHttps, "WebHook callback must be HTTPS".
		badRequest(w, "push.webhookUrlNotHttps", "WebHook callback must be HTTPS: "+address)
		return false
	}
	return true
}

// refusedLocked answers the refusal (RefuseAddress) of an address, if it
// has one.
func (c *GoogleCalendar) refusedLocked(w http.ResponseWriter, address string) bool {
	for _, ref := range c.refusals {
		if strings.HasPrefix(address, ref.prefix) {
			// What Google answers an address it will not call: 401
			// push.webhookUrlUnauthorized for an unverified domain, or the
			// status the test chose.
			googleError(w, ref.status, "global", "push.webhookUrlUnauthorized", "Unauthorized WebHook callback channel: "+address)
			return true
		}
	}
	return false
}

// grantExpiration is the channel's expiration. "A notification channel can
// have an expiration time, with a value determined either by your request
// or by any Google Calendar API internal limits or defaults (the more
// restrictive value is used)." (guides/push, "Renew notification
// channels"); without one the TTL is 604800 s (params.ttl in the
// events.watch reference). An expiration in the past is refused with 400.
func (c *GoogleCalendar) grantExpiration(w http.ResponseWriter, watch watchRequest, now time.Time) (time.Time, bool) {
	maxTTL := c.MaxChannelTTL
	if maxTTL <= 0 {
		maxTTL = 7 * 24 * time.Hour
	}
	limit := now.Add(maxTTL)
	granted := now.Add(604800 * time.Second)
	if watch.ttl > 0 {
		granted = now.Add(watch.ttl)
	}
	if watch.hasExp {
		asked := time.UnixMilli(watch.expMillis)
		if !asked.After(now) {
			badRequest(w, "invalid", "Invalid value for: expiration is in the past", "locationType", "other", "location", "expiration")
			return time.Time{}, false
		}
		if watch.ttl == 0 || asked.Before(granted) {
			granted = asked
		}
	}
	if granted.After(limit) {
		granted = limit
	}
	return granted.Truncate(time.Millisecond), true
}

// writeChannel answers the Channel resource of a new channel.
func writeChannel(w http.ResponseWriter, ch *calChannel) {
	out := map[string]any{
		"kind": "api#channel", "id": ch.ID, "resourceId": ch.ResourceID, "resourceUri": ch.ResourceURI,
		"expiration": strconv.FormatInt(ch.Expiration.UnixMilli(), 10),
	}
	if ch.Token != "" {
		out["token"] = ch.Token
	}
	writeJSON(w, http.StatusOK, out)
}

// resourceURI is Google's for an events collection (the watch response
// example of the events.watch reference).
func resourceURI(calID string) string {
	return "https://www.googleapis.com/calendar/v3/calendars/" + url.PathEscape(calID) + "/events?alt=json"
}

// channelsStop serves POST channels/stop: 204 and no body; an unknown or
// already stopped channel, or a resourceId that is not the channel's, is
// 404 notFound.
func (c *GoogleCalendar) channelsStop(w http.ResponseWriter, r *http.Request) {
	if !c.authorize(w, r, anyCalendarScope) {
		return
	}
	req, ok := readChannelRequest(w, r)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.channels[req.ID]
	if !ok || ch.stopped || ch.ResourceID != req.ResourceID {
		googleError(w, http.StatusNotFound, "global", "notFound", "Channel '"+req.ID+"' not found for project")
		return
	}
	ch.stopped = true
	c.doneLocked(len(ch.queue))
	ch.queue, ch.held = nil, nil
	w.WriteHeader(http.StatusNoContent)
}
