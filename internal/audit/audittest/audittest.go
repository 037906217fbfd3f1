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

// Package audittest captures the audit record in tests. The record is the
// process's (every controller and route of a suite writes to it), so a
// test reads the facts about the objects of its own namespace.
package audittest

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"

	"github.com/switchboard-dev/switchboard/internal/audit"
)

// Facts are the audit lines recorded while a capture runs, as JSON
// objects: the logger's own keys (logger, level, msg) and the fact's.
type Facts struct {
	mu    sync.Mutex
	lines []map[string]any
	raw   []string
}

// Capture records every fact from now until t ends.
func Capture(t testing.TB) *Facts {
	t.Helper()
	f := &Facts{}
	log := funcr.NewJSON(func(obj string) {
		var m map[string]any
		if err := json.Unmarshal([]byte(obj), &m); err != nil {
			m = map[string]any{"unparsed": obj}
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.lines, f.raw = append(f.lines, m), append(f.raw, obj)
	}, funcr.Options{})
	t.Cleanup(audit.Tap(log))
	return f
}

// Of are the lines of fact about objects in namespace ns.
func (f *Facts) Of(fact audit.FactName, ns string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, l := range f.lines {
		if l["fact"] == string(fact) && l["namespace"] == ns {
			out = append(out, l)
		}
	}
	return out
}

// Text is every line captured, one a line, for a scan for secrets.
func (f *Facts) Text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.raw, "\n")
}

// One is the one line of fact in namespace ns, which must hold exactly the
// keys of the fact's schema, on the audit logger; t fails otherwise.
func (f *Facts) One(t testing.TB, fact audit.FactName, ns string) map[string]any {
	t.Helper()
	lines := f.Of(fact, ns)
	if len(lines) != 1 {
		t.Fatalf("%d %s facts in namespace %s, want exactly 1: %v", len(lines), fact, ns, lines)
	}
	CheckSchema(t, lines[0])
	return lines[0]
}

// CheckSchema fails t unless line is on the audit logger and holds exactly
// the keys of its fact's schema.
func CheckSchema(t testing.TB, line map[string]any) {
	t.Helper()
	if line["logger"] != audit.LoggerName {
		t.Errorf("logger %v, want %q", line["logger"], audit.LoggerName)
	}
	want := audit.Keys(audit.FactName(asString(line["fact"])))
	var got []string
	for k := range line {
		if k != "logger" && k != "level" && k != "msg" {
			got = append(got, k)
		}
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
}

// Want fails t unless line holds each key of want with its value.
func Want(t testing.TB, line map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s = %#v, want %#v (line %v)", k, line[k], v, line)
		}
	}
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}
