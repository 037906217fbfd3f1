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

package grant_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

func grantPhases(tokens oauth.TokenSource) *grant.Phases[*v1alpha1.NotionIntegration] {
	return grant.New[*v1alpha1.NotionIntegration](grant.Deps{Tokens: tokens}, oauth.Target{Name: "notion", Provider: oauth.Notion})
}

func notionIntegration() *v1alpha1.NotionIntegration {
	ni := &v1alpha1.NotionIntegration{}
	ni.Spec.TokenRefresh.RefreshBefore.Duration = time.Hour
	return ni
}

func TestTheGrantPhaseTellsAPersonsProblemFromATransientOne(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "client")
	for _, tc := range []struct {
		name          string
		want          func(runner.Outcome) bool
		reason        string
		err           error
		authenticated metav1.ConditionStatus
		recheck       bool
	}{
		{"a refused grant needs a person to connect again", runner.Outcome.IsStall, v1alpha1.ReauthRequiredReason,
			fmt.Errorf("refresh: %w", oauth.ErrReauthRequired), metav1.ConditionFalse, false},
		{"a missing client Secret stalls and rechecks slowly", runner.Outcome.IsStall, v1alpha1.SecretNotFoundReason,
			fmt.Errorf("read OAuth client Secret ns/client: %w", notFound), "", true},
		{"a client Secret without its keys stalls and rechecks slowly", runner.Outcome.IsStall, v1alpha1.SecretNotFoundReason,
			fmt.Errorf("%w: ns/client needs keys", oauth.ErrClientIncomplete), "", true},
		{"an API server that fails to answer is transient", runner.Outcome.IsTransient, v1alpha1.TokenRefreshFailedReason,
			fmt.Errorf("read token Secret ns/token: %w", apierrors.NewServiceUnavailable("etcd is down")), "", false},
		{"a forbidden read is transient, not a missing Secret", runner.Outcome.IsTransient, v1alpha1.TokenRefreshFailedReason,
			fmt.Errorf("read token Secret ns/token: %w", apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "token", errors.New("RBAC"))), "", false},
		{"a token endpoint 503 is transient", runner.Outcome.IsTransient, v1alpha1.TokenRefreshFailedReason,
			&outbound.Error{Upstream: "notion", Class: outbound.Transient, Status: 503, Reason: "HTTP 503"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ni := notionIntegration()
			p := grantPhases(&testenv.FakeTokens{Answer: func(bool) (oauth.Token, error) { return oauth.Token{}, tc.err }})
			run := &runner.Run{Now: time.Now()}
			out := p.Grant(context.Background(), ni, run)
			if !tc.want(out) || out.Reason() != tc.reason || (out.After() > 0) != tc.recheck || grant.Of(run).Token != "" {
				t.Fatalf("got %s %s recheck %v", out, out.Reason(), out.After())
			}
			c := status.Get(ni, v1alpha1.AuthenticatedCondition)
			if tc.authenticated != "" && (c == nil || c.Status != tc.authenticated) {
				t.Fatalf("Authenticated %+v, want %s", c, tc.authenticated)
			}
		})
	}
}

func TestOnlyARefusedGrantRaisesAWarning(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		events int
	}{
		{"refused", fmt.Errorf("refresh: %w", oauth.ErrReauthRequired), 1},
		{"never stored", fmt.Errorf("google grant in Secret ns/token: %w", oauth.ErrNotConnected), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &testenv.Recorder{}
			p := grant.New[*v1alpha1.NotionIntegration](grant.Deps{Recorder: rec, Tokens: &testenv.FakeTokens{Answer: func(bool) (oauth.Token, error) { return oauth.Token{}, tc.err }}},
				oauth.Target{Name: "notion", Provider: oauth.Notion})
			ni := notionIntegration()
			out := p.Grant(context.Background(), ni, &runner.Run{Now: time.Now()})
			if !out.IsStall() || out.Reason() != v1alpha1.ReauthRequiredReason || status.IsTrue(ni, v1alpha1.AuthenticatedCondition) {
				t.Fatalf("got %s %s, want a ReauthRequired stall and not Authenticated", out, out.Reason())
			}
			if got := rec.All(); len(got) != tc.events {
				t.Fatalf("events %q, want %d", got, tc.events)
			}
		})
	}
}

func TestTheGrantPhaseHandsTheTokenOnAndRequeuesAtTheRefreshDeadline(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var forced []bool
	p := grantPhases(&testenv.FakeTokens{Answer: func(force bool) (oauth.Token, error) {
		forced = append(forced, force)
		return oauth.Token{AccessToken: "access", Expiry: now.Add(7 * 24 * time.Hour)}, nil
	}})
	granted := 0
	p.OnGrant(func(*v1alpha1.NotionIntegration, oauth.Token, *runner.Run) { granted++ })
	ni := notionIntegration()
	run := &runner.Run{Now: now, Requested: true}
	if out := p.Grant(context.Background(), ni, run); !out.IsContinue() || grant.Of(run).Token != "access" || granted != 1 {
		t.Fatalf("%s, token handed on %v, granted %d", out, grant.Of(run).Token != "", granted)
	}
	if len(forced) != 1 || !forced[0] {
		t.Fatal("a requested-at annotation did not force the refresh")
	}
	if !status.IsTrue(ni, v1alpha1.AuthenticatedCondition) {
		t.Fatal("not Authenticated")
	}
	if exp := ni.Status.TokenExpiresAt; exp == nil || !exp.Time.Equal(now.Add(7*24*time.Hour)) {
		t.Fatalf("tokenExpiresAt %v, want the grant's expiry", exp)
	}
	if d, ok := run.Next(); !ok || d != 7*24*time.Hour-time.Hour {
		t.Fatalf("next deadline in %v, want 6d23h (expiry less refreshBefore)", d)
	}
}

