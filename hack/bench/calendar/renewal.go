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

package calendar

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/controller/calendarwatch"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// The renewal benchmark: channels due for renewal together (createWatches
// made them so), how late each is renewed, against a bare client writing
// once per watch at the same instants.

// renewalLog records, from the manager's informer, when each watch's
// status first named a channel other than its first, and when each
// baseline annotation showed.
type renewalLog struct {
	mu        sync.Mutex
	first     map[string]string    // watch → its first channel id
	renewed   map[string]time.Time // watch → when status named another
	touched   map[string]time.Time // watch → when the baseline's write showed
	touchWant map[string]string    // watch → the baseline's value
	newIDs    map[string]string    // watch → the renewed channel id
}

func newRenewalLog() *renewalLog {
	return &renewalLog{first: map[string]string{}, renewed: map[string]time.Time{}, touched: map[string]time.Time{},
		touchWant: map[string]string{}, newIDs: map[string]string{}}
}

// update is the informer's update handler.
func (l *renewalLog) update(_, obj any) {
	w, ok := obj.(*v1alpha1.CalendarWatch)
	if !ok {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if id, ok := l.first[w.Name]; ok && w.Status.Channel != nil && w.Status.Channel.ID != id {
		if _, done := l.renewed[w.Name]; !done {
			l.renewed[w.Name], l.newIDs[w.Name] = now, w.Status.Channel.ID
		}
	}
	if v, ok := l.touchWant[w.Name]; ok && w.Annotations[benchTouch] == v {
		if _, done := l.touched[w.Name]; !done {
			l.touched[w.Name] = now
		}
	}
}

// waitAll waits until got (renewed or touched) has every watch of the
// plan, polling every 20 ms until the plan's deadline.
func (l *renewalLog) waitAll(ctx context.Context, p *renewalPlan, got map[string]time.Time, what string) error {
	if n, err := bench.WaitLogged(ctx, &l.mu, got, len(p.due), p.deadline); err != nil {
		return fmt.Errorf("%d of %d %s after %s", n, len(p.due), what, time.Since(p.firstDue).Round(time.Second))
	}
	return nil
}

// renewalPlan is when each watch's first channel falls due for renewal.
type renewalPlan struct {
	due map[string]time.Time
	// expires is when each first channel expires.
	expires           map[string]time.Time
	firstDue, lastDue time.Time
	// deadline is when the benchmark gives up waiting.
	deadline time.Time
	// mixed counts the channels granted another expiration than the first.
	mixed int
}

// planRenewals reads the first channels as status names them (from the
// manager's cache) into the log, and when each is due.
func planRenewals(ctx context.Context, rig *calendarRig, l *renewalLog) (*renewalPlan, error) {
	var list v1alpha1.CalendarWatchList
	if err := rig.Mgr.GetClient().List(ctx, &list, client.InNamespace(benchNS)); err != nil {
		return nil, err
	}
	p := &renewalPlan{due: map[string]time.Time{}, expires: map[string]time.Time{}}
	var expiration time.Time
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range list.Items {
		w := &list.Items[i]
		ch := w.Status.Channel
		if ch == nil || ch.Expiration == nil {
			return nil, fmt.Errorf("%s has no channel", w.Name)
		}
		l.first[w.Name] = ch.ID
		p.due[w.Name] = calendarwatch.RenewAt(ch, w.Spec.Channel.RenewBefore.Duration)
		p.expires[w.Name] = ch.Expiration.Time
		if expiration.IsZero() {
			expiration = ch.Expiration.Time
		} else if !ch.Expiration.Time.Equal(expiration) {
			p.mixed++
		}
	}
	for _, d := range p.due {
		if p.firstDue.IsZero() || d.Before(p.firstDue) {
			p.firstDue = d
		}
		if d.After(p.lastDue) {
			p.lastDue = d
		}
	}
	p.deadline = p.lastDue.Add(2 * time.Minute)
	return p, nil
}

// benchRenewal measures how late the renewals of channels due together
// are, against a bare client writing once per watch at the same instants.
func benchRenewal(ctx context.Context, c client.Client, rig *calendarRig) error {
	inf, err := rig.Mgr.GetCache().GetInformer(ctx, &v1alpha1.CalendarWatch{})
	if err != nil {
		return err
	}
	l := newRenewalLog()
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: l.update})
	if err != nil {
		return err
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()

	p, err := planRenewals(ctx, rig, l)
	if err != nil {
		return err
	}
	// From here on channels are granted an hour from the real now: the
	// renewed ones are not due again during the benchmark.
	rig.frozen.Store(0)
	if wait := time.Until(p.firstDue); wait < 0 {
		return fmt.Errorf("the first renewal fell due %s before all channels were open: raise -cal-open-budget", -wait)
	}
	rig.Box.ResetCalls()
	r := &renewalRun{before: rig.Calls.Snapshot(), queueBefore: bench.ControllerQueue("calendarwatch")}
	fmt.Printf("\n1. renewal: %d channels expiring at one instant, spec.channel renewBefore %s (ttl 1h): all due within %s (renewAt's spread), the first in %s\n",
		len(p.due), benchRenewBefore, p.lastDue.Sub(p.firstDue).Round(time.Millisecond), time.Until(p.firstDue).Round(time.Second))
	if p.mixed > 0 {
		fmt.Printf("   (%d channels were granted another expiration)\n", p.mixed)
	}
	if err := r.controller(ctx, rig, l, p); err != nil {
		return err
	}
	if err := r.baseline(ctx, c, l, p, rig.workers); err != nil {
		return err
	}
	r.report(p, rig.workers)
	return nil
}

