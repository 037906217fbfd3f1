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

package calendar_test

import (
	"net/http"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// Seed 002's properties about the webhook, on the real push route (the
// webhook server in front of the real API server), at least 100 cases
// each.

// Property 1: For any valid webhook notification from Google Calendar, the
// system should detect and process the calendar changes.
func TestProperty1WebhookNotificationProcessing(t *testing.T) {
	f := newFixture(t, nil)
	w := f.ready(t)
	tok, ch := f.channelToken(t), w.Status.Channel.ID
	next := int64(1 << 20)
	rapid.Check(t, func(rt *rapid.T) {
		next += rapid.Int64Range(1, 1000).Draw(rt, "step")
		state := rapid.SampledFrom([]string{"exists", "not_exists"}).Draw(rt, "state")
		if got := push(t, pushHeaders(ch, tok, state, next)); got != http.StatusOK {
			rt.Fatalf("push answered %d", got)
		}
		want := ch + "/" + itoa(next) + "/" + state
		if got := f.watch(t).Annotations[v1alpha1.CalendarNotificationAnnotation]; got != want {
			rt.Fatalf("recorded %q, want %q", got, want)
		}
	})
	eventually(t, "the last notification handled by a sync", func() bool {
		n := f.watch(t).Status.LastNotification
		return n != nil && n.MessageNumber == next
	})
}

// Property 10: For any incoming webhook notification, the system should
// verify the notification signature before processing.
func TestProperty10SignatureVerifiedBeforeProcessing(t *testing.T) {
	f := newFixture(t, nil)
	w := f.ready(t)
	tok, ch := f.channelToken(t), w.Status.Channel.ID
	next := int64(1 << 20)
	rapid.Check(t, func(rt *rapid.T) {
		next++
		presented := rapid.OneOf(rapid.Just(tok), rapid.String(), rapid.Just(tok[:len(tok)-1]), rapid.Just(tok+"A")).Draw(rt, "token")
		presented = strings.Map(func(r rune) rune {
			if r < 0x20 || r > 0x7e {
				return 'x'
			}
			return r
		}, presented)
		before := f.watch(t).Annotations[v1alpha1.CalendarNotificationAnnotation]
		got := push(t, pushHeaders(ch, presented, "exists", next))
		switch {
		case presented == tok && got != http.StatusOK:
			rt.Fatalf("the right token answered %d", got)
		case presented != tok && got != http.StatusUnauthorized:
			rt.Fatalf("a wrong token %q answered %d", presented, got)
		case presented != tok && f.watch(t).Annotations[v1alpha1.CalendarNotificationAnnotation] != before:
			rt.Fatal("a notification with a wrong token changed the watch")
		}
	})
}

// Property 11: For any webhook notification with an invalid signature,
// the system should reject it and log the attempt without processing the
// changes.
func TestProperty11InvalidSignatureRejectedAndLogged(t *testing.T) {
	f := newFixture(t, nil)
	w := f.ready(t)
	tok, ch := f.channelToken(t), w.Status.Channel.ID
	rapid.Check(t, func(rt *rapid.T) {
		wrong := rapid.StringMatching(`[A-Za-z0-9_-]{16,80}`).Draw(rt, "wrong token")
		if wrong == tok {
			return
		}
		logged := strings.Count(hookLog.String(), "wrong or missing channel token")
		before := f.watch(t).Annotations[v1alpha1.CalendarNotificationAnnotation]
		if got := push(t, pushHeaders(ch, wrong, "exists", 1<<30)); got != http.StatusUnauthorized {
			rt.Fatalf("answered %d", got)
		}
		if f.watch(t).Annotations[v1alpha1.CalendarNotificationAnnotation] != before {
			rt.Fatal("processed")
		}
		log := hookLog.String()
		if strings.Count(log, "wrong or missing channel token") != logged+1 || !strings.Contains(log, `"source"="127.0.0.1"`) {
			rt.Fatalf("the refusal was not logged with its source address:\n%s", log)
		}
		if strings.Contains(log, wrong) || strings.Contains(log, tok) {
			rt.Fatal("a token is in the log")
		}
	})
}

// Property 12: For any webhook notification, processing it multiple times
// should have the same effect as processing it once (idempotency).
//
// Each delivery goes to the webhook server or to a second one whose cache
// is frozen at the start of the case: a cache that lags behind the
// records made meanwhile, at its worst and on purpose, so the outcome does
// not depend on how fast the informer is (it used to: on a loaded machine
// the cache had not seen a higher number yet, and a lower one overwrote
// it).
func TestProperty12IdempotentNotificationProcessing(t *testing.T) {
	f := newFixture(t, nil)
	w := f.ready(t)
	tok, ch := f.channelToken(t), w.Status.Channel.ID
	lag := newLaggingWebhook(t)
	base := int64(1 << 25)
	rapid.Check(t, func(rt *rapid.T) {
		base += 1 << 10
		lag.freeze(f.watch(t))
		nums := rapid.SliceOfN(rapid.Int64Range(1, 500), 1, 8).Draw(rt, "message numbers")
		times := rapid.IntRange(2, 4).Draw(rt, "deliveries of each")
		var highest int64
		for _, n := range nums {
			for range times {
				send := push
				if rapid.Bool().Draw(rt, "through the lagging cache") {
					send = lag.push
				}
				if got := send(t, pushHeaders(ch, tok, "exists", base+n)); got != http.StatusOK {
					rt.Fatalf("push answered %d", got)
				}
			}
			highest = max(highest, base+n)
			// However often and in whatever order: the record is the
			// highest number seen, as if each had come once in order.
			if got := f.watch(t).Annotations[v1alpha1.CalendarNotificationAnnotation]; got != ch+"/"+itoa(highest)+"/exists" {
				rt.Fatalf("recorded %q after %d (highest %d)", got, base+n, highest)
			}
		}
	})
}
