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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// events.list of the Calendar emulator: pages, sync tokens and the
// listing's filters, after "Synchronize resources efficiently"
// (https://developers.google.com/workspace/calendar/api/guides/sync).

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

// eventsListRequest is an events.list call, read and checked.
type eventsListRequest struct {
	calID string
	// query holds the listing's parameters: for a next page, the ones its
	// page token carries.
	query     url.Values
	pageToken string
	page      listToken // pageToken, decoded
	syncToken string
	params    listingParams
}

// eventsList serves GET calendars/{calendarId}/events.
func (c *GoogleCalendar) eventsList(w http.ResponseWriter, r *http.Request) {
	if !c.authorize(w, r, eventsScope) {
		return
	}
	req, ok := readEventsList(w, r)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cal, ok := c.calendars[req.calID]
	if !ok {
		calendarNotFound(w)
		return
	}
	tok, ok := c.listingTokenLocked(w, cal, req)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, c.eventsPageLocked(cal, req, tok))
}

// readEventsList reads the parameters of an events.list call; it answers
// 400 and returns false when they are malformed or do not go together.
func readEventsList(w http.ResponseWriter, r *http.Request) (eventsListRequest, bool) {
	req := eventsListRequest{calID: r.PathValue("calendarId"), query: r.URL.Query()}
	req.pageToken = req.query.Get("pageToken")
	// A page token carries its listing's parameters: the next page is "the
	// exact same request as previously" plus pageToken (guides/pagination),
	// so the first page's parameters are the ones that count.
	if req.pageToken != "" {
		var ok bool
		if req.page, ok = decodeToken(req.pageToken); !ok || req.page.Cal != req.calID {
			badRequest(w, "invalid", "Invalid page token value.", "locationType", "parameter", "location", "pageToken")
			return req, false
		}
		if orig, err := url.ParseQuery(req.page.Query); err == nil {
			req.query = orig
		}
	}
	req.syncToken = req.query.Get("syncToken")
	p, badParam, msg := parseListing(req.query)
	if badParam != "" {
		badRequest(w, "invalid", msg, "locationType", "parameter", "location", badParam)
		return req, false
	}
	req.params = p
	return req, checkListingParams(w, req)
}

// checkListingParams refuses parameters that do not go together, with
// Google's 400 answers.
func checkListingParams(w http.ResponseWriter, req eventsListRequest) bool {
	p := req.params
	if req.syncToken != "" {
		// "There are several query parameters that cannot be specified
		// together with nextSyncToken ... iCalUID, orderBy,
		// privateExtendedProperty, q, sharedExtendedProperty, timeMin,
		// timeMax, updatedMin" (syncToken in the discovery document).
		for _, name := range []string{"iCalUID", "orderBy", "privateExtendedProperty", "q", "sharedExtendedProperty", "timeMin", "timeMax", "updatedMin"} {
			if req.query.Has(name) {
				badRequest(w, "invalid", "Sync token cannot be used with the "+name+" parameter.", "locationType", "parameter", "location", name)
				return false
			}
		}
	}
	if p.hasTimeMin && p.hasTimeMx && !p.timeMax.After(p.timeMin) {
		// guides/errors, "400: Bad Request", its example body.
		googleError(w, http.StatusBadRequest, "calendar", "timeRangeEmpty", "The specified time range is empty.",
			"locationType", "parameter", "location", "timeMax")
		return false
	}
	if p.orderBy != "" && p.orderBy != "startTime" && p.orderBy != "updated" {
		badRequest(w, "invalid", "Invalid value for: "+p.orderBy+" is not a valid value", "locationType", "parameter", "location", "orderBy")
		return false
	}
	if p.orderBy == "startTime" && !p.single {
		// orderBy=startTime "is only available when querying single events
		// (i.e. the parameter singleEvents is True)".
		badRequest(w, "badRequest", "The requested ordering is not available for the particular query.")
		return false
	}
	return true
}

