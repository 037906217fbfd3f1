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
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

func states(t *testing.T, clk *clocktesting.FakeClock) *oauth.States {
	t.Helper()
	ns, err := env.Namespace("states")
	if err != nil {
		t.Fatal(err)
	}
	return &oauth.States{Reader: env.Client, Writer: env.Client, Namespace: ns, Clock: clk}
}

func countStates(t *testing.T, ns string) int {
	t.Helper()
	var list corev1.SecretList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns), client.HasLabels{oauth.StateLabel}); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

func TestAStateIsConsumedOnceAndExpires(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Now())
	s := states(t, clk)
	want := oauth.State{Target: "notion", Namespace: "lab", Name: "research", Verifier: "v", ConnectTokenHash: "c0ffee", ResourceUID: "r-uid", ClaimDigest: "d1g35t"}
	state, err := s.Create(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Consume(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	want.Expires = clk.Now().Add(oauth.StateTTL).Truncate(time.Second)
	if !got.Expires.Equal(want.Expires) {
		t.Fatalf("expires %s, want %s", got.Expires, want.Expires)
	}
	got.Expires = want.Expires
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if _, err := s.Consume(ctx, state); !errors.Is(err, oauth.ErrStateInvalid) {
		t.Fatalf("second use: %v", err)
	}
	if _, err := s.Consume(ctx, "forged"); !errors.Is(err, oauth.ErrStateInvalid) {
		t.Fatalf("forged: %v", err)
	}

	late, err := s.Create(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	clk.Step(oauth.StateTTL)
	if _, err := s.Consume(ctx, late); !errors.Is(err, oauth.ErrStateInvalid) {
		t.Fatalf("expired: %v", err)
	}
	if n := countStates(t, s.Namespace); n != 0 {
		t.Fatalf("%d states left; an expired one is deleted when tried", n)
	}
}

func TestAtMostThreeStatesPerResource(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Now())
	s := states(t, clk)
	var made []string
	for range 5 {
		st, err := s.Create(ctx, oauth.State{Target: "notion", Namespace: "lab", Name: "research"})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, st)
		clk.Step(time.Millisecond)
	}
	other, err := s.Create(ctx, oauth.State{Target: "notion", Namespace: "lab", Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if n := countStates(t, s.Namespace); n != oauth.MaxStatesPerResource+1 {
		t.Fatalf("%d states, want %d for the resource and 1 for another", n, oauth.MaxStatesPerResource)
	}
	// The oldest went; the newest three work.
	for i, st := range made {
		_, err := s.Consume(ctx, st)
		if wantOK := i >= len(made)-oauth.MaxStatesPerResource; (err == nil) != wantOK {
			t.Errorf("state %d: %v", i, err)
		}
	}
	// DeleteFor drops a resource's states and no other's.
	if _, err := s.Create(ctx, oauth.State{Target: "notion", Namespace: "lab", Name: "research"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteFor(ctx, "lab", "research"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(ctx, other); err != nil {
		t.Fatalf("another resource's state was dropped: %v", err)
	}
	if n := countStates(t, s.Namespace); n != 0 {
		t.Fatalf("%d states left", n)
	}
}

func TestTheCollectorDeletesStatesOlderThanTenMinutes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktesting.NewFakeClock(time.Now())
	s := states(t, clk)
	for _, name := range []string{"a", "b"} {
		if _, err := s.Create(ctx, oauth.State{Target: "notion", Namespace: "lab", Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	bystander := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Namespace: s.Namespace}}
	if err := env.Client.Create(ctx, bystander); err != nil {
		t.Fatal(err)
	}
	c := oauth.NewStateCollector(env.Client, s.Namespace)
	c.Clock = clk
	if !c.NeedLeaderElection() {
		t.Fatal("the collector must run on the leader only")
	}

	// Younger than ten minutes: kept.
	clk.Step(9 * time.Minute)
	if n, err := c.Collect(ctx); err != nil || n != 0 {
		t.Fatalf("deleted %d young states (%v)", n, err)
	}

	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	// The first pass runs at start; then the collector waits on its ticker.
	testenv.EventuallyWithin(t, 10*time.Second, "the collector to wait on its ticker", clk.HasWaiters)
	if n := countStates(t, s.Namespace); n != 2 {
		t.Fatalf("%d states after the first pass, want 2", n)
	}
	clk.Step(2 * time.Minute) // eleven minutes old: the next tick deletes them
	testenv.EventuallyWithin(t, 10*time.Second, "the expired states to be collected", func() bool {
		return countStates(t, s.Namespace) == 0
	})
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: "unrelated"}, &corev1.Secret{}); err != nil {
		t.Fatalf("the collector touched another Secret: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
