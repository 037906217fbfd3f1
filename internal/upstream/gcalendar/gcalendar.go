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

// Package gcalendar is the operator's narrow client of the Google Calendar
// API (seed 002): events.watch, channels.stop and events.list, through the
// real google.golang.org/api/calendar/v3 library, sent under the one
// outbound policy to the configured googleapis upstream. Errors come back
// as *outbound.Error so controllers classify them like every other
// upstream's. It knows no CRD: what the push route and the controller
// share (the push path, channel ids, the notification annotation) is
// package calendarpush's. The OAuth scope it needs is the connect
// flow's (targets.CalendarScope).
package gcalendar

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"

	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/gapi"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// PageSize is how many events one events.list page asks for (seed 002,
// "Periodic Sync Configuration": batches of 100). Google may answer fewer
// while more remain; every page is followed.
const PageSize = 100

// ErrSyncTokenGone is Google's 410 for a sync token (or a page token made
// from one) that is no longer valid: drop it and do a full sync
// (https://developers.google.com/calendar/api/guides/sync, "Full sync
// required by server").
var ErrSyncTokenGone = errors.New("the sync token is no longer valid: a full sync is required")

// ErrUnauthorized wraps Google's 401: the access token was refused. It is
// the shared gapi.ErrUnauthorized, so errors.Is answers alike for either.
var ErrUnauthorized = gapi.ErrUnauthorized

// Channel is an open push channel.
type Channel struct {
	ID, ResourceID string
	// Expiration is what Google granted (it may be sooner than asked).
	Expiration time.Time
}

// WatchRequest opens a channel.
type WatchRequest struct {
	CalendarID string
	// ID is the channel id the operator chose (calendarpush.ChannelID);
	// Token is echoed by Google in X-Goog-Channel-Token; Address is the
	// push route's public URL.
	ID, Token, Address string
	// Expiration asked for.
	Expiration time.Time
}

// Event is what the sync needs of an event. A cancelled event may carry
// nothing but its id (and, for a cancelled instance of a recurring event,
// the recurring event's id).
type Event struct {
	ID               string
	Status           string
	RecurringEventID string
}

// Cancelled reports status "cancelled".
func (e Event) Cancelled() bool { return e.Status == "cancelled" }

// Page is one events.list page. NextSyncToken is set on the last page
// only; NextPageToken on the others.
type Page struct {
	Events        []Event
	NextPageToken string
	NextSyncToken string
}

// ListRequest asks for one page: with SyncToken, the changes since it;
// without, every event (cancelled ones included, so a full sync sees
// deletions too). PageToken continues a listing.
type ListRequest struct {
	CalendarID           string
	SyncToken, PageToken string
}

// Client calls the Calendar API.
type Client struct {
	svc *calendar.Service
}

// New builds a client on the googleapis upstream of out.
func New(ctx context.Context, out *outbound.Client) (*Client, error) {
	svc, err := calendar.NewService(ctx, gapi.Options(out, out.Endpoint(upstream.GoogleAPIs, "/calendar/v3/"))...)
	if err != nil {
		return nil, fmt.Errorf("calendar client: %w", err)
	}
	return &Client{svc: svc}, nil
}

// Watch opens a push channel for the calendar's events.
func (c *Client) Watch(ctx context.Context, token string, r WatchRequest) (Channel, error) {
	ch, err := c.svc.Events.Watch(r.CalendarID, &calendar.Channel{
		Id: r.ID, Type: "web_hook", Address: r.Address, Token: r.Token,
		Expiration: r.Expiration.UnixMilli(),
	}).Context(gapi.WithToken(ctx, token)).Do()
	if err != nil {
		return Channel{}, classify("events.watch", err)
	}
	got := Channel{ID: ch.Id, ResourceID: ch.ResourceId}
	if ch.Expiration > 0 {
		got.Expiration = time.UnixMilli(ch.Expiration).UTC()
	}
	return got, nil
}

// Stop stops a channel. A channel Google does not know (already stopped,
// expired) is stopped: 404 is success.
func (c *Client) Stop(ctx context.Context, token, id, resourceID string) error {
	err := c.svc.Channels.Stop(&calendar.Channel{Id: id, ResourceId: resourceID}).Context(gapi.WithToken(ctx, token)).Do()
	if err != nil {
		var ge *googleapi.Error
		if errors.As(err, &ge) && ge.Code == http.StatusNotFound {
			return nil
		}
		return classify("channels.stop", err)
	}
	return nil
}

// List reads one page of events.
func (c *Client) List(ctx context.Context, token string, r ListRequest) (Page, error) {
	call := c.svc.Events.List(r.CalendarID).MaxResults(PageSize).
		Fields("items(id,status,recurringEventId)", "nextPageToken", "nextSyncToken")
	if r.SyncToken != "" {
		// A sync token cannot be combined with timeMin, timeMax, q,
		// orderBy, updatedMin or iCalUID (Google answers 400; events.list
		// reference, syncToken); deleted events are always included.
		call = call.SyncToken(r.SyncToken)
	} else {
		// A full listing omits cancelled events unless asked (events.list
		// reference, showDeleted).
		call = call.ShowDeleted(true)
	}
	if r.PageToken != "" {
		call = call.PageToken(r.PageToken)
	}
	evs, err := call.Context(gapi.WithToken(ctx, token)).Do()
	if err != nil {
		return Page{}, classify("events.list", err)
	}
	p := Page{NextPageToken: evs.NextPageToken, NextSyncToken: evs.NextSyncToken, Events: make([]Event, 0, len(evs.Items))}
	for _, e := range evs.Items {
		if e == nil || e.Id == "" {
			continue
		}
		p.Events = append(p.Events, Event{ID: e.Id, Status: e.Status, RecurringEventID: e.RecurringEventId})
	}
	return p, nil
}

// CalendarRefused reports a permanent refusal of the calendar itself: 404
// notFound (the account may not read it, or it does not exist) or 403,
// not a push address Google will not call ("push." reasons), which may be
// fixed on the receiving side at any moment.
func CalendarRefused(err error) bool {
	e, ok := outbound.Classify(err)
	return ok && outbound.IsPermanent(err) && (e.Status == http.StatusNotFound || e.Status == http.StatusForbidden) &&
		!strings.HasPrefix(gapi.Reason(err), "push.")
}

// classify is gapi.Classify with the Calendar API's own cases: 410 is
// ErrSyncTokenGone, and a 401 whose reason starts with "push." is the
// channel's problem, not the grant's.
func classify(call string, err error) error {
	e := gapi.Classify(call, err, upstream.GoogleAPIs)
	switch {
	case e.Status == http.StatusGone:
		e.Err = errors.Join(ErrSyncTokenGone, err)
	case e.Status == http.StatusUnauthorized && strings.HasPrefix(gapi.Reason(err), "push."):
		// events.watch answers 401 push.webhookUrlUnauthorized for an
		// address it refuses: not ErrUnauthorized.
		e.Err = err
	}
	return e
}