// renewalRun is what the renewal benchmark measured.
type renewalRun struct {
	before, after [3]int64
	queueBefore   bench.QueueStats
	// The controller's renewals: lateness, when each renewing reconcile
	// began (from the new channel's id), the last one; its workqueue's
	// reconciles, mean wait and work; the Google calls counted.
	late, began                     []time.Duration
	lastRenewal                     time.Time
	beforeExpiry                    int
	items                           float64
	qWait, qWork                    time.Duration
	watchCalls, stops, lists, token int
	// The baseline's lateness, its last write seen, and how far its due
	// instants are shifted from the controller's.
	baseLate  []time.Duration
	lastTouch time.Time
	shift     time.Duration
}

// controller waits for every channel to be renewed and the replaced ones
// stopped, and gathers the controller's figures.
func (r *renewalRun) controller(ctx context.Context, rig *calendarRig, l *renewalLog, p *renewalPlan) error {
	if err := l.waitAll(ctx, p, l.renewed, "channels renewed"); err != nil {
		return err
	}
	// The replaced channels are stopped right after the status switch.
	_ = poll.Until(ctx, "", 20*time.Millisecond, 10*time.Second, func() (bool, error) {
		return rig.Box.Calls(sandbox.CalendarChannelsStop) >= len(p.due), nil
	})
	r.after = rig.Calls.Snapshot()
	r.items, r.qWait, r.qWork = bench.ControllerQueue("calendarwatch").Since(r.queueBefore)
	r.watchCalls, r.stops = rig.Box.Calls(sandbox.CalendarEventsWatch), rig.Box.Calls(sandbox.CalendarChannelsStop)
	r.lists, r.token = rig.Box.Calls(sandbox.CalendarEventsList), rig.Box.Calls(sandbox.GoogleOAuthToken)

	l.mu.Lock()
	r.late = make([]time.Duration, 0, len(p.due))
	r.began = make([]time.Duration, 0, len(p.due))
	for name, at := range l.renewed {
		r.late = append(r.late, at.Sub(p.due[name]))
		r.began = append(r.began, channelSeqTime(l.newIDs[name]).Sub(p.due[name]))
		if at.Before(p.expires[name]) {
			r.beforeExpiry++
		}
		if at.After(r.lastRenewal) {
			r.lastRenewal = at
		}
	}
	l.mu.Unlock()
	bench.SortDurations(r.late)
	bench.SortDurations(r.began)
	return nil
}

