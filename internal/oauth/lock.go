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

package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/capability"
)

// The refresh lock is the Kubernetes form of seed 003's lock:sess:{sid}
// (a Redis key set for 5 seconds around a session's token refresh): an
// annotation on the token Secret, taken by an update that carries the
// resourceVersion read, so of several writers — webhook replicas, or a
// webhook and the manager — exactly one takes it. The others do not call
// the provider; they read the Secret again until the holder's new pair is
// there, or until the lock lapses (the holder died), and then take it
// themselves. Within one process Ensure's singleflight already makes one
// call; the lock makes it one across processes, which a provider that
// rotates refresh tokens (Discord, Notion) needs: a second refresh with the
// old refresh token is invalid_grant, and would look like a revoked grant.

// RefreshLockAnnotation, on a token Secret, holds "<holder> <until>" while
// one writer refreshes the grant (until is RFC 3339 with nanoseconds).
const RefreshLockAnnotation = "switchboard.dev/refresh-lock"

// DefaultLockTTL is how long a refresh lock holds: seed 003's 5 seconds,
// far longer than a token call under the outbound timeout's usual answer.
const DefaultLockTTL = 5 * time.Second

// lockPoll is how often a writer waiting for another's refresh reads the
// Secret again (jittered ±50%, so waiters do not read in step).
const lockPoll = 100 * time.Millisecond

type refreshLock struct {
	holder string
	until  time.Time
}

func (l refreshLock) String() string {
	return l.holder + " " + l.until.UTC().Format(time.RFC3339Nano)
}

