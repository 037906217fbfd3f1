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

package testenv_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/testenv"
)

func TestPollStopsWhenDone(t *testing.T) {
	n := 0
	last, ok := testenv.Poll(10*time.Second, time.Millisecond, func() (bool, string) {
		n++
		return n == 3, fmt.Sprint(n)
	})
	if !ok || last != "3" || n != 3 {
		t.Fatalf("Poll = %q, %v after %d calls, want \"3\", true after 3", last, ok, n)
	}
}

func TestPollGivesUpWithTheLastState(t *testing.T) {
	n := 0
	last, ok := testenv.Poll(0, time.Millisecond, func() (bool, string) {
		n++
		return false, fmt.Sprint(n)
	})
	if ok || last != "1" || n != 1 {
		t.Fatalf("Poll = %q, %v after %d calls, want \"1\", false after 1", last, ok, n)
	}
}

// fatalRecorder records Fatalf instead of stopping the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) { r.msg = fmt.Sprintf(format, args...) }

func TestEventuallyReportEndsWithTheLastState(t *testing.T) {
	r := &fatalRecorder{TB: t}
	testenv.EventuallyReport(r, 30*time.Millisecond, "the thing", func() (bool, string) { return false, "still nothing" })
	if want := "timed out after 30ms waiting for the thing: still nothing"; r.msg != want {
		t.Fatalf("message %q, want %q", r.msg, want)
	}
	r.msg = ""
	testenv.EventuallyWithin(r, 30*time.Millisecond, "the thing", func() bool { return false })
	if want := "timed out after 30ms waiting for the thing"; r.msg != want {
		t.Fatalf("message %q, want %q", r.msg, want)
	}
	r.msg = ""
	testenv.EventuallyWithin(r, 30*time.Millisecond, "the thing", func() bool { return true })
	if r.msg != "" {
		t.Fatalf("failed a condition that held: %q", r.msg)
	}
}