// baseline replays the due instants, shifted to a second from now; as many
// writers as the controller has workers merge-patch an annotation on each
// watch when it falls due, in due order: the least work a renewal could be.
func (r *renewalRun) baseline(ctx context.Context, c client.Client, l *renewalLog, p *renewalPlan, workers int) error {
	r.shift = time.Now().Add(time.Second).Sub(p.firstDue)
	order := make([]string, 0, len(p.due))
	for name := range p.due {
		order = append(order, name)
	}
	sort.Slice(order, func(i, j int) bool { return p.due[order[i]].Before(p.due[order[j]]) })
	baseDue := map[string]time.Time{}
	l.mu.Lock()
	for _, name := range order {
		baseDue[name] = p.due[name].Add(r.shift)
		l.touchWant[name] = "renew-" + strconv.FormatInt(baseDue[name].UnixMilli(), 10)
	}
	l.mu.Unlock()
	err := bench.Parallel(len(order), workers, func(i int) error {
		name := order[i]
		time.Sleep(time.Until(baseDue[name]))
		return touch(ctx, c, name, l.touchWant[name])
	})
	if err != nil {
		return err
	}
	if err := l.waitAll(ctx, p, l.touched, "baseline writes seen"); err != nil {
		return err
	}
	l.mu.Lock()
	r.baseLate, r.lastTouch = bench.Lateness(l.touched, baseDue)
	l.mu.Unlock()
	return nil
}

// touch merge-patches the baseline's annotation on a watch to value: a
// write that reconciles nothing.
func touch(ctx context.Context, c client.Client, watch, value string) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{benchTouch: value}}})
	return c.Patch(ctx, &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Name: watch, Namespace: benchNS}}, client.RawPatch(types.MergePatchType, patch))
}

// report prints the renewal benchmark's figures.
func (r *renewalRun) report(p *renewalPlan, workers int) {
	late, baseLate := r.late, r.baseLate
	n := float64(len(late))
	fmt.Printf("%-66s %9s %9s %9s %9s\n", "lateness (seen in the informer − due)", "min", "p50", "p99", "max")
	row := func(what string, d []time.Duration) {
		fmt.Printf("%-66s %9s %9s %9s %9s\n", what, d[0].Round(time.Millisecond), bench.PctMs(d, 50), bench.PctMs(d, 99), d[len(d)-1].Round(time.Millisecond))
	}
	row(fmt.Sprintf("baseline: bare client, %d writers, 1 annotation patch at each due", workers), baseLate)
	row("controller: channel renewed (status names the new channel)", late)
	row("(controller: renewing reconcile began, from the new channel's id)", r.began)
	fmt.Printf("ratio controller/baseline: p50 %.1f, p99 %.1f, max %.1f (goal: p99 ≤ 1.2; below 0 is early); the last of %d renewed %s after the first due (baseline: its last write %s after)\n",
		bench.Ratio(bench.PctD(late, 50), bench.PctD(baseLate, 50)), bench.Ratio(bench.PctD(late, 99), bench.PctD(baseLate, 99)), bench.Ratio(late[len(late)-1], baseLate[len(baseLate)-1]), len(late),
		r.lastRenewal.Sub(p.firstDue).Round(time.Millisecond), r.lastTouch.Sub(p.firstDue.Add(r.shift)).Round(time.Millisecond))
	fmt.Printf("successors open (in status) before their predecessor expired: %d of %d\n", r.beforeExpiry, len(late))
	fmt.Printf("Google calls per renewal: %.2f (events.watch %.2f, channels.stop %.2f, events.list %.2f, token %.2f)\n",
		float64(r.watchCalls+r.stops+r.lists+r.token)/n, float64(r.watchCalls)/n, float64(r.stops)/n, float64(r.lists)/n, float64(r.token)/n)
	fmt.Printf("manager API requests per renewal: %.2f writes (status patches and Events; goal ≤ 2), %.2f reads\n",
		float64(r.after[1]-r.before[1])/n, float64(r.after[0]-r.before[0])/n)
	fmt.Printf("controller workqueue over the renewals: %.0f reconciles, mean %s waiting in the queue once ready, mean %s reconciling (%d workers: at most %.0f renewals/s)\n",
		r.items, r.qWait.Round(100*time.Microsecond), r.qWork.Round(100*time.Microsecond), workers, float64(workers)*float64(time.Second)/float64(max(r.qWork, time.Microsecond)))
}
