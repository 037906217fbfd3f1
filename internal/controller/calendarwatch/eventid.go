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

package calendarwatch

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation"
)

// An appointment object carries its event's id in a label, whose value
// holds at most 63 characters, while Google lets a client choose event ids
// of up to 1024 (Event.id: "the length of the ID must be between 5 and
// 1024 characters"). An id that does not fit is carried hashed.

// HashedEventIDPrefix starts a hashed event id. It is not base32hex (the
// only characters of Google's event ids), so a hashed id is never taken
// for a real one.
const HashedEventIDPrefix = "sha256-"

// hashedDigits is how many hex digits of the SHA-256 a hashed id keeps:
// 128 bits, and room for an instance's "_<start>" within 63 characters.
const hashedDigits = 32

// instanceSuffix is the "_<original start>" of an instance of a recurring
// event (events.instances: "<recurring event id>_<start>", the start in
// UTC basic format, or a date for an all-day event).
var instanceSuffix = regexp.MustCompile(`_[0-9]{8}(T[0-9]{6}Z)?$`)

// EventIDLabelValue is the value an appointment's eventIDLabel carries
// for the event id: the id itself when it is a valid label value (every id
// Google makes is), HashedEventID otherwise.
func EventIDLabelValue(id string) string {
	if len(validation.IsValidLabelValue(id)) == 0 {
		return id
	}
	return HashedEventID(id)
}

// HashedEventID is "sha256-" and the first 32 hex digits of the SHA-256 of
// id. For an instance of a recurring event, the series id is hashed and
// "_<start>" kept, so that cancelling the series finds the appointments of
// its instances as it does for short ids. It is always a valid label
// value, and a valid label for any id.
func HashedEventID(id string) string {
	series, start := id, ""
	if loc := instanceSuffix.FindStringIndex(id); loc != nil && loc[0] > 0 {
		series, start = id[:loc[0]], id[loc[0]:]
	}
	sum := sha256.Sum256([]byte(series))
	return HashedEventIDPrefix + hex.EncodeToString(sum[:])[:hashedDigits] + start
}

// labelForms adds to set the values an appointment may carry for id: the
// id (when it fits) and its hash.
func labelForms(set map[string]bool, id string) {
	if v := EventIDLabelValue(id); v == id {
		set[id] = true
	}
	set[HashedEventID(id)] = true
}

// noteID shortens an event id for an Event's note, which the API server
// caps at 1 KiB: ids may be 1024 characters long.
func noteID(id string) string {
	const keep = 40
	if len(id) <= keep+10 {
		return id
	}
	return id[:keep] + "…(" + strconv.Itoa(len(id)) + " characters)"
}