// Status counts the refreshes that failed since one succeeded, and keeps
// when the last one succeeded, for every OAuth kind: what the per-resource
// metrics and alerts read.
func TestTheGrantPhaseRecordsEachRefreshAndTheFailuresSince(t *testing.T) {
	start := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	answers := []error{nil, outboundDown(), outboundDown(), nil, nil}
	refreshed := []bool{true, false, false, true, false}
	want := []struct {
		failures int32
		last     time.Time
	}{{0, start}, {1, start}, {2, start}, {0, start.Add(3 * time.Minute)}, {0, start.Add(3 * time.Minute)}}
	i := 0
	p := grant.New[*v1alpha1.SheetConnection](grant.Deps{Tokens: &testenv.FakeTokens{Answer: func(bool) (oauth.Token, error) {
		return oauth.Token{AccessToken: "access", Expiry: start.Add(time.Hour), Refreshed: refreshed[i]}, answers[i]
	}}}, oauth.Target{Name: "google-sheets", Provider: oauth.Google})
	sc := &v1alpha1.SheetConnection{}
	sc.Spec.TokenRefreshBefore.Duration = 5 * time.Minute
	for i = range answers {
		out := p.Grant(context.Background(), sc, &runner.Run{Now: start.Add(time.Duration(i) * time.Minute)})
		if (answers[i] == nil) != out.IsContinue() {
			t.Fatalf("attempt %d: %s", i, out)
		}
		ts := sc.Status.TokenStatus
		if ts.TokenRefreshFailures != want[i].failures || ts.LastTokenRefreshAt == nil || !ts.LastTokenRefreshAt.Time.Equal(want[i].last) {
			t.Fatalf("attempt %d: %d failures, last refresh %v; want %d, %v", i, ts.TokenRefreshFailures, ts.LastTokenRefreshAt, want[i].failures, want[i].last)
		}
	}
}

func outboundDown() error {
	return &outbound.Error{Upstream: "googleoauth", Class: outbound.Transient, Status: 503, Reason: "HTTP 503"}
}

// marginTokens is a token source whose grant expires at expiry; it
// records the margin each Ensure was given.
type marginTokens struct {
	expiry  time.Time
	margins []time.Duration
}

func (m *marginTokens) Ensure(_ context.Context, _ oauth.Provider, _, _ types.NamespacedName, margin time.Duration, _ bool) (oauth.Token, error) {
	m.margins = append(m.margins, margin)
	return oauth.Token{AccessToken: "access", Expiry: m.expiry}, nil
}

func TestARefreshLeadIsATwentiethOfRefreshBeforeFromOneToFiveMinutes(t *testing.T) {
	for before, want := range map[time.Duration]time.Duration{
		5 * time.Minute:       time.Minute, // SheetConnection's default
		10 * time.Minute:      time.Minute,
		40 * time.Minute:      2 * time.Minute,
		time.Hour:             3 * time.Minute,
		100 * time.Minute:     5 * time.Minute,
		24 * time.Hour:        5 * time.Minute,  // NotionIntegration's default
		30 * time.Second:      30 * time.Second, // never more than refreshBefore
		time.Second:           time.Second,
		1000 * 24 * time.Hour: 5 * time.Minute,
	} {
		if got := grant.RefreshLead(before); got != want {
			t.Errorf("RefreshLead(%s) = %s, want %s", before, got, want)
		}
	}
}

func TestAKindWithARefreshLeadRefreshesAndRequeuesThatMuchEarlier(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, lead := range []bool{false, true} {
		tokens := &marginTokens{expiry: now.Add(7 * 24 * time.Hour)}
		p := grantPhases(tokens)
		early := time.Duration(0)
		if lead {
			p.WithRefreshLead()
			early = 3 * time.Minute // a twentieth of the hour refreshBefore
		}
		ni := notionIntegration()
		run := &runner.Run{Now: now}
		if out := p.Grant(context.Background(), ni, run); !out.IsContinue() {
			t.Fatalf("lead %v: %s", lead, out)
		}
		// The engine refreshes when less than the margin remains.
		if len(tokens.margins) != 1 || tokens.margins[0] != time.Hour+early {
			t.Fatalf("lead %v: Ensure given margins %v, want [%s]", lead, tokens.margins, time.Hour+early)
		}
		if d, ok := run.Next(); !ok || d != 7*24*time.Hour-time.Hour-early {
			t.Fatalf("lead %v: next deadline in %v, want %s (expiry less refreshBefore less the lead)", lead, d, 7*24*time.Hour-time.Hour-early)
		}
		// Status records the grant's expiry, whatever the lead.
		if exp := ni.Status.TokenExpiresAt; exp == nil || !exp.Time.Equal(tokens.expiry) {
			t.Fatalf("lead %v: tokenExpiresAt %v, want the grant's expiry", lead, exp)
		}
	}
}
