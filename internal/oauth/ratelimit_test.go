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

package oauth_test

import (
	"net/http"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/upstream"
)

func TestRateLimitsAreRememberedPerBucketUntilTheyReset(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	l := &oauth.RateLimits{Clock: clk}
	u := upstream.Discord
	// A route's 2xx names its bucket; another route shares it.
	l.Observe(u, "/a", 200, http.Header{"X-Ratelimit-Bucket": {"shared"}}, nil)
	l.Observe(u, "/b", 200, http.Header{"X-Ratelimit-Bucket": {"shared"}}, nil)
	if w := l.Observe(u, "/a", 429, http.Header{"X-Ratelimit-Bucket": {"shared"}, "Retry-After": {"65"}},
		[]byte(`{"message":"You are being rate limited.","retry_after":64.57,"global":false}`)); w != 64570*time.Millisecond {
		t.Fatalf("429 wait %s, want retry_after 64.57s", w)
	}
	if l.Wait(u, "/b") != 64570*time.Millisecond || l.Wait(u, "/c") != 0 {
		t.Fatalf("shared bucket /b waits %s, unrelated /c %s", l.Wait(u, "/b"), l.Wait(u, "/c"))
	}
	clk.Step(64570 * time.Millisecond)
	if l.Wait(u, "/a") != 0 {
		t.Fatal("the limit outlived its reset")
	}
	// A global limit holds every route; an exhausted bucket holds its own.
	l.Observe(u, "/c", 429, http.Header{"X-Ratelimit-Global": {"true"}}, []byte(`{"retry_after":2.5,"global":true}`))
	if l.Wait(u, "/a") != 2500*time.Millisecond || l.Wait(upstream.Notion, "/a") != 0 {
		t.Fatal("a global limit did not hold the upstream's routes, or held another upstream")
	}
	clk.Step(3 * time.Second)
	l.Observe(u, "/d", 200, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset-After": {"1.2"}}, nil)
	if l.Wait(u, "/d") != 1200*time.Millisecond {
		t.Fatalf("an exhausted bucket waits %s, want 1.2s", l.Wait(u, "/d"))
	}
	// A 429 that says nothing still waits a second.
	if w := l.Observe(u, "/e", 429, http.Header{}, []byte("error code: 1015")); w != time.Second {
		t.Fatalf("a bare 429 waits %s", w)
	}
}
