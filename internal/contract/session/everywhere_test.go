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

package session_test

import (
	"context"
	"errors"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/contract/session"
)

// failingDeletes refuses the failAt-th delete it is asked for (1-based)
// and passes the others on.
type failingDeletes struct {
	client.Client
	failAt, calls int32
}

var errDeleteRefused = errors.New("the API server refused the delete")

func (w *failingDeletes) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if atomic.AddInt32(&w.calls, 1) == w.failAt {
		return errDeleteRefused
	}
	return w.Client.Delete(ctx, obj, opts...)
}

// Sign out everywhere (seed 003 deleteAllSessions): every session of the
// user goes, the caller's own last, so a delete that fails part way leaves
// the caller signed in to retry; another user's sessions stay.
func TestDeleteAllEndsEveryOneOfTheUsersSessionsItsOwnLast(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Now())
	s := newStore(t, clk)
	theirs, sids := signIns(t, s, clk, 4)
	// The API server lists Secrets by name: the caller's own session is
	// the one listed first, so deleting in list order would delete it
	// first.
	sort.Slice(sids, func(i, j int) bool { return session.SecretName(sids[i]) < session.SecretName(sids[j]) })
	own := sids[0]
	sess, err := s.Get(ctx, own)
	if err != nil {
		t.Fatal(err)
	}

	failing := *s
	failing.Writer = &failingDeletes{Client: env.Client, failAt: 2}
	gone, err := failing.DeleteAll(ctx, sess)
	if !errors.Is(err, errDeleteRefused) || gone != 1 {
		t.Fatalf("DeleteAll with its second delete refused: %d gone, %v", gone, err)
	}
	if _, err := s.Get(ctx, own); err != nil {
		t.Fatalf("the caller's own session after a failed DeleteAll: %v, want it still standing", err)
	}

	gone, err = s.DeleteAll(ctx, sess)
	if err != nil || gone != 3 {
		t.Fatalf("DeleteAll retried: %d gone, %v; want the 3 left", gone, err)
	}
	for i, sid := range sids {
		if _, err := s.Get(ctx, sid); !errors.Is(err, session.ErrNoSession) {
			t.Fatalf("session %d after DeleteAll: %v, want ErrNoSession", i, err)
		}
	}
	if _, err := s.Get(ctx, theirs); err != nil {
		t.Fatalf("another user's session: %v", err)
	}
	if gone, err := s.DeleteAll(ctx, sess); err != nil || gone != 0 {
		t.Fatalf("DeleteAll once more: %d gone, %v; want nothing to do", gone, err)
	}
	if _, err := s.DeleteAll(ctx, session.Session{}); err == nil {
		t.Fatal("DeleteAll of a session without a Discord user id succeeded")
	}
}

// signIns signs another user in once, then nelly n times a second apart,
// and returns the other's session and nelly's, oldest first.
func signIns(t *testing.T, s *session.Store, clk *clocktesting.FakeClock, n int) (theirs string, sids []string) {
	t.Helper()
	ctx := context.Background()
	other := session.User{ID: "41771983423143937", Username: "other"}
	theirs, err := s.Create(ctx, other, grant(other, clk.Now().Add(7*24*time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		clk.Step(time.Second)
		sid, err := s.Create(ctx, nelly, grant(nelly, clk.Now().Add(7*24*time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		sids = append(sids, sid)
	}
	return theirs, sids
}
