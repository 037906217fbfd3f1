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
	"encoding/json"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// replica is a second process on the same token Secret: its own Engine,
// so its own singleflight group.
func (f *fixture) replica(name string) *oauth.Engine {
	return &oauth.Engine{Store: &oauth.Store{Reader: env.Client, Writer: env.Client}, Out: out, Identity: name}
}

func (f *fixture) annotations(t *testing.T) map[string]string {
	t.Helper()
	var sec corev1.Secret
	if err := env.Client.Get(context.Background(), f.tokenKey, &sec); err != nil {
		t.Fatal(err)
	}
	return sec.Annotations
}

// lockBy writes a refresh lock as a replica that then died would leave it.
func (f *fixture) lockBy(t *testing.T, holder string, until time.Time) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		oauth.RefreshLockAnnotation: holder + " " + until.UTC().Format(time.RFC3339Nano)}}})
	sec := &corev1.Secret{}
	sec.Namespace, sec.Name = f.tokenKey.Namespace, f.tokenKey.Name
	if err := env.Client.Patch(context.Background(), sec, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// Two webhook replicas asked for one rotating grant at once: the one that
// takes the lock calls Notion; the other waits on the Secret and gets the
// same new pair, so the provider sees one refresh and the old refresh
// token is never sent twice (which Notion would answer invalid_grant).
func TestTwoReplicasMakeOneRefreshCall(t *testing.T) {
	box.ResetCalls()
	f, old := notionGrant(t)
	a, b := f.replica("replica-a"), f.replica("replica-b")
	waiting := make(chan struct{})
	var once sync.Once
	b.SetOnLockWait(func() { once.Do(func() { close(waiting) }) })
	var (
		theirs oauth.Token
		errB   error
		done   = make(chan struct{})
	)
	// A holds the lock when its call is about to go out: B starts now, and
	// A's call waits until B is seen waiting on the lock.
	a.SetBeforeCall(func() {
		if l := f.annotations(t)[oauth.RefreshLockAnnotation]; len(l) < len("replica-a/") || l[:len("replica-a/")] != "replica-a/" {
			t.Errorf("lock before the call = %q, want one held by replica-a", l)
		}
		go func() {
			defer close(done)
			theirs, errB = b.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, 24*time.Hour, false)
		}()
		select {
		case <-waiting:
		case <-time.After(10 * time.Second):
			t.Error("replica B never waited on the lock")
		}
	})
	ours, err := a.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, 24*time.Hour, false)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	if errB != nil {
		t.Fatalf("replica B: %v", errB)
	}
	if n := box.Calls(sandbox.NotionOAuthToken); n != 1 {
		t.Fatalf("token endpoint calls = %d, want 1", n)
	}
	if ours.RefreshToken == old || theirs.RefreshToken != ours.RefreshToken || theirs.AccessToken != ours.AccessToken {
		t.Fatal("the replicas do not hold the one new pair")
	}
	if !ours.Refreshed || theirs.Refreshed {
		t.Fatalf("Refreshed = %v for the caller, %v for the waiter", ours.Refreshed, theirs.Refreshed)
	}
	if got := f.stored(t); got.RefreshToken != ours.RefreshToken {
		t.Fatal("the Secret does not hold the new pair")
	}
	if _, held := f.annotations(t)[oauth.RefreshLockAnnotation]; held {
		t.Fatal("the lock outlived the refresh")
	}
}

// A lock whose holder died (it never wrote a new pair) lapses after its
// 5 seconds: the next writer takes it and refreshes.
func TestALapsedLockIsTakenOver(t *testing.T) {
	box.ResetCalls()
	f, old := notionGrant(t)
	clk := clocktesting.NewFakeClock(time.Now())
	f.lockBy(t, "dead-pod/x", clk.Now().Add(oauth.DefaultLockTTL))
	e := f.replica("replica-a")
	e.Clock = clk
	waits := 0
	// Each wait is a poll of the API server; the lock's 5 seconds pass on
	// the fake clock after the first.
	e.SetOnLockWait(func() {
		waits++
		clk.Step(oauth.DefaultLockTTL)
	})
	tok, err := e.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, 24*time.Hour, false)
	if err != nil {
		t.Fatal(err)
	}
	if waits != 1 || tok.RefreshToken == old || box.Calls(sandbox.NotionOAuthToken) != 1 {
		t.Fatalf("waited %d times, rotated %v, %d calls; want 1, true, 1", waits, tok.RefreshToken != old, box.Calls(sandbox.NotionOAuthToken))
	}
	if _, held := f.annotations(t)[oauth.RefreshLockAnnotation]; held {
		t.Fatal("the taken-over lock was not freed")
	}
}

// A holder whose clock runs far ahead writes an until far away; a waiter
// trusts its own observation too, and takes the lock once it has seen the
// same lock for the TTL.
func TestALockIsNotHeldPastTheTTLOfTheWaitersOwnObservation(t *testing.T) {
	box.ResetCalls()
	f, old := notionGrant(t)
	f.lockBy(t, "skewed-pod/x", time.Now().Add(time.Hour))
	e := f.replica("replica-a")
	e.LockTTL = 300 * time.Millisecond
	began := time.Now()
	tok, err := e.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, 24*time.Hour, false)
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(began); waited < e.LockTTL || waited > 10*time.Second || tok.RefreshToken == old {
		t.Fatalf("took over after %s (TTL %s), rotated %v", waited, e.LockTTL, tok.RefreshToken != old)
	}
}

