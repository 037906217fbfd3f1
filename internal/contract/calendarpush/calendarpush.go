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

// Package calendarpush holds what the webhook's Google Calendar push route
// and the CalendarWatch controller must agree on (seed 002): the push
// route's path, the channel ids the operator opens and how the webhook
// reads them back, the hash of a channel's token kept in status, and the
// notification annotation the webhook writes for the controller. It calls
// nobody: the Calendar API itself is package gcalendar's.
package calendarpush

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
)

// PushPath is the webhook server's push route; a channel's address is the
// server's public URL followed by it.
const PushPath = "/calendar/push"

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
// switchboard.dev/calendar-notification annotation
// (v1alpha1.CalendarNotificationAnnotation).
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
