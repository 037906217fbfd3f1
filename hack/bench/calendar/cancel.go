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
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// The cancellation benchmark: an event cancelled in the sandbox's calendar
// → push → webhook → sync → its appointment ConfigMap deleted, one at a
// time, against a bare client's deletes seen by the same watch.

// benchCancel times cancellation → push → sync → appointment deleted, one
// at a time, against a bare client's delete seen by the same watch.
func benchCancel(ctx context.Context, c client.WithWatch, rig *calendarRig, names []string, o calendarOptions) error {
	k := min(o.cancels, len(names))
	events, err := appointments(ctx, c, rig, names[:k])
	if err != nil {
		return err
	}
	// The creations pushed "exists" too: let those syncs finish first.
	if err := rig.cal.WaitPushesIdle(ctx); err != nil {
		return err
	}
	if err := waitNotificationsHandled(ctx, c, len(names), 2*time.Minute); err != nil {
		return err
	}
	gone, err := watchDeletions(ctx, c)
	if err != nil {
		return err
	}
	defer gone.stop()
	notes, err := watchNotes(ctx, rig)
	if err != nil {
		return err
	}
	defer notes.stop()

	var r cancelRun
	if r.base, err = gone.each(names[:k], "base-", func(i int) error {
		return c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "base-" + names[i], Namespace: benchNS}})
	}); err != nil {
		return err
	}
	if r.listed, err = gone.each(names[:k], "list-", func(i int) error { return patchListDelete(ctx, c, names[i], i) }); err != nil {
		return err
	}
	if err := r.cancelEach(ctx, rig, gone, notes, names, events); err != nil {
		return err
	}
	r.report(k)
	return nil
}

// appointments creates, for each watch, an event in its calendar and
// three labelled ConfigMaps: the event's appointment ("appt-"), and two
// the baselines delete ("base-", "list-"). It returns the events' ids.
func appointments(ctx context.Context, c client.Client, rig *calendarRig, names []string) ([]string, error) {
	events := make([]string, len(names))
	for i := range names {
		start := time.Now().Add(24 * time.Hour)
		events[i] = rig.cal.CreateEvent(bench.CalendarName(i), sandbox.CalendarEvent{Summary: "visit", Start: start, End: start.Add(time.Hour)})
		for _, cm := range []*corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Name: "appt-" + names[i], Namespace: benchNS, Labels: map[string]string{benchLabel: events[i]}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "base-" + names[i], Namespace: benchNS, Labels: map[string]string{benchLabel: "baseline" + strconv.Itoa(i)}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "list-" + names[i], Namespace: benchNS, Labels: map[string]string{benchLabel: "listed" + strconv.Itoa(i)}}},
		} {
			cm.Data = map[string]string{"who": names[i]}
			if err := c.Create(ctx, cm); err != nil {
				return nil, err
			}
		}
	}
	return events, nil
}

// deletions tells when each labelled ConfigMap's deletion shows on a
// watch.
type deletions struct {
	mu   sync.Mutex
	gone map[string]chan time.Time
	stop func()
}

func watchDeletions(ctx context.Context, c client.WithWatch) (*deletions, error) {
	w, err := c.Watch(ctx, &corev1.ConfigMapList{}, client.InNamespace(benchNS), client.HasLabels{benchLabel})
	if err != nil {
		return nil, err
	}
	d := &deletions{gone: map[string]chan time.Time{}, stop: w.Stop}
	go func() {
		for ev := range w.ResultChan() {
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Deleted {
				d.wait(cm.Name) <- time.Now()
			}
		}
	}()
	return d, nil
}

// wait is the channel that receives when name's deletion showed.
func (d *deletions) wait(name string) chan time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ch, ok := d.gone[name]; ok {
		return ch
	}
	ch := make(chan time.Time, 1)
	d.gone[name] = ch
	return ch
}

// timed runs act and answers how long until name's deletion showed.
func (d *deletions) timed(name string, act func() error) (time.Duration, error) {
	ch := d.wait(name)
	t0 := time.Now()
	if err := act(); err != nil {
		return 0, err
	}
	select {
	case at := <-ch:
		return at.Sub(t0), nil
	case <-time.After(30 * time.Second):
		return 0, fmt.Errorf("%s not deleted after 30s", name)
	}
}

// each times act(i), one at a time, until the ConfigMap prefix+names[i]
// is seen deleted.
func (d *deletions) each(names []string, prefix string, act func(i int) error) ([]time.Duration, error) {
	out := make([]time.Duration, 0, len(names))
	for i := range names {
		took, err := d.timed(prefix+names[i], func() error { return act(i) })
		if err != nil {
			return nil, err
		}
		out = append(out, took)
	}
	return out, nil
}

// patchListDelete is the least a sync's deletion is: a metadata-only list
// of the labelled ConfigMaps straight from the API server (a consistent
// read, as the controller's) and a delete, right after a write elsewhere
// (the webhook's annotation patch).
func patchListDelete(ctx context.Context, c client.Client, name string, i int) error {
	if err := touch(ctx, c, name, "list-"+strconv.Itoa(i)); err != nil {
		return err
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := c.List(ctx, list, client.InNamespace(benchNS), client.HasLabels{benchLabel}); err != nil {
		return err
	}
	return c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "list-" + name, Namespace: benchNS}})
}

