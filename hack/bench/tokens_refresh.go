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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/controller/grant"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/status"
)

// The refreshes: how late each token is refreshed against its due
// instant, against a bare client doing at the same instants the least a
// refresh costs, and what each refresh cost in token calls and API
// writes.

// benchTokens runs the token benchmark for NotionIntegrations, then for
// SheetConnections.
func benchTokens(cfg *rest.Config, o tokenOptions) error {
	if o.budget <= 0 {
		o.budget = defaultTokenBudget(o.grants)
	}
	if o.window <= 0 {
		o.window = time.Minute
	}
	c, err := client.New(cfg, client.Options{Scheme: setupScheme()})
	if err != nil {
		return err
	}
	starts := map[string]func(context.Context, *rest.Config, int) (*tokenKind, error){"notion": startNotionTokens, "sheets": startSheetsTokens}
	kinds := strings.Split(o.kinds, ",")
	for _, k := range kinds {
		if starts[k] == nil {
			return fmt.Errorf("-token-kinds: no kind %q (notion, sheets)", k)
		}
	}
	fmt.Printf("\nOAuth token refresh: %d objects of each kind (%s), each kind's access tokens all due for refresh within %s;\n"+
		"instant sandbox over HTTP, each controller alone in its own in-process manager (the binaries' cache and client options), real API server\n",
		o.grants, o.kinds, o.window)
	for _, k := range kinds {
		if err := benchTokenKind(cfg, c, starts[k], o); err != nil {
			return err
		}
	}
	return nil
}

// benchTokenKind runs the benchmark for the kind start starts.
func benchTokenKind(cfg *rest.Config, c client.Client, start func(context.Context, *rest.Config, int) (*tokenKind, error), o tokenOptions) error {
	ctx, cancel := context.WithCancel(context.Background())
	k, err := start(ctx, cfg, o.workers)
	if err != nil {
		cancel()
		return err
	}
	defer func() { cancel(); k.close() }()
	l, stop, err := followTokens(ctx, k)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("\n%s: %d objects in one namespace (a token Secret each, one OAuth client Secret), controller in process (%d workers)\n", k.kind, o.grants, k.workers)
	// The controller begins each refresh its lead early: the budget ends
	// then.
	firstDue := time.Now().Add(o.budget + grant.RefreshLead(k.refreshBefore)).Truncate(time.Second).Add(time.Second)
	p, err := connectGrants(ctx, c, k, o, firstDue, l)
	if err != nil {
		return fmt.Errorf("%s: %w", k.kind, err)
	}
	r := &tokenRun{}
	if err := r.controller(ctx, k, l, p); err != nil {
		return fmt.Errorf("%s: %w", k.kind, err)
	}
	if err := r.baseline(ctx, c, k, l, p); err != nil {
		return fmt.Errorf("%s baseline: %w", k.kind, err)
	}
	r.report(k, p)
	return nil
}

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
	objects, err := k.mgr.GetCache().GetInformer(ctx, k.object)
	if err != nil {
		return nil, nil, err
	}
	secrets, err := k.mgr.GetCache().GetInformer(ctx, &corev1.Secret{})
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
	if seen, err := waitLogged(ctx, &l.mu, got, n, deadline); err != nil {
		return fmt.Errorf("%d of %d %s by %s", seen, n, what, deadline.Format(time.TimeOnly))
	}
	return nil
}

