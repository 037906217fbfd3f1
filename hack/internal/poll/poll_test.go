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

package poll

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestUntilDone(t *testing.T) {
	calls := 0
	err := Until(context.Background(), "thing", time.Millisecond, time.Second, func() (bool, error) {
		calls++
		return calls == 3, errors.New("not yet")
	})
	if err != nil || calls != 3 {
		t.Fatalf("Until = %v after %d calls, want nil after 3", err, calls)
	}
}

func TestUntilTimeoutNamesTheLastReason(t *testing.T) {
	n := 0
	err := Until(context.Background(), "thing", time.Millisecond, 20*time.Millisecond, func() (bool, error) {
		n++
		if n == 1 {
			return false, errors.New("first")
		}
		return false, nil
	})
	var to *Timeout
	if !errors.As(err, &to) || to.Last == nil || to.Last.Error() != "first" {
		t.Fatalf("Until = %v, want a *Timeout naming the last reason", err)
	}
	if !strings.HasPrefix(err.Error(), "thing: timed out after 20ms: first") {
		t.Fatalf("message %q", err)
	}
}

func TestUntilStopsAtOnce(t *testing.T) {
	sentinel := errors.New("gone")
	calls := 0
	err := Until(context.Background(), "", time.Millisecond, time.Minute, func() (bool, error) {
		calls++
		return false, Stop(sentinel)
	})
	if calls != 1 || !errors.Is(err, sentinel) || !Stopped(err) || err.Error() != "gone" {
		t.Fatalf("Until = %v after %d calls, want the stop error after 1", err, calls)
	}
	if Stop(nil) != nil {
		t.Fatal("Stop(nil) is not nil")
	}
}

func TestUntilEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Until(ctx, "thing", time.Hour, time.Hour, func() (bool, error) { return false, nil })
	if !errors.Is(err, context.Canceled) || err.Error() != "thing: context canceled" {
		t.Fatalf("Until = %v, want thing: context canceled", err)
	}
}