// listingTokenLocked finds where the listing stands: a next page goes on
// with its page token's listing, a sync token starts an incremental
// listing after the token's position, and no token starts a full listing.
// It answers 410 and returns false for a token that is no longer valid.
func (c *GoogleCalendar) listingTokenLocked(w http.ResponseWriter, cal *calState, req eventsListRequest) (listToken, bool) {
	switch {
	case req.pageToken != "":
		tok := req.page
		if tok.Epoch != cal.epoch {
			fullSyncRequired(w)
			return tok, false
		}
		if cal.doomList != "" && tok.List == cal.doomList && tok.Pages >= cal.doomPages {
			doomFiresLocked(w, cal)
			return tok, false
		}
		return tok, true
	case req.syncToken != "":
		return incrementalTokenLocked(w, cal, req.calID, req.syncToken)
	default:
		return listToken{Cal: req.calID, Epoch: cal.epoch, Since: -1, AsOf: cal.seq, List: randomToken(12)}, true
	}
}

// incrementalTokenLocked starts an incremental listing from a sync token;
// the listing takes on an armed InvalidateSyncTokensAfterPages.
func incrementalTokenLocked(w http.ResponseWriter, cal *calState, calID, syncToken string) (listToken, bool) {
	st, ok := decodeToken(syncToken)
	if !ok || st.Cal != calID || st.Epoch != cal.epoch || st.AsOf > cal.seq {
		fullSyncRequired(w)
		return listToken{}, false
	}
	tok := listToken{Cal: calID, Epoch: cal.epoch, Since: st.AsOf, AsOf: cal.seq, List: randomToken(12)}
	if cal.doomArmed {
		cal.doomArmed, cal.doomList = false, tok.List
		if cal.doomPages <= 0 {
			doomFiresLocked(w, cal)
			return tok, false
		}
	}
	return tok, true
}

// doomFiresLocked answers the 410 an InvalidateSyncTokensAfterPages armed,
// which invalidates every token issued so far.
func doomFiresLocked(w http.ResponseWriter, cal *calState) {
	cal.epoch++
	cal.doomList = ""
	fullSyncRequired(w)
}