// tokenRun is what the benchmark measured of one kind.
type tokenRun struct {
	// before and after are the manager's API requests around the
	// refreshes; queueBefore and queueAfter its controller's workqueue.
	before, after           [3]int64
	queueBefore, queueAfter queueStats
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
	k.box.ResetCalls()
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
	for _, route := range k.box.Routes() {
		if c := k.box.Calls(route); c > 0 {
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
	sortDurations(r.late)
	sortDurations(r.rewriteLate)
	return nil
}

// settle waits, until deadline at the latest, until the controller is
// idle: no worker busy, and no reconcile or API write since the last look
// 100 ms before (the refreshes' own token Secret writes each cause one
// more reconcile, which is theirs). It answers the manager's API requests
// and the controller's workqueue figures then.
func settle(ctx context.Context, k *tokenKind, deadline time.Time) ([3]int64, queueStats) {
	var last [3]int64
	var lastQ queueStats
	_ = poll.Until(ctx, "", 100*time.Millisecond, time.Until(deadline), func() (bool, error) {
		now, q := k.calls.snapshot(), controllerQueue(k.controller)
		idle := now == last && q.works == lastQ.works && activeWorkers(k.controller) == 0
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
	err := parallel(len(p.order), k.workers, func(i int) error {
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
	for name, at := range l.baseSeen {
		r.baseLate = append(r.baseLate, at.Sub(baseDue[name]))
		if at.After(r.lastBase) {
			r.lastBase = at
		}
	}
	l.mu.Unlock()
	sortDurations(r.baseLate)
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

// report prints the kind's figures.
func (r *tokenRun) report(k *tokenKind, p *tokenPlan) {
	n := float64(len(r.late))
	fmt.Printf("%-72s %11s %11s %11s %11s\n", "lateness (seen in the informer − due)", "min", "p50", "p99", "max")
	row := func(what string, d []time.Duration) {
		if len(d) == 0 {
			fmt.Printf("%-72s %11s\n", what, "-")
			return
		}
		fmt.Printf("%-72s %11s %11s %11s %11s\n", what, d[0].Round(time.Millisecond), pctMs(d, 50), pctMs(d, 99), d[len(d)-1].Round(time.Millisecond))
	}
	row(fmt.Sprintf("baseline: bare client, %d writers, token call + Secret update + status patch", k.workers), r.baseLate)
	row("controller: refresh written (status records the new expiry)", r.late)
	row("(controller: the token Secret holds the new pair, its lock freed)", r.rewriteLate)
	fmt.Printf("ratio controller/baseline: p99 %s, max %s; the last of %d refreshed %s the first due instant (baseline: its last %s)\n",
		lateRatio(pctD(r.late, 99), pctD(r.baseLate, 99)), lateRatio(r.late[len(r.late)-1], r.baseLate[len(r.baseLate)-1]), len(r.late),
		relative(r.lastRefresh.Sub(p.firstDue)), relative(r.lastBase.Sub(p.firstDue.Add(r.shift))))
	fmt.Printf("refreshed before the old access token expired: %d of %d (goal: all)\n", r.beforeExpiry, len(r.late))
	token, other := 0, []string{}
	routes := make([]string, 0, len(r.calls))
	for route := range r.calls {
		routes = append(routes, route)
	}
	sort.Strings(routes)
	for _, route := range routes {
		if route == k.tokenRoute {
			token = r.calls[route]
			continue
		}
		other = append(other, fmt.Sprintf("%s %.2f", route, float64(r.calls[route])/n))
	}
	otherText := "none"
	if len(other) > 0 {
		otherText = strings.Join(other, ", ")
	}
	fmt.Printf("token endpoint calls per refresh: %.2f (goal 1.00); other upstream calls per refresh: %s\n", float64(token)/n, otherText)
	fmt.Printf("manager API requests per refresh: %.2f writes (the baseline's: 2), %.2f reads\n",
		float64(r.after[1]-r.before[1])/n, float64(r.after[0]-r.before[0])/n)
	items, wait, work := r.queueAfter.since(r.queueBefore)
	fmt.Printf("controller workqueue over the refreshes: %.0f reconciles (%.2f per refresh: 1 is the refresh alone, as its own token Secret write wakes nothing;\n"+
		"more are other timers, e.g. a SheetConnection's 10-minute header recheck), mean %s waiting in the queue once ready, mean %s reconciling (%d workers: at most %.0f reconciles/s)\n",
		items, items/n, wait.Round(100*time.Microsecond), work.Round(100*time.Microsecond), k.workers, float64(k.workers)*float64(time.Second)/float64(max(work, time.Microsecond)))
}

// lateRatio is a controller's lateness over the baseline's, or, when the
// controller wrote before the due instant (its lead), that it was early.
func lateRatio(controller, baseline time.Duration) string {
	if controller < 0 {
		return "early (" + relative(controller) + " due)"
	}
	return fmt.Sprintf("%.1f", ratio(controller, baseline))
}

// relative is d after, or before, an instant.
func relative(d time.Duration) string {
	if d < 0 {
		return (-d).Round(time.Millisecond).String() + " before"
	}
	return d.Round(time.Millisecond).String() + " after"
}

// controllerQueue reads the workqueue histograms of the controller named
// name.
func controllerQueue(name string) queueStats {
	var q queueStats
	for _, m := range gatherNamed("name", name) {
		h := m.metric.GetHistogram()
		if h == nil {
			continue
		}
		switch m.family {
		case "workqueue_queue_duration_seconds":
			q.waitSum, q.waits = h.GetSampleSum(), float64(h.GetSampleCount())
		case "workqueue_work_duration_seconds":
			q.workSum, q.works = h.GetSampleSum(), float64(h.GetSampleCount())
		}
	}
	return q
}

// activeWorkers is how many workers of the controller named name are
// reconciling.
func activeWorkers(name string) float64 {
	for _, m := range gatherNamed("controller", name) {
		if m.family == "controller_runtime_active_workers" && m.metric.GetGauge() != nil {
			return m.metric.GetGauge().GetValue()
		}
	}
	return 0
}

// namedMetric is one series of controller-runtime's registry, with its
// family's name.
type namedMetric struct {
	family string
	metric *dto.Metric
}

// gatherNamed is every series of controller-runtime's registry (in
// process) whose label key is value.
func gatherNamed(key, value string) []namedMetric {
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return nil
	}
	var out []namedMetric
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == key && l.GetValue() == value {
					out = append(out, namedMetric{family: mf.GetName(), metric: m})
				}
			}
		}
	}
	return out
}
