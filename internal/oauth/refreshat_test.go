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
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
)

// margins of each OAuth kind, as grant.Phases computes them: refreshBefore
// and, for the kinds that ask, its lead (grant.RefreshLead).
func withLead(d time.Duration) time.Duration { return d + grant.RefreshLead(d) }

// Issue 35 §1: a token whose life is no longer than its margin used to be
// due the moment it was issued, so every wake of its object refreshed it
// again. On a fake clock, a grant whose object wakes every few seconds
// (the storm's pace) is refreshed a bounded number of times an hour, and
// always before its token expires, for Google tokens of 1 minute, 6
// minutes and 1 hour and Notion's assumed 7 days, with each kind's
// default margin and with refreshBefore at its maximum.
func TestAShortLivedTokenIsRefreshedAtMostTwiceItsLife(t *testing.T) {
	const week = 7 * 24 * time.Hour
	margins := map[string]time.Duration{
		"SheetConnection default (5m)": withLead(5 * time.Minute), "SheetConnection max (1h)": withLead(time.Hour),
		"CalendarWatch default (5m)": 5 * time.Minute, "CalendarWatch max (1h)": time.Hour,
		"NotionIntegration default (24h)": withLead(24 * time.Hour), "NotionIntegration max (167h59m)": withLead(week - time.Minute),
	}
	defer func(l time.Duration) { google.AccessTokenLifetime = l }(google.AccessTokenLifetime)
	for _, life := range []time.Duration{time.Minute, 6 * time.Minute, time.Hour, week} {
		for name, margin := range margins {
			t.Run(fmt.Sprintf("%s token, %s", life, name), func(t *testing.T) {
				google.AccessTokenLifetime = life
				// A week is watched in 10-minute wakes, shorter lives in
				// wakes of a twelfth of their life (at most 2 s).
				span, wake := time.Hour, min(life/12, 2*time.Second)
				if life == week {
					span, wake = 2*week, 10*time.Minute
				}
				refreshes, lateBy := stormOf(t, margin, span, wake)
				perHour := float64(refreshes) / span.Hours()
				// At most one refresh per half life (and per
				// MinRefreshInterval), plus the first.
				bound := span.Hours()/max(life/2, oauth.MinRefreshInterval).Hours() + 1
				if float64(refreshes) > bound || lateBy > 0 {
					t.Fatalf("%d refreshes in %s (%.1f an hour, bound %.0f), the latest %s after its token expired", refreshes, span, perHour, bound, lateBy)
				}
				t.Logf("%.1f refreshes an hour", perHour)
			})
		}
	}
}

// stormOf wakes one Google grant every wake for span on a fake clock, as
// a reconcile would, and counts the refreshes; lateBy is how long past its
// token's expiry the latest refresh came. A wake asks Engine.Due of the
// grant it holds, as Ensure does of the one it reads, and calls Ensure,
// which refreshes through the sandbox and stores the pair, when it is due:
// the API server is asked only for refreshes, so an hour of wakes every
// few seconds stays quick.
func stormOf(t *testing.T, margin, span, wake time.Duration) (refreshes int, lateBy time.Duration) {
	t.Helper()
	rt := google.IssueRefreshToken("google-client", "https://www.googleapis.com/auth/spreadsheets")
	f := newFixture(t, "google-client", "google-secret", oauth.Token{RefreshToken: rt})
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	f.engine.Clock = clk
	end := clk.Now().Add(span)
	var held oauth.Token
	for ; clk.Now().Before(end); clk.Step(wake) {
		if held.AccessToken != "" && !f.engine.Due(held, margin) {
			continue
		}
		tok, err := f.engine.Ensure(context.Background(), oauth.Google, f.clientKey, f.tokenKey, margin, false)
		if err != nil {
			t.Fatal(err)
		}
		if !tok.Refreshed {
			t.Fatalf("due at %s, yet Ensure did not refresh", clk.Now())
		}
		refreshes++
		if !held.Expiry.IsZero() && clk.Now().After(held.Expiry) {
			lateBy = max(lateBy, clk.Now().Sub(held.Expiry))
		}
		held = tok
	}
	if stored := f.stored(t); !stored.Issued.Equal(held.Issued) || stored.Issued.IsZero() {
		t.Fatalf("the Secret keeps issued_at %s, want %s", stored.Issued, held.Issued)
	}
	return refreshes, lateBy
}

// RefreshAt over lifetimes and margins: never after the token expires;
// never before half its life, nor within MinRefreshInterval of its issue
// (unless it expires first); and, where the margin leaves more than half
// the life and the floor, exactly margin before the expiry, as before.
func TestRefreshAtOverLifetimesAndMargins(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 1))
	issued := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for range 20000 {
		life := time.Duration(rng.Int64N(int64(30*24*time.Hour))) + time.Second
		margin := time.Duration(rng.Int64N(int64(2*life))) + 1
		tok := oauth.Token{Issued: issued, Expiry: issued.Add(life)}
		at := oauth.RefreshAt(tok, margin)
		least := min(max(life/2, oauth.MinRefreshInterval), life)
		switch {
		case at.After(tok.Expiry):
			t.Fatalf("life %s, margin %s: refresh at %s, after the expiry", life, margin, at.Sub(issued))
		case at.Before(issued.Add(least)):
			t.Fatalf("life %s, margin %s: refresh %s after the issue, before %s", life, margin, at.Sub(issued), least)
		case margin <= life/2 && life-margin >= oauth.MinRefreshInterval && !at.Equal(tok.Expiry.Add(-margin)):
			t.Fatalf("life %s, margin %s: refresh at %s, want margin before the expiry", life, margin, at.Sub(issued))
		}
	}
	// A token stored before its issue was kept falls due by its margin.
	old := oauth.Token{Expiry: issued.Add(time.Hour)}
	if at := oauth.RefreshAt(old, 2*time.Hour); !at.Equal(issued.Add(-time.Hour)) {
		t.Fatalf("a token without its issue: refresh at %s", at)
	}
}
