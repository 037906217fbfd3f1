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
// upstream's.
package gcalendar

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/gapi"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// Scope is the one OAuth scope a CalendarWatch needs: reading events.
const Scope = "https://www.googleapis.com/auth/calendar.readonly"

// OAuthProvider is Google asking for Scope alone, offline (a refresh
// token) with consent forced (oauth.Google's parameters).
var OAuthProvider = oauth.Google.WithScopes(Scope)

// PushPath is the webhook server's push route; a channel's address is the
// server's public URL followed by it.
const PushPath = "/calendar/push"

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
	// ID is the channel id the operator chose; Token is echoed by Google in
	// X-Goog-Channel-Token; Address is the push route's public URL.
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

// HashToken is the hex SHA-256 kept in status.channelTokenHash.
func HashToken(token string) string { return capability.Hash(token) }

// ChannelIDPrefix starts every channel id the operator opens.
const ChannelIDPrefix = "sb-"

// ChannelID is "sb-<uid>-<sequence>": at most 3+36+1+19 = 59 characters of
// [A-Za-z0-9-] (Google: ≤ 64, [A-Za-z0-9\-_\+/=]). The UID lets the
// webhook find the watch of a channel before status names it (the sync
// message may arrive before events.watch returns); the sequence orders a
// watch's channels, so a stopped one is told from one being opened.
func ChannelID(uid types.UID, seq int64) string {
	return ChannelIDPrefix + string(uid) + "-" + strconv.FormatInt(seq, 10)
}

// ParseChannelID splits a channel id made by ChannelID.
func ParseChannelID(id string) (uid types.UID, seq int64, ok bool) {
	rest, found := strings.CutPrefix(id, ChannelIDPrefix)
	i := strings.LastIndexByte(rest, '-')
	if !found || i <= 0 || len(rest[:i]) > 64 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil || seq <= 0 {
		return "", 0, false
	}
	return types.UID(rest[:i]), seq, true
}

// ChannelSequence is the sequence of a channel status names (0 for none
// or one the operator did not make).
func ChannelSequence(ch *v1alpha1.ChannelStatus) int64 {
	if ch == nil {
		return 0
	}
	_, seq, _ := ParseChannelID(ch.ID)
	return seq
}

// Notification is the webhook's record of a push, kept in the
// switchboard.dev/calendar-notification annotation.
type Notification struct {
	ChannelID     string
	MessageNumber int64
	State         string
}

// String is the annotation's value: "<channel id>/<message number>/<state>".
func (n Notification) String() string {
	return n.ChannelID + "/" + strconv.FormatInt(n.MessageNumber, 10) + "/" + n.State
}

// ParseNotification reads the annotation's value.
func ParseNotification(v string) (Notification, bool) {
	parts := strings.Split(v, "/")
	if len(parts) != 3 {
		return Notification{}, false
	}
	n, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || parts[0] == "" {
		return Notification{}, false
	}
	return Notification{ChannelID: parts[0], MessageNumber: n, State: parts[2]}, true
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
