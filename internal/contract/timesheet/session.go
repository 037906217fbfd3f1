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

package timesheet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// Limits of a session and of a post (seed 004 §1 and §5; MaxBatch serves
// the manual re-export of §2 ManualExportJob too).
const (
	MaxBatch    = 100
	MaxString   = 256
	MaxTags     = 32
	maxIDLength = 128
)

// DurationTolerance is how far durationSeconds may be from
// (endedAt − startedAt) / 1000 (seed 004 §1 says "equal"). One second:
// the tracker counts whole seconds on a ticking timer while the
// timestamps are milliseconds, so floor, round and a tick landing between
// the two reads each put the count up to one second off. The same rule is
// a CEL rule of the SheetSync CRD, so the API server holds it too.
const DurationTolerance = 1

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// FieldError is a session refused for one field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Item is one session of a post: parsed, or refused with the field at
// fault. ID is what could be read of its id, for the answer.
type Item struct {
	ID      string
	Session v1alpha1.TimeTrackerSession
	Err     *FieldError
}

// Parse reads a post's body: one session object, or {"sessions": [...]}
// with 1 to MaxBatch sessions. batch says which form it was. An error is
// a body that is not either form; a session that fails validation is an
// Item with Err, so the rest of a batch goes on.
func Parse(body []byte) (items []Item, batch bool, err *FieldError) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || top == nil {
		return nil, false, fieldErr("body", "must be a JSON object: one session, or {\"sessions\": [...]}")
	}
	raw, batch := top["sessions"]
	if !batch {
		return []Item{parseSession(body)}, false, nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, true, fieldErr("sessions", "must be an array of session objects")
	}
	switch {
	case len(list) == 0:
		return nil, true, fieldErr("sessions", "must hold at least one session")
	case len(list) > MaxBatch:
		return nil, true, fieldErr("sessions", "holds %d sessions; at most %d are accepted in one post", len(list), MaxBatch)
	}
	items = make([]Item, len(list))
	for i, r := range list {
		items[i] = parseSession(r)
		if items[i].Err != nil {
			items[i].Err.Field = fmt.Sprintf("sessions[%d].%s", i, items[i].Err.Field)
		}
	}
	return items, true, nil
}

// parseSession validates one session (seed 004 §1 TimeTrackerSession and
// §5): each failure names its field. Fields the seed does not list (userId
// among them: a connection belongs to one user already) are ignored.
func parseSession(raw json.RawMessage) Item {
	var f map[string]json.RawMessage
	if json.Unmarshal(raw, &f) != nil || f == nil {
		return Item{Err: fieldErr("session", "must be a JSON object")}
	}
	var it Item
	s := &it.Session
	if err := str(f, "id", true, maxIDLength, &s.ID); err != nil {
		return Item{Err: err}
	}
	it.ID = s.ID
	if !idPattern.MatchString(s.ID) {
		it.Err = fieldErr("id", "may hold only letters, digits, '-' and '_' (a UUID fits)")
		return it
	}
	it.Err = firstErr(
		func() *FieldError { return str(f, "title", true, MaxString, &s.Title) },
		func() *FieldError { return millis(f, "startedAt", &s.StartedAt) },
		func() *FieldError { return millis(f, "endedAt", &s.EndedAt) },
		func() *FieldError {
			if s.EndedAt < s.StartedAt {
				return fieldErr("endedAt", "must not be before startedAt")
			}
			return nil
		},
		func() *FieldError { return duration(f, s) },
		func() *FieldError { return str(f, "project", false, MaxString, &s.Project) },
		func() *FieldError { return str(f, "notes", false, MaxString, &s.Notes) },
		func() *FieldError { return str(f, "skill", false, MaxString, &s.Skill) },
		func() *FieldError { return str(f, "intensity", false, MaxString, &s.Intensity) },
		func() *FieldError { return tags(f, &s.Tags) },
	)
	return it
}

func firstErr(checks ...func() *FieldError) *FieldError {
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

func present(f map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	v, ok := f[name]
	if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return nil, false
	}
	return v, true
}

// str reads a string of at most limit characters; a required one must not
// be empty.
func str(f map[string]json.RawMessage, name string, required bool, limit int, into *string) *FieldError {
	v, ok := present(f, name)
	if !ok {
		if required {
			return fieldErr(name, "is required")
		}
		return nil
	}
	if json.Unmarshal(v, into) != nil {
		return fieldErr(name, "must be a string")
	}
	switch n := utf8.RuneCountInString(*into); {
	case required && n == 0:
		return fieldErr(name, "must not be empty")
	case n > limit:
		return fieldErr(name, "is %d characters long; at most %d are allowed", n, limit)
	}
	return nil
}

// number reads a required JSON number.
func number(f map[string]json.RawMessage, name string) (float64, *FieldError) {
	v, ok := present(f, name)
	if !ok {
		return 0, fieldErr(name, "is required")
	}
	var n float64
	if json.Unmarshal(v, &n) != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fieldErr(name, "must be a number")
	}
	return n, nil
}

// millis reads epoch milliseconds: a whole, non-negative number that
// fits a timestamp (before the year 10000).
func millis(f map[string]json.RawMessage, name string, into *int64) *FieldError {
	n, err := number(f, name)
	switch {
	case err != nil:
		return err
	case n != math.Trunc(n):
		return fieldErr(name, "must be whole milliseconds since the Unix epoch")
	case n < 0 || n > 253402300799999:
		return fieldErr(name, "must be milliseconds since the Unix epoch, between 0 and the year 9999")
	}
	*into = int64(n)
	return nil
}

// duration reads durationSeconds (a number, whole or not) and checks it
// against the timestamps; it is stored rounded to a whole second, and the
// check is made on what is stored, as the CRD's CEL rule makes it.
func duration(f map[string]json.RawMessage, s *v1alpha1.TimeTrackerSession) *FieldError {
	n, err := number(f, "durationSeconds")
	switch {
	case err != nil:
		return err
	case n < 0:
		return fieldErr("durationSeconds", "must be 0 or more")
	case n > math.MaxInt32:
		return fieldErr("durationSeconds", "is too large")
	}
	s.DurationSeconds = int64(math.Round(n))
	if want := (s.EndedAt - s.StartedAt) / 1000; s.DurationSeconds-want > DurationTolerance || want-s.DurationSeconds > DurationTolerance {
		return fieldErr("durationSeconds", "is %v but (endedAt - startedAt) / 1000 is %d; they must agree within %d second", n, want, DurationTolerance)
	}
	return nil
}

func tags(f map[string]json.RawMessage, into *[]string) *FieldError {
	v, ok := present(f, "tags")
	if !ok {
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(v, &list) != nil {
		return fieldErr("tags", "must be an array of strings")
	}
	if len(list) > MaxTags {
		return fieldErr("tags", "holds %d tags; at most %d are allowed", len(list), MaxTags)
	}
	out := make([]string, 0, len(list))
	for i, t := range list {
		var s string
		if json.Unmarshal(t, &s) != nil {
			return fieldErr(fmt.Sprintf("tags[%d]", i), "must be a string")
		}
		if n := utf8.RuneCountInString(s); n > MaxString {
			return fieldErr(fmt.Sprintf("tags[%d]", i), "is %d characters long; at most %d are allowed", n, MaxString)
		}
		out = append(out, s)
	}
	if len(out) > 0 {
		*into = out
	}
	return nil
}