// notes records when a watch's notification annotation changes in the
// manager's cache, for the watches armed.
type notes struct {
	mu    sync.Mutex
	armed map[string]bool
	noted map[string]time.Time
	stop  func()
}

func watchNotes(ctx context.Context, rig *calendarRig) (*notes, error) {
	inf, err := rig.Mgr.GetCache().GetInformer(ctx, &v1alpha1.CalendarWatch{})
	if err != nil {
		return nil, err
	}
	n := &notes{armed: map[string]bool{}, noted: map[string]time.Time{}}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(old, obj any) {
		o, ok1 := old.(*v1alpha1.CalendarWatch)
		w, ok2 := obj.(*v1alpha1.CalendarWatch)
		if !ok1 || !ok2 || o.Annotations[v1alpha1.CalendarNotificationAnnotation] == w.Annotations[v1alpha1.CalendarNotificationAnnotation] {
			return
		}
		now := time.Now()
		n.mu.Lock()
		defer n.mu.Unlock()
		if _, done := n.noted[w.Name]; n.armed[w.Name] && !done {
			n.noted[w.Name] = now
		}
	}})
	if err != nil {
		return nil, err
	}
	n.stop = func() { _ = inf.RemoveEventHandler(reg) }
	return n, nil
}

// cancelRun is what the cancellation benchmark measured: the baselines'
// and the controller's deletion times, and where the controller's time
// goes (to the webhook's answer, to the annotation in the cache).
type cancelRun struct {
	base, listed, ctrl []time.Duration
	toPush, toNoted    []time.Duration
}

// cancelEach cancels each watch's event, one at a time, and times it until
// its appointment's deletion shows, and where the time goes: the sandbox's
// record of the push (stamped when the webhook answered) and the
// notification annotation in the cache.
func (r *cancelRun) cancelEach(ctx context.Context, rig *calendarRig, gone *deletions, notes *notes, names, events []string) error {
	for i := range events {
		var w v1alpha1.CalendarWatch
		if err := rig.Mgr.GetClient().Get(ctx, types.NamespacedName{Namespace: benchNS, Name: names[i]}, &w); err != nil {
			return err
		}
		notes.mu.Lock()
		notes.armed[names[i]] = true
		notes.mu.Unlock()
		t0 := time.Now()
		d, err := gone.timed("appt-"+names[i], func() error { return rig.cal.CancelEvent(bench.CalendarName(i), events[i]) })
		if err != nil {
			return err
		}
		r.ctrl = append(r.ctrl, d)
		if at := pushedAt(rig, w.Status.Channel.ID, t0); !at.IsZero() {
			r.toPush = append(r.toPush, at.Sub(t0))
		}
		notes.mu.Lock()
		if at, ok := notes.noted[names[i]]; ok {
			r.toNoted = append(r.toNoted, at.Sub(t0))
		}
		notes.mu.Unlock()
	}
	return nil
}

// pushedAt is when the webhook answered the first "exists" push to
// channel after after; zero if none.
func pushedAt(rig *calendarRig, channel string, after time.Time) time.Time {
	for _, p := range rig.cal.Pushes() {
		if p.ChannelID == channel && p.State == "exists" && p.Status == http.StatusOK && p.Time.After(after) {
			return p.Time
		}
	}
	return time.Time{}
}

// report prints the cancellation benchmark's figures for k events.
func (r *cancelRun) report(k int) {
	for _, d := range [][]time.Duration{r.toPush, r.toNoted, r.base, r.listed, r.ctrl} {
		bench.SortDurations(d)
	}
	base, listed, ctrlLat := r.base, r.listed, r.ctrl
	fmt.Printf("\n2. cancellation → appointment deleted: %d events cancelled one at a time in the sandbox (push → webhook → sync → delete), deletion seen on a watch\n", k)
	fmt.Printf("%-66s %9s %9s %9s\n", "", "p50", "p95", "max")
	fmt.Printf("%-66s %9s %9s %9s\n", "baseline: bare client deletes the ConfigMap", bench.PctMs(base, 50), bench.PctMs(base, 95), base[len(base)-1].Round(100*time.Microsecond))
	fmt.Printf("%-66s %9s %9s %9s\n", "baseline: bare client patches a watch, lists (consistent), deletes", bench.PctMs(listed, 50), bench.PctMs(listed, 95), listed[len(listed)-1].Round(100*time.Microsecond))
	fmt.Printf("%-66s %9s %9s %9s\n", "controller: event cancelled → its ConfigMap deleted", bench.PctMs(ctrlLat, 50), bench.PctMs(ctrlLat, 95), ctrlLat[len(ctrlLat)-1].Round(100*time.Microsecond))
	fmt.Printf("ratio controller/baseline: p50 %.1f, p95 %.1f (to patch+list+delete: p50 %.1f, p95 %.1f)\n", bench.Ratio(bench.PctD(ctrlLat, 50), bench.PctD(base, 50)), bench.Ratio(bench.PctD(ctrlLat, 95), bench.PctD(base, 95)),
		bench.Ratio(bench.PctD(ctrlLat, 50), bench.PctD(listed, 50)), bench.Ratio(bench.PctD(ctrlLat, 95), bench.PctD(listed, 95)))
	fmt.Printf("   of which: cancellation → webhook answered the push p50 %s (%d seen); → notification annotation in the manager's cache p50 %s (%d seen)\n",
		bench.PctMs(r.toPush, 50), len(r.toPush), bench.PctMs(r.toNoted, 50), len(r.toNoted))
}