// eventsPageLocked is the Events resource of the listing tok's next page.
func (c *GoogleCalendar) eventsPageLocked(cal *calState, req eventsListRequest, tok listToken) map[string]any {
	items := c.listItemsLocked(cal, req.params, tok.Since)
	start := 0
	if tok.After != nil {
		start = sort.Search(len(items), func(i int) bool { return keyLess(tok.After, items[i].key) })
	}
	size := req.params.maxResults
	if c.pageSize > 0 {
		size = min(size, c.pageSize)
	}
	end := min(start+size, len(items))
	page := items[start:end]

	out := map[string]any{
		"kind": "calendar#events", "etag": fmt.Sprintf(`"p%d"`, cal.seq), "summary": req.calID, "description": "",
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
		next.Query = queryWithout(req.query, "pageToken")
		out["nextPageToken"] = encodeToken(next)
	} else {
		// "If the result set is too large and the response gets
		// paginated, then the nextSyncToken field is present only on the
		// very last page." (guides/sync). Changes made while the listing
		// was paged are after AsOf, so the next incremental sync returns
		// them.
		out["nextSyncToken"] = encodeToken(listToken{Cal: req.calID, Epoch: cal.epoch, Since: -1, AsOf: tok.AsOf})
		if tok.List != "" && tok.List == cal.doomList {
			cal.doomList = ""
		}
	}
	return out
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

// listing collects the items of one listing.
type listing struct {
	p           listingParams
	since       int64
	incremental bool
	withDeleted bool
	items       []listItem
}

// listItemsLocked computes a listing's items, sorted. since >= 0 makes it
// incremental: only what changed after that change-log position, deleted
// events always included ("All events deleted since the previous list
// request will always be in the result set", syncToken in the discovery
// document), and no time, text or order filters (refused earlier).
func (c *GoogleCalendar) listItemsLocked(cal *calState, p listingParams, since int64) []listItem {
	l := &listing{p: p, since: since, incremental: since >= 0}
	// Cancelled events are listed "only on incremental sync (when syncToken
	// or updatedMin are specified) or if the showDeleted flag is set to
	// true" (Event.status in the discovery document).
	l.withDeleted = l.incremental || p.showDeleted || p.hasUpdatedMin
	for _, ev := range cal.events {
		l.addEvent(cal, ev)
	}
	sort.Slice(l.items, func(i, j int) bool { return keyLess(l.items[i].key, l.items[j].key) })
	return l.items
}

// addEvent lists a stored event as the listing shows it: a single event,
// a recurring event whole or as its instances (singleEvents), or an
// exception beside its recurring event.
func (l *listing) addEvent(cal *calState, ev *calEvent) {
	cancelled := ev.status == "cancelled"
	switch {
	case ev.rule == nil && ev.recurringEventID == "":
		if cancelled && !l.withDeleted {
			return
		}
		l.add(ev, ev.seq, eventJSON(ev), ev.start, ev.end, ev.updated)
	case ev.rule != nil && !l.p.single:
		if cancelled && !l.withDeleted {
			return
		}
		starts := ev.rule.starts(ev.start)
		last := starts[len(starts)-1].Add(ev.end.Sub(ev.start))
		if ev.rule.unbounded {
			last = time.Unix(1<<40, 0)
		}
		l.add(ev, ev.seq, eventJSON(ev), ev.start, last, ev.updated)
	case ev.rule != nil && l.p.single:
		l.addInstances(cal, ev)
	case ev.recurringEventID != "" && !l.p.single:
		// An exception, listed beside its recurring event. "Cancelled
		// instances of recurring events (but not the underlying
		// recurring event) will still be included if showDeleted and
		// singleEvents are both False." (showDeleted in the discovery
		// document)
		parent := cal.events[ev.recurringEventID]
		if parent == nil || (parent.status == "cancelled" && !l.withDeleted) {
			return
		}
		l.add(ev, ev.seq, eventJSON(ev), ev.start, ev.end, ev.updated)
	}
}

// addInstances lists the instances of the recurring event ev; an
// exception stands in for its instance, and a cancelled recurring event
// lists its instances cancelled ("If showDeleted and singleEvents are both
// True, only single instances of deleted events (but not the underlying
// recurring events) are returned.").
func (l *listing) addInstances(cal *calState, ev *calEvent) {
	cancelled := ev.status == "cancelled"
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
		if inst.status == "cancelled" && !l.withDeleted {
			continue
		}
		inst.seq = seq
		l.add(inst, seq, eventJSON(inst), inst.start, inst.end, updated)
	}
}

// add lists one item, if the listing's filters keep it.
func (l *listing) add(ev *calEvent, seq int64, j map[string]any, start, end, updated time.Time) {
	if !l.keeps(ev, seq, start, end, updated) {
		return
	}
	l.items = append(l.items, listItem{key: l.p.sortKey(ev, seq, start, updated), json: j})
}

// keeps applies the listing's filters: for an incremental listing, a
// change after its position; for a full one, the time, text and iCalUID
// filters.
func (l *listing) keeps(ev *calEvent, seq int64, start, end, updated time.Time) bool {
	if l.incremental {
		return seq > l.since
	}
	p := l.p
	if p.hasTimeMin && !end.After(p.timeMin) { // timeMin bounds the end, exclusive
		return false
	}
	if p.hasTimeMx && !start.Before(p.timeMax) { // timeMax bounds the start, exclusive
		return false
	}
	if p.hasUpdatedMin && updated.Before(p.updatedMin) {
		return false
	}
	if p.q != "" && !strings.Contains(strings.ToLower(ev.summary), strings.ToLower(p.q)) {
		return false
	}
	return p.iCalUID == "" || p.iCalUID == iCalUID(ev)
}

// sortKey orders an item by the listing's orderBy.
func (p listingParams) sortKey(ev *calEvent, seq int64, start, updated time.Time) []int64 {
	switch p.orderBy {
	case "startTime":
		return []int64{start.UnixNano(), ev.ord, start.UnixNano()}
	case "updated":
		return []int64{updated.UnixNano(), seq, ev.ord, start.UnixNano()}
	default:
		return []int64{ev.ord, start.UnixNano()}
	}
}