func parseLock(v string) (refreshLock, bool) {
	holder, until, ok := strings.Cut(v, " ")
	if !ok || holder == "" {
		return refreshLock{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, until)
	if err != nil {
		return refreshLock{}, false
	}
	return refreshLock{holder: holder, until: t}, true
}

func (e *Engine) lockTTL() time.Duration {
	if e.LockTTL > 0 {
		return e.LockTTL
	}
	return DefaultLockTTL
}

// newHolder names one refresh: the process (a pod's name is its hostname)
// and a random part, so two refreshes never mistake each other's lock.
func (e *Engine) newHolder() string {
	id := e.Identity
	if id == "" {
		id, _ = os.Hostname()
	}
	id = strings.Map(func(r rune) rune {
		if r == ' ' {
			return '_'
		}
		return r
	}, id)
	if id == "" {
		id = "engine"
	}
	return id + "/" + capability.Random(6)
}

// acquire takes the refresh lock for holder on the Secret read as st. It
// returns the Secret as locked, or, when another writer held the lock and
// finished meanwhile, that writer's grant (fresh) without locking.
func (e *Engine) acquire(ctx context.Context, tokenKey types.NamespacedName, st stored, holder string, margin time.Duration, force bool) (locked stored, fresh *Token, err error) {
	first := st.Token
	// A lapse is judged by the lock's own until and, as client-go's leader
	// election does, by how long this writer has itself seen the same lock:
	// a holder whose clock runs ahead cannot keep others waiting past the TTL.
	var seen string
	var seenAt time.Time
	for {
		if raw := st.annotations[RefreshLockAnnotation]; raw != "" {
			if raw != seen {
				seen, seenAt = raw, time.Now()
			}
			if l, ok := parseLock(raw); ok && l.holder != holder && e.now().Before(l.until) && time.Since(seenAt) < e.lockTTL() {
				if e.onLockWait != nil {
					e.onLockWait()
				}
				if err := sleepCtx(ctx, lockPoll/2+rand.N(lockPoll)); err != nil { //nolint:gosec // jitter, not a secret
					return stored{}, nil, fmt.Errorf("wait for the refresh of the grant in Secret %s: %w", tokenKey, err)
				}
				if st, fresh, err = e.reread(ctx, tokenKey, first, margin, force); err != nil || fresh != nil {
					return stored{}, fresh, err
				}
				continue
			}
		}
		lock := refreshLock{holder: holder, until: e.now().Add(e.lockTTL())}.String()
		sec, err := e.patchAnnotations(ctx, tokenKey, st.resourceVersion, map[string]*string{RefreshLockAnnotation: &lock})
		switch {
		case err == nil:
			return storedFrom(sec), nil, nil
		case !apierrors.IsConflict(err) && !apierrors.IsNotFound(err):
			return stored{}, nil, fmt.Errorf("lock the grant in Secret %s for a refresh: %w", tokenKey, err)
		}
		// Someone wrote first: the lock's holder, a new grant, or an
		// unrelated key (a session's last_seen_at). Look again.
		if st, fresh, err = e.reread(ctx, tokenKey, first, margin, force); err != nil || fresh != nil {
			return stored{}, fresh, err
		}
	}
}

// reread loads the Secret again; fresh is the grant when another writer
// has replaced the pair first read (or, without force, made it not due).
func (e *Engine) reread(ctx context.Context, tokenKey types.NamespacedName, first Token, margin time.Duration, force bool) (stored, *Token, error) {
	cur, err := e.Store.load(ctx, tokenKey)
	if err != nil {
		return stored{}, nil, err
	}
	if !cur.exists || cur.RefreshToken == "" {
		return stored{}, nil, fmt.Errorf("grant in Secret %s is gone: %w", tokenKey, ErrReauthRequired)
	}
	replaced := cur.AccessToken != first.AccessToken || cur.RefreshToken != first.RefreshToken
	if cur.AccessToken != "" && (replaced || !force && !e.Due(cur.Token, margin)) {
		return cur, &cur.Token, nil
	}
	return cur, nil, nil
}

// release drops holder's lock after a refresh that wrote no new pair (a
// failed call), so that waiters need not sit out the TTL. It is best
// effort: a lock left behind lapses by itself.
func (e *Engine) release(ctx context.Context, tokenKey types.NamespacedName, st stored, holder string) {
	for range 3 {
		if l, ok := parseLock(st.annotations[RefreshLockAnnotation]); !ok || l.holder != holder {
			return
		}
		_, err := e.patchAnnotations(ctx, tokenKey, st.resourceVersion, map[string]*string{RefreshLockAnnotation: nil})
		if !apierrors.IsConflict(err) {
			return
		}
		if st, err = e.Store.load(ctx, tokenKey); err != nil || !st.exists {
			return
		}
	}
}

// withoutLock is a Secret's annotations without the refresh lock, for the
// write that stores the new pair and frees the lock in one update.
func withoutLock(annotations map[string]string) map[string]string {
	if _, ok := annotations[RefreshLockAnnotation]; !ok {
		return annotations
	}
	out := maps.Clone(annotations)
	delete(out, RefreshLockAnnotation)
	return out
}

// patchAnnotations sets (or, for nil, removes) annotations by a JSON merge
// patch that carries resourceVersion, so the API server refuses it with a
// Conflict when the Secret changed since it was read. Only metadata is
// sent: the grant is never rewritten by a lock.
func (e *Engine) patchAnnotations(ctx context.Context, key types.NamespacedName, resourceVersion string, set map[string]*string) (*corev1.Secret, error) {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": resourceVersion, "annotations": set}})
	if err != nil {
		return nil, err
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := e.Store.Writer.Patch(ctx, sec, client.RawPatch(types.MergePatchType, body)); err != nil {
		return nil, err
	}
	return sec, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// GrantChanged is the predicate of a watch on token Secrets: it wakes the
// objects that use a token Secret when their grant changed (a new grant
// stored, a grant removed, a key a person edited), and for nothing else.
//
//   - An update that only took or freed the refresh lock changed no grant.
//     Without this a reconcile that forced a refresh (a requested-at) is
//     woken by its own lock before its acknowledgement reaches the cache,
//     forces another refresh, and so on: test/notion measured 552 token
//     calls where 24 were due.
//   - A refresh changed no grant either (GrantDigest): the reconcile that
//     refreshed it already recorded the new expiry, and woken again it
//     would do its work a second time. The bench's 10,000 grants due
//     together (hack/bench -suite tokens) measured two reconciles per
//     refresh, one of them this echo.
//
// It reads the Secrets' data, or the digest a cache that dropped it kept
// (DropSecretData).
func GrantChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		a, okA := e.ObjectOld.(*corev1.Secret)
		b, okB := e.ObjectNew.(*corev1.Secret)
		if !okA || !okB {
			return true
		}
		return grantDigestOf(a) != grantDigestOf(b) || !maps.Equal(a.Labels, b.Labels) ||
			!maps.Equal(withoutLock(a.Annotations), withoutLock(b.Annotations))
	}}
}
