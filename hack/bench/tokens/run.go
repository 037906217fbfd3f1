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
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// The refreshes: how late each token is refreshed against its due
// instant, against a bare client doing at the same instants the least a
// refresh costs, and what each refresh cost in token calls and API
// writes.

// tokenRun is what the benchmark measured of one kind.
type tokenRun struct {
	// before and after are the manager's API requests around the
	// refreshes; queueBefore and queueAfter its controller's workqueue.
	before, after           [3]int64
	queueBefore, queueAfter bench.QueueStats
	// calls are the sandbox's calls by route over the refreshes.
	calls map[string]int
	// The controller: lateness of status and of the token Secret, the
	// last refresh, and how many were written before the old token
	// expired.
	late, rewriteLate []time.Duration
	lastRefresh       time.Time
	beforeExpiry      int
	// The baseline: its lateness, its last write seen, and how far its due
	// instants are shifted from the controller's.
	baseLate []time.Duration
	lastBase time.Time
	shift    time.Duration
}

// controller waits for every token to be refreshed and the manager to
// settle, and gathers the controller's figures.
func (r *tokenRun) controller(ctx context.Context, k *tokenKind, l *tokenLog, p *tokenPlan) error {
	firstStart := p.firstDue.Add(-p.lead)
	if wait := time.Until(firstStart); wait < 0 {
		return fmt.Errorf("the first refresh began %s before all grants were connected: raise -token-budget", -wait)
	}
	// The setup's last reconciles (those the connect Secrets' creation
	// caused) are not the refreshes'.
	r.before, r.queueBefore = settle(ctx, k, firstStart)
	k.Box.ResetCalls()
	n := len(p.order)
	seconds := int(p.lastDue.Sub(p.firstDue)/time.Second) + 1
	fmt.Printf("refresh: %d access tokens due within %s (%d at each second), spec refreshBefore %s (each expires that long after its due instant), the first due in %s;\n"+
		"the controller begins each refresh %s before it is due (grant.RefreshLead)\n",
		n, time.Duration(seconds)*time.Second, (n+seconds-1)/seconds, k.refreshBefore, time.Until(p.firstDue).Round(time.Second), p.lead)
	if err := l.waitAll(ctx, l.refreshed, n, p.lastDue.Add(10*time.Minute), "tokens refreshed"); err != nil {
		return err
	}
	// The token Secret is written before status: every one is by now.
	r.after, r.queueAfter = settle(ctx, k, time.Now().Add(30*time.Second))
	r.calls = map[string]int{}
	for _, route := range k.Box.Routes() {
		if c := k.Box.Calls(route); c > 0 {
			r.calls[route] = c
		}
	}
	l.mu.Lock()
	for name, at := range l.refreshed {
		r.late = append(r.late, at.Sub(p.due[name]))
		if at.Before(p.expires[name]) {
			r.beforeExpiry++
		}
		if at.After(r.lastRefresh) {
			r.lastRefresh = at
		}
	}
	for name, at := range l.rewritten {
		r.rewriteLate = append(r.rewriteLate, at.Sub(p.due[name]))
	}
	l.mu.Unlock()
	bench.SortDurations(r.late)
	bench.SortDurations(r.rewriteLate)
	return nil
}

// settle waits, until deadline at the latest, until the controller is
// idle: no worker busy, and no reconcile or API write since the last look
// 100 ms before (the refreshes' own token Secret writes each cause one
// more reconcile, which is theirs). It answers the manager's API requests
// and the controller's workqueue figures then.
func settle(ctx context.Context, k *tokenKind, deadline time.Time) ([3]int64, bench.QueueStats) {
	var last [3]int64
	var lastQ bench.QueueStats
	_ = poll.Until(ctx, "", 100*time.Millisecond, time.Until(deadline), func() (bool, error) {
		now, q := k.Calls.Snapshot(), bench.ControllerQueue(k.controller)
		idle := now == last && q.Works == lastQ.Works && bench.ActiveWorkers(k.controller) == 0
		last, lastQ = now, q
		return idle, nil
	})
	return last, lastQ
}

// baseline replays the due instants, shifted to a second from now; as
// many writers as the controller has workers each do, at a grant's due
// instant and in due order, the least a refresh costs: one refresh_token
// call to the sandbox's token endpoint (on the baseline's own grant, so
// that Notion's rotation leaves the object's alone), one update of the
// baseline's grant Secret with the new pair, and one status patch of the
// object recording the new expiry. The manager keeps running: the grant
// Secrets are no object's, and a status patch wakes no controller.
func (r *tokenRun) baseline(ctx context.Context, c client.Client, k *tokenKind, l *tokenLog, p *tokenPlan) error {
	r.shift = time.Now().Add(time.Second).Sub(p.firstDue)
	baseDue := map[string]time.Time{}
	for _, name := range p.order {
		baseDue[name] = p.due[name].Add(r.shift)
	}
	err := bench.Parallel(len(p.order), k.workers, func(i int) error {
		name := p.order[i]
		time.Sleep(time.Until(baseDue[name]))
		return baseRefresh(ctx, c, k, l, name, p.base[name])
	})
	if err != nil {
		return err
	}
	if err := l.waitAll(ctx, l.baseSeen, len(p.order), time.Now().Add(time.Minute), "baseline status patches seen"); err != nil {
		return err
	}
	l.mu.Lock()
	r.baseLate, r.lastBase = bench.Lateness(l.baseSeen, baseDue)
	l.mu.Unlock()
	return nil
}

// baseRefresh is one baseline refresh of object name, on the grant in
// base.
func baseRefresh(ctx context.Context, c client.Client, k *tokenKind, l *tokenLog, name string, base *corev1.Secret) error {
	refresh := string(base.Data[oauth.KeyRefreshToken])
	t, err := k.tokenCall(ctx, refresh)
	if err != nil {
		return err
	}
	expires := time.Now().Add(t.lifetime).Truncate(time.Second)
	if t.refresh != "" {
		refresh = t.refresh
	}
	base.StringData = nil
	base.Data = map[string][]byte{oauth.KeyAccessToken: []byte(t.access), oauth.KeyRefreshToken: []byte(refresh),
		oauth.KeyTokenType: []byte("Bearer"), oauth.KeyExpiry: []byte(expires.UTC().Format(time.RFC3339))}
	if err := c.Update(ctx, base); err != nil {
		return fmt.Errorf("update grant Secret %s: %w", base.Name, err)
	}
	l.mu.Lock()
	l.baseWant[name] = expires
	l.mu.Unlock()
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"tokenExpiresAt": expires.UTC().Format(time.RFC3339)}})
	obj := k.object.DeepCopyObject().(client.Object)
	obj.SetNamespace(k.ns)
	obj.SetName(name)
	return c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}