// A refresh that fails frees its lock at once, so another writer need not
// sit out the 5 seconds; the grant is unchanged.
func TestAFailedRefreshFreesTheLock(t *testing.T) {
	defer box.ClearFaults()
	box.ResetCalls()
	f, old := notionGrant(t)
	box.SetFault(sandbox.NotionOAuthToken, sandbox.Fault{Status: 503})
	if _, err := f.replica("replica-a").Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, 24*time.Hour, false); err == nil {
		t.Fatal("a 503 refresh succeeded")
	}
	if l, held := f.annotations(t)[oauth.RefreshLockAnnotation]; held {
		t.Fatalf("lock %q left after the failed refresh", l)
	}
	if f.stored(t).RefreshToken != old {
		t.Fatal("the grant changed")
	}
}

func TestALockAloneIsNotAGrantChange(t *testing.T) {
	old := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"keep": "1"}},
		Data: map[string][]byte{oauth.KeyAccessToken: []byte("at1")}}
	locked := old.DeepCopy()
	locked.Annotations[oauth.RefreshLockAnnotation] = "pod-1/x 2026-11-22T15:00:05Z"
	refreshed := locked.DeepCopy()
	delete(refreshed.Annotations, oauth.RefreshLockAnnotation)
	refreshed.Data[oauth.KeyAccessToken] = []byte("at2")
	relabelled := old.DeepCopy()
	relabelled.Annotations["keep"] = "2"
	p := oauth.GrantChanged()
	for name, c := range map[string]struct {
		a, b *corev1.Secret
		want bool
	}{
		"lock taken":             {old, locked, false},
		"lock freed":             {locked, old, false},
		"new pair, lock freed":   {locked, refreshed, true},
		"another annotation set": {old, relabelled, true},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: c.a, ObjectNew: c.b}); got != c.want {
			t.Errorf("%s: GrantChanged = %v, want %v", name, got, c.want)
		}
	}
}

// A refresh of a grant the callback stored wakes nothing: the reconcile
// that refreshed it recorded the new expiry. A new grant, a grant
// removed, an account or client changed, or any change of a grant stored
// by hand (no granted_at) still wakes the objects that use it.
func TestARefreshIsNotAGrantChange(t *testing.T) {
	grant := func(kv ...string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}}, Data: map[string][]byte{}}
		for i := 0; i < len(kv); i += 2 {
			s.Data[kv[i]] = []byte(kv[i+1])
		}
		return s
	}
	stored := []string{oauth.KeyAccessToken, "at1", oauth.KeyRefreshToken, "rt1", oauth.KeyTokenType, "bearer",
		oauth.KeyExpiry, "2026-11-28T10:00:00Z", oauth.KeyGrantedAt, "2026-11-28T09:00:00Z", oauth.KeySubject, "user-1"}
	with := func(kv ...string) *corev1.Secret {
		s := grant(stored...)
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(s.Data, kv[i])
				continue
			}
			s.Data[kv[i]] = []byte(kv[i+1])
		}
		return s
	}
	before := grant(stored...)
	locked := with()
	locked.Annotations[oauth.RefreshLockAnnotation] = "pod-1/x 2026-11-28T09:55:00Z"
	// Each case is judged on the Secrets as the API server holds them and
	// as the manager's cache holds them (oauth.DropSecretData): no data,
	// the digest as a label.
	cached := func(s *corev1.Secret) *corev1.Secret {
		out, err := oauth.DropSecretData()(s.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		c := out.(*corev1.Secret)
		if c.Data != nil || c.Labels[oauth.GrantDigestLabel] == "" {
			t.Fatalf("cached Secret keeps data %v, digest %q", c.Data, c.Labels[oauth.GrantDigestLabel])
		}
		return c
	}
	p := oauth.GrantChanged()
	for name, c := range map[string]struct {
		a, b *corev1.Secret
		want bool
	}{
		"refreshed":                              {before, with(oauth.KeyAccessToken, "at2", oauth.KeyExpiry, "2026-11-28T11:00:00Z"), false},
		"refreshed, lock freed":                  {locked, with(oauth.KeyAccessToken, "at2", oauth.KeyExpiry, "2026-11-28T11:00:00Z"), false},
		"refreshed, refresh token rotated":       {before, with(oauth.KeyAccessToken, "at2", oauth.KeyRefreshToken, "rt2"), false},
		"a new grant":                            {before, with(oauth.KeyAccessToken, "at2", oauth.KeyGrantedAt, "2026-11-28T09:30:00Z"), true},
		"another account":                        {before, with(oauth.KeyAccessToken, "at2", oauth.KeySubject, "user-2"), true},
		"the refresh token removed":              {before, with(oauth.KeyRefreshToken, ""), true},
		"a refresh token stored where none was":  {with(oauth.KeyRefreshToken, ""), before, true},
		"another client":                         {before, with(oauth.KeyClientID, "other"), true},
		"a grant stored by hand, token replaced": {with(oauth.KeyGrantedAt, ""), with(oauth.KeyGrantedAt, "", oauth.KeyAccessToken, "at2"), true},
		"a key renamed, same bytes":              {with(oauth.KeySubject, ""), with(oauth.KeySubject, "", oauth.KeyScope, "user-1"), true},
		"the same":                               {before, with(), false},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: c.a, ObjectNew: c.b}); got != c.want {
			t.Errorf("%s: GrantChanged = %v, want %v", name, got, c.want)
		}
		if got := p.Update(event.UpdateEvent{ObjectOld: cached(c.a), ObjectNew: cached(c.b)}); got != c.want {
			t.Errorf("%s, as cached without data: GrantChanged = %v, want %v", name, got, c.want)
		}
	}
}
