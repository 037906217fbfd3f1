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

package slidestock

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/oembed"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
	"github.com/switchboard-dev/switchboard/internal/upstream/slides"
)

// fakeFetcher is a struct-of-functions fake of the oEmbed client.
type fakeFetcher struct {
	fetch func(slides.Ref) (oembed.Metadata, error)
	calls int
}

func (f *fakeFetcher) Fetch(_ context.Context, ref slides.Ref) (oembed.Metadata, error) {
	f.calls++
	return f.fetch(ref)
}

var (
	unavailable = &outbound.Error{Upstream: "speakerdeck", Class: outbound.Transient, Status: 503, Reason: "HTTP 503"}
	gone        = &outbound.Error{Upstream: "speakerdeck", Class: outbound.Permanent, Status: 404, Reason: "HTTP 404"}
)

// exhausted is a stock whose four attempts failed at t0.
func exhausted(t0 time.Time) *v1alpha1.SlideStock {
	s := &v1alpha1.SlideStock{Spec: v1alpha1.SlideStockSpec{URL: "https://speakerdeck.com/jnunemaker/atom"}}
	s.Status.ObservedURL = s.Spec.URL
	s.Status.Phase = v1alpha1.SlideFailed
	s.Status.Attempts = MaxAttempts
	at := metav1.NewTime(t0)
	s.Status.LastFetchedAt = &at
	status.MarkStalled(s, v1alpha1.RetriesExhaustedReason, "gave up")
	return s
}

func TestAStockWhoseRetriesRanOutIsRecheckedOnTheLongSchedule(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0.Add(30 * time.Minute))
	f := &fakeFetcher{fetch: func(slides.Ref) (oembed.Metadata, error) { return oembed.Metadata{}, unavailable }}
	r := &Reconciler{Fetcher: f, Clock: clk}
	r.Runner() // fills the default schedules
	s := exhausted(t0)
	ctx := context.Background()
	run := func() runner.Outcome {
		rn := &runner.Run{Now: clk.Now()}
		for _, p := range []runner.Phase[*v1alpha1.SlideStock]{r.startOver, r.settled, r.fetch} {
			if out := p(ctx, s, rn); !out.IsContinue() {
				return out
			}
		}
		return runner.Continue()
	}

	if out := run(); !out.IsWait() || out.After() != 30*time.Minute || f.calls != 0 {
		t.Fatalf("30 minutes after giving up: %s after %v with %d fetches, want a wait of 30m and no fetch", out, out.After(), f.calls)
	}
	clk.SetTime(t0.Add(time.Hour))
	out := run()
	if f.calls != 1 || s.Status.Phase != v1alpha1.SlideFailed || !out.IsWait() || out.After() != 2*time.Hour {
		t.Fatalf("first recheck, still failing: %s after %v, %d fetches, phase %s; want one fetch, Failed, next in 2h", out, out.After(), f.calls, s.Status.Phase)
	}
	if c := status.Get(s, v1alpha1.StalledCondition); c == nil || c.Reason != v1alpha1.RetriesExhaustedReason {
		t.Fatalf("stalled condition %+v, want RetriesExhausted", c)
	}
	// The schedule doubles to 24 h and stays there.
	s.Status.Attempts = MaxAttempts + 10
	if d := r.recheckDelay(s); d != 24*time.Hour {
		t.Fatalf("recheck delay after many rechecks %v, want 24h", d)
	}
	s.Status.Attempts = MaxAttempts + 1

	clk.SetTime(t0.Add(3 * time.Hour))
	f.fetch = func(slides.Ref) (oembed.Metadata, error) {
		return oembed.Metadata{Title: "Atom", EmbedURL: "https://speakerdeck.com/player/x"}, nil
	}
	// Every phase continues: the runner marks the stock Ready.
	if out := run(); !out.IsContinue() || s.Status.Phase != v1alpha1.SlideReady || s.Status.EmbedURL == "" {
		t.Fatalf("recheck after recovery: %s, phase %s; want Ready and every phase continued", out, s.Status.Phase)
	}
}

func TestARecheckThatMeetsAPermanentErrorStopsRechecking(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0.Add(time.Hour))
	f := &fakeFetcher{fetch: func(slides.Ref) (oembed.Metadata, error) { return oembed.Metadata{}, gone }}
	r := &Reconciler{Fetcher: f, Clock: clk}
	r.Runner()
	s := exhausted(t0)
	rn := &runner.Run{Now: clk.Now()}
	if out := r.settled(context.Background(), s, rn); !out.IsContinue() {
		t.Fatalf("due recheck: %s", out)
	}
	out := r.fetch(context.Background(), s, rn)
	if !out.IsStall() || out.Reason() != v1alpha1.UpstreamRejectedReason || out.After() != 0 || !errors.Is(out.Err(), gone) {
		t.Fatalf("got %s %s after %v (%v); want a stall, UpstreamRejected, no recheck", out, out.Reason(), out.After(), out.Err())
	}
	clk.SetTime(t0.Add(100 * time.Hour))
	s.Status.Phase = v1alpha1.SlideFailed
	status.MarkStalled(s, v1alpha1.UpstreamRejectedReason, "HTTP 404")
	if out := r.settled(context.Background(), s, &runner.Run{Now: clk.Now()}); !out.IsDone() || f.calls != 1 {
		t.Fatalf("a permanently failed stock: %s with %d fetches, want done and no new fetch", out, f.calls)
	}
}

func TestAURLTheParserRefusesStallsWithoutAFetch(t *testing.T) {
	// Admission and the parser share one grammar now, so only a stock
	// admitted under an older CRD can get here.
	f := &fakeFetcher{fetch: func(slides.Ref) (oembed.Metadata, error) { return oembed.Metadata{}, nil }}
	r := &Reconciler{Fetcher: f, Clock: clocktesting.NewFakePassiveClock(time.Now())}
	r.Runner()
	s := &v1alpha1.SlideStock{Spec: v1alpha1.SlideStockSpec{URL: "https://speakerdeck.com/player/31f86a9069ae0132dede22511952b5a3"}}
	rn := &runner.Run{Now: time.Now()}
	if out := r.startOver(context.Background(), s, rn); !out.IsContinue() {
		t.Fatalf("startOver: %s", out)
	}
	out := r.fetch(context.Background(), s, rn)
	if !out.IsStall() || out.Reason() != v1alpha1.InvalidSpecReason || f.calls != 0 || s.Status.Phase != v1alpha1.SlideFailed {
		t.Fatalf("%s %s, %d fetches, phase %s; want a stall, InvalidSpec, no fetch, Failed", out, out.Reason(), f.calls, s.Status.Phase)
	}
}
