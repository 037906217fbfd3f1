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
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Recurrence rules of the Calendar emulator's recurring events.

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
