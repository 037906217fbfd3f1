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

package tokens

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// tokenLog records, from the manager's informers, when each object's
// status and token Secret first showed a refreshed grant, and when each
// baseline status patch showed.
type tokenLog struct {
	mu sync.Mutex
	ns string
	// expires is each object's first expiry, as its token Secret said.
	expires map[string]time.Time
	// connected: Ready, with status recording that expiry.
	connected map[string]bool
	// refreshed: when status first recorded a later expiry; rewritten:
	// when the token Secret first held one.
	refreshed, rewritten map[string]time.Time
	// baseWant is the expiry each baseline status patch writes, baseSeen
	// when it showed.
	baseWant, baseSeen map[string]time.Time
}

// followTokens registers the log's handlers on the manager's informers of
// the kind and of Secrets; stop removes them.
func followTokens(ctx context.Context, k *tokenKind) (*tokenLog, func(), error) {
	l := &tokenLog{ns: k.ns, expires: map[string]time.Time{}, connected: map[string]bool{}, refreshed: map[string]time.Time{},
		rewritten: map[string]time.Time{}, baseWant: map[string]time.Time{}, baseSeen: map[string]time.Time{}}
	objects, err := k.Mgr.GetCache().GetInformer(ctx, k.object)
	if err != nil {
		return nil, nil, err
	}
	secrets, err := k.Mgr.GetCache().GetInformer(ctx, &corev1.Secret{})
	if err != nil {
		return nil, nil, err
	}
	objReg, err := objects.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: l.object, UpdateFunc: func(_, obj any) { l.object(obj) }})
	if err != nil {
		return nil, nil, err
	}
	secReg, err := secrets.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: l.secret})
	if err != nil {
		_ = objects.RemoveEventHandler(objReg)
		return nil, nil, err
	}
	return l, func() { _ = objects.RemoveEventHandler(objReg); _ = secrets.RemoveEventHandler(secReg) }, nil
}

// tokenStateOf reads what the benchmark follows of a NotionIntegration or
// SheetConnection: status.tokenExpiresAt and Ready.
func tokenStateOf(obj any) (ns, name string, expires time.Time, ready, ok bool) {
	var at *time.Time
	switch o := obj.(type) {
	case *v1alpha1.NotionIntegration:
		ns, name, ready = o.Namespace, o.Name, status.IsTrue(o, v1alpha1.ReadyCondition)
		if o.Status.TokenExpiresAt != nil {
			at = &o.Status.TokenExpiresAt.Time
		}
	case *v1alpha1.SheetConnection:
		ns, name, ready = o.Namespace, o.Name, status.IsTrue(o, v1alpha1.ReadyCondition)
		if o.Status.TokenExpiresAt != nil {
			at = &o.Status.TokenExpiresAt.Time
		}
	default:
		return "", "", time.Time{}, false, false
	}
	if at == nil {
		return ns, name, time.Time{}, ready, false
	}
	return ns, name, *at, ready, true
}

// plan records the first expiry of every object of p.
func (l *tokenLog) plan(p *tokenPlan) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, e := range p.expires {
		l.expires[name] = e
	}
}

// object is the handler of the kind's adds and updates.
func (l *tokenLog) object(obj any) {
	ns, name, expires, ready, ok := tokenStateOf(obj)
	if !ok || ns != l.ns {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	first, planned := l.expires[name]
	switch {
	case !planned:
	case expires.Equal(first) && ready:
		l.connected[name] = true
	case expires.After(first):
		if _, done := l.refreshed[name]; !done {
			l.refreshed[name] = now
		}
	}
	if want, ok := l.baseWant[name]; ok && expires.Equal(want) {
		if _, done := l.baseSeen[name]; !done {
			l.baseSeen[name] = now
		}
	}
}

// secret is the handler of Secret updates: the first write of a token
// Secret that frees the refresh lock is the refresh's (the engine writes
// the new pair and frees the lock in one update). The manager's cache
// keeps no Secret data (oauth.DropSecretData), so the expiry itself is
// not seen here.
func (l *tokenLog) secret(oldObj, obj any) {
	old, okOld := oldObj.(*corev1.Secret)
	sec, ok := obj.(*corev1.Secret)
	if !ok || !okOld || sec.Namespace != l.ns || !strings.HasPrefix(sec.Name, tokenSecretName("")) {
		return
	}
	_, locked := old.Annotations[oauth.RefreshLockAnnotation]
	_, still := sec.Annotations[oauth.RefreshLockAnnotation]
	if !locked || still {
		return
	}
	name := strings.TrimPrefix(sec.Name, tokenSecretName(""))
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.expires[name]; ok {
		if _, done := l.rewritten[name]; !done {
			l.rewritten[name] = now
		}
	}
}

// count is how many entries m has, under the log's lock.
func (l *tokenLog) count(m map[string]bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(m)
}

// waitConnected waits until n objects are connected, until deadline.
func (l *tokenLog) waitConnected(ctx context.Context, n int, deadline time.Time) error {
	got := 0
	if poll.Until(ctx, "", 50*time.Millisecond, time.Until(deadline), func() (bool, error) {
		got = l.count(l.connected)
		return got == n, nil
	}) != nil {
		return fmt.Errorf("%d of %d Ready with their token's expiry in status when the first token fell due", got, n)
	}
	return nil
}

// waitAll waits until got holds n entries, until deadline.
func (l *tokenLog) waitAll(ctx context.Context, got map[string]time.Time, n int, deadline time.Time, what string) error {
	if seen, err := bench.WaitLogged(ctx, &l.mu, got, n, deadline); err != nil {
		return fmt.Errorf("%d of %d %s by %s", seen, n, what, deadline.Format(time.TimeOnly))
	}
	return nil
}
