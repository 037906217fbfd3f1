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
	"hash/fnv"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/controller/calendarwatch"
	"github.com/switchboard-dev/switchboard/internal/gcalendar"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// calendarOptions size the CalendarWatch benchmark.
type calendarOptions struct {
	// watches renewed together (and the push benchmark's targets).
	watches int
	// pushes per client count on the push route (and its baseline).
	pushes int
	// cancels timed one at a time from cancellation to appointment gone.
	cancels int
	// openBudget is how long the manager gets to open every watch's first
	// channel; every channel expires together this long (plus renewBefore
	// and its spread) after the watches are created.
	openBudget time.Duration
}

// The benchmark's watches renew renewBefore ahead of an expiration they all
// share, spread by up to a tenth of it (renewAt): 1,000 renewals due within
// benchRenewSpread.
const (
	benchRenewBefore = 60 * time.Second
	benchRenewSpread = benchRenewBefore / 10
	benchNS          = "bench-cal"
	benchLabel       = v1alpha1.DefaultEventIDLabel
	// benchTouch is the annotation the bare-client baselines write: it
	// reconciles nothing.
	benchTouch = "bench.switchboard.dev/touch"
)

// calendarRig is what the CalendarWatch benchmarks share, wired as
// test/calendar/suite_test.go wires it: an instant sandbox (Google OAuth
// and Calendar, whose push sender posts to the webhook), the CalendarWatch
// controller in an in-process manager (default options: one worker), and
// the webhook server's routes on a loopback listener.
type calendarRig struct {
	*rig
	google *sandbox.GoogleOAuth
	cal    *sandbox.GoogleCalendar
	// frozen, when not zero, is the sandbox calendar's clock (Unix ms).
	frozen atomic.Int64
}

func startCalendarRig(ctx context.Context, cfg *rest.Config) (*calendarRig, error) {
	r := &calendarRig{google: sandbox.NewGoogleOAuth()}
	r.google.AddClient("bench-client", "bench-secret")
	r.cal = sandbox.NewGoogleCalendar(r.google)
	r.cal.PushRetryBase = 20 * time.Millisecond
	// Channels are granted at most an hour; the clock below sets the
	// expiration of the first ones.
	r.cal.MaxChannelTTL = time.Hour
	r.cal.Now = func() time.Time {
		if ms := r.frozen.Load(); ms != 0 {
			return time.UnixMilli(ms)
		}
		return time.Now()
	}
	var err error
	if r.rig, err = newRig(ctx, cfg, sandbox.New(r.google, r.cal), &apiCounter{}); err != nil {
		r.cal.Close()
		return nil, err
	}
	stopRig := r.close
	r.close = func() { r.cal.Close(); stopRig() }
	cal, err := gcalendar.New(ctx, r.out)
	if err == nil {
		err = (&calendarwatch.Reconciler{
			Client: r.mgr.GetClient(), APIReader: r.mgr.GetAPIReader(), OAuth: r.engine, Calendar: cal, Out: r.out,
			Recorder: r.mgr.GetEventRecorder("calendarwatch-controller"), PublicURL: r.hookURL,
		}).SetupWithManager(r.mgr)
	}
	if err != nil {
		r.close()
		return nil, err
	}
	return r, r.start(ctx)
}

// renewDue is calendarwatch.renewAt (unexported), replicated: renewBefore
// ahead of the expiration, halved for a channel whose whole life (from the
// Unix ms in its id) is shorter, minus up to a tenth spread by the fnv-64a
// hash of the channel id.
func renewDue(ch *v1alpha1.ChannelStatus, renewBefore time.Duration) time.Time {
	if ch == nil || ch.Expiration == nil {
		return time.Time{}
	}
	_, seq, _ := gcalendar.ParseChannelID(ch.ID)
	if life := ch.Expiration.Sub(time.UnixMilli(seq)); life > 0 && life <= renewBefore {
		renewBefore = life / 2
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(ch.ID))
	spread := time.Duration(h.Sum64() % uint64(renewBefore/10+1))
	return ch.Expiration.Add(-renewBefore - spread)
}

func channelSeqTime(id string) time.Time {
	_, seq, _ := gcalendar.ParseChannelID(id)
	return time.UnixMilli(seq)
}

// benchCalendar runs the three CalendarWatch benchmarks.
func benchCalendar(cfg *rest.Config, o calendarOptions) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctrl.SetLogger(logr.Discard())
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: setupScheme()})
	if err != nil {
		return err
	}
	rig, err := startCalendarRig(ctx, cfg)
	if err != nil {
		return err
	}
	defer rig.close()
	fmt.Printf("\nCalendarWatch: %d watches in one namespace (one calendar and token Secret each, one client Secret), instant sandbox with its push sender,\n"+
		"controller in process (default options: 1 worker), webhook on loopback with the per-client rate limit off, real API server\n", o.watches)

	names, err := createWatches(ctx, c, rig, o)
	if err != nil {
		return err
	}
	if err := benchRenewal(ctx, c, rig); err != nil {
		return fmt.Errorf("renewal: %w", err)
	}
	// Cancellations before the push benchmark: its made-up message numbers
	// on the real channels are higher than the sandbox's, so the webhook
	// would take the sandbox's next pushes for late duplicates.
	if err := benchCancel(ctx, c, rig, names, o); err != nil {
		return fmt.Errorf("cancellation: %w", err)
	}
	if err := benchPush(ctx, c, rig, names, o); err != nil {
		return fmt.Errorf("push route: %w", err)
	}
	return nil
}

func watchName(i int) string    { return fmt.Sprintf("w%04d", i) }
func calendarName(i int) string { return fmt.Sprintf("w%04d@example.com", i) }

// createWatches creates the granted watches with the sandbox clock frozen so
// that every first channel expires at one instant E, and waits until each
// has its channel.
func createWatches(ctx context.Context, c client.Client, rig *calendarRig, o calendarOptions) ([]string, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNS}}); err != nil {
		return nil, err
	}
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "google-client", Namespace: benchNS},
		StringData: map[string]string{"client_id": "bench-client", "client_secret": "bench-secret"}}); err != nil {
		return nil, err
	}
	// Every first channel is granted until E: the sandbox's clock stands
	// at E - MaxChannelTTL (an hour) while they are opened, and the watch
	// asks for an hour from the real now, which is later.
	began := time.Now()
	expire := began.Add(o.openBudget + benchRenewBefore + benchRenewSpread).Truncate(time.Second).Add(time.Second)
	rig.frozen.Store(expire.Add(-rig.cal.MaxChannelTTL).UnixMilli())
	names := make([]string, o.watches)
	err := parallel(o.watches, 16, func(i int) error {
		names[i] = watchName(i)
		rig.cal.AddCalendar(calendarName(i))
		tok := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tok-" + names[i], Namespace: benchNS},
			StringData: map[string]string{"refresh_token": rig.google.IssueRefreshToken("bench-client", gcalendar.Scope)}}
		if err := c.Create(ctx, tok); err != nil {
			return err
		}
		w := &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Name: names[i], Namespace: benchNS}}
		w.Spec.CalendarID = calendarName(i)
		w.Spec.OAuth.ClientSecretRef.Name, w.Spec.OAuth.TokenSecretRef.Name = "google-client", tok.Name
		w.Spec.Sink.Objects = &v1alpha1.ObjectSink{APIVersion: "v1", Kind: "ConfigMap"}
		w.Spec.Channel.TTL, w.Spec.Channel.RenewBefore = metav1.Duration{Duration: time.Hour}, metav1.Duration{Duration: benchRenewBefore}
		return c.Create(ctx, w)
	})
	if err != nil {
		return nil, err
	}
	created := time.Since(began)
	cache := rig.mgr.GetClient()
	for {
		var list v1alpha1.CalendarWatchList
		if err := cache.List(ctx, &list, client.InNamespace(benchNS)); err != nil {
			return nil, err
		}
		open := 0
		for i := range list.Items {
			if list.Items[i].Status.Channel != nil {
				open++
			}
		}
		if open == o.watches {
			break
		}
		if !time.Now().Before(expire.Add(-benchRenewBefore - benchRenewSpread)) {
			return nil, fmt.Errorf("%d of %d channels open when the first renewals fall due: raise -cal-open-budget (now %s)", open, o.watches, o.openBudget)
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Printf("setup: %d watches created in %s (16 clients); all first channels open %s after the first create\n",
		o.watches, created.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	return names, nil
}

// benchRenewal measures how late the renewals of channels due together
// are, against a bare client writing once per watch at the same instants.
func benchRenewal(ctx context.Context, c client.Client, rig *calendarRig) error {
	cache := rig.mgr.GetClient()
	inf, err := rig.mgr.GetCache().GetInformer(ctx, &v1alpha1.CalendarWatch{})
	if err != nil {
		return err
	}
	var mu sync.Mutex
	first := map[string]string{}      // watch → its first channel id
	renewed := map[string]time.Time{} // watch → when status named another
	touched := map[string]time.Time{} // watch → when the baseline's write showed
	touchWant := map[string]string{}  // watch → the baseline's value
	newIDs := map[string]string{}     // watch → the renewed channel id
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		w, ok := obj.(*v1alpha1.CalendarWatch)
		if !ok {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if id, ok := first[w.Name]; ok && w.Status.Channel != nil && w.Status.Channel.ID != id {
			if _, done := renewed[w.Name]; !done {
				renewed[w.Name], newIDs[w.Name] = now, w.Status.Channel.ID
			}
		}
		if v, ok := touchWant[w.Name]; ok && w.Annotations[benchTouch] == v {
			if _, done := touched[w.Name]; !done {
				touched[w.Name] = now
			}
		}
	}})
	if err != nil {
		return err
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()

	// The first channels, as status names them, and when each is due.
	var list v1alpha1.CalendarWatchList
	if err := cache.List(ctx, &list, client.InNamespace(benchNS)); err != nil {
		return err
	}
	due := map[string]time.Time{}
	var expiration time.Time
	mixed := 0
	mu.Lock()
	for i := range list.Items {
		w := &list.Items[i]
		ch := w.Status.Channel
		if ch == nil || ch.Expiration == nil {
			mu.Unlock()
			return fmt.Errorf("%s has no channel", w.Name)
		}
		first[w.Name] = ch.ID
		due[w.Name] = renewDue(ch, w.Spec.Channel.RenewBefore.Duration)
		if expiration.IsZero() {
			expiration = ch.Expiration.Time
		} else if !ch.Expiration.Time.Equal(expiration) {
			mixed++
		}
	}
	mu.Unlock()
	// From here on channels are granted an hour from the real now: the
	// renewed ones are not due again during the benchmark.
	rig.frozen.Store(0)
	var firstDue, lastDue time.Time
	for _, d := range due {
		if firstDue.IsZero() || d.Before(firstDue) {
			firstDue = d
		}
		if d.After(lastDue) {
			lastDue = d
		}
	}
	if wait := time.Until(firstDue); wait < 0 {
		return fmt.Errorf("the first renewal fell due %s before all channels were open: raise -cal-open-budget", -wait)
	}
	rig.box.ResetCalls()
	before := rig.calls.snapshot()
	queueBefore := calendarQueue()
	fmt.Printf("\n1. renewal: %d channels expiring at one instant, spec.channel renewBefore %s (ttl 1h): all due within %s (renewAt's spread), the first in %s\n",
		len(due), benchRenewBefore, lastDue.Sub(firstDue).Round(time.Millisecond), time.Until(firstDue).Round(time.Second))
	if mixed > 0 {
		fmt.Printf("   (%d channels were granted another expiration)\n", mixed)
	}

	deadline := lastDue.Add(2 * time.Minute)
	waitFor := func(got map[string]time.Time, what string) error {
		for {
			mu.Lock()
			n := len(got)
			mu.Unlock()
			if n >= len(due) {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%d of %d %s after %s", n, len(due), what, time.Since(firstDue).Round(time.Second))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := waitFor(renewed, "channels renewed"); err != nil {
		return err
	}
	// The replaced channels are stopped right after the status switch.
	stopDeadline := time.Now().Add(10 * time.Second)
	for rig.box.Calls(sandbox.CalendarChannelsStop) < len(due) && time.Now().Before(stopDeadline) {
		time.Sleep(20 * time.Millisecond)
	}
	after := rig.calls.snapshot()
	items, qWait, qWork := calendarQueue().since(queueBefore)
	watchCalls, stops := rig.box.Calls(sandbox.CalendarEventsWatch), rig.box.Calls(sandbox.CalendarChannelsStop)
	lists, tokens := rig.box.Calls(sandbox.CalendarEventsList), rig.box.Calls(sandbox.GoogleOAuthToken)

	mu.Lock()
	late := make([]time.Duration, 0, len(due))
	began := make([]time.Duration, 0, len(due))
	var lastRenewal time.Time
	for name, at := range renewed {
		late = append(late, at.Sub(due[name]))
		began = append(began, channelSeqTime(newIDs[name]).Sub(due[name]))
		if at.After(lastRenewal) {
			lastRenewal = at
		}
	}
	mu.Unlock()
	sortDurations(late)
	sortDurations(began)

	// Baseline: the same due instants, shifted to a second from now; one
	// worker (the controller's count) merge-patches an annotation on each
	// watch when it falls due: the least work a renewal could be.
	shift := time.Now().Add(time.Second).Sub(firstDue)
	order := make([]string, 0, len(due))
	for name := range due {
		order = append(order, name)
	}
	sort.Slice(order, func(i, j int) bool { return due[order[i]].Before(due[order[j]]) })
	baseDue := map[string]time.Time{}
	mu.Lock()
	for _, name := range order {
		baseDue[name] = due[name].Add(shift)
		touchWant[name] = "renew-" + strconv.FormatInt(baseDue[name].UnixMilli(), 10)
	}
	mu.Unlock()
	for _, name := range order {
		time.Sleep(time.Until(baseDue[name]))
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{benchTouch: touchWant[name]}}})
		if err := c.Patch(ctx, &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: benchNS}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return err
		}
	}
	if err := waitFor(touched, "baseline writes seen"); err != nil {
		return err
	}
	mu.Lock()
	baseLate := make([]time.Duration, 0, len(due))
	var lastTouch time.Time
	for name, at := range touched {
		baseLate = append(baseLate, at.Sub(baseDue[name]))
		if at.After(lastTouch) {
			lastTouch = at
		}
	}
	mu.Unlock()
	sortDurations(baseLate)

	n := float64(len(late))
	fmt.Printf("%-66s %9s %9s %9s %9s\n", "lateness (seen in the informer − due)", "min", "p50", "p99", "max")
	row := func(what string, d []time.Duration) {
		fmt.Printf("%-66s %9s %9s %9s %9s\n", what, d[0].Round(time.Millisecond), pctMs(d, 50), pctMs(d, 99), d[len(d)-1].Round(time.Millisecond))
	}
	row("baseline: bare client, 1 worker, 1 annotation patch at each due", baseLate)
	row("controller: channel renewed (status names the new channel)", late)
	row("(controller: renewing reconcile began, from the new channel's id)", began)
	fmt.Printf("ratio controller/baseline: p50 %.1f, p99 %.1f, max %.1f; the last of %d renewed %s after the first due (baseline: its last write %s after)\n",
		ratio(pctD(late, 50), pctD(baseLate, 50)), ratio(pctD(late, 99), pctD(baseLate, 99)), ratio(late[len(late)-1], baseLate[len(baseLate)-1]), len(late),
		lastRenewal.Sub(firstDue).Round(time.Millisecond), lastTouch.Sub(firstDue.Add(shift)).Round(time.Millisecond))
	fmt.Printf("Google calls per renewal: %.2f (events.watch %.2f, channels.stop %.2f, events.list %.2f, token %.2f)\n",
		float64(watchCalls+stops+lists+tokens)/n, float64(watchCalls)/n, float64(stops)/n, float64(lists)/n, float64(tokens)/n)
	fmt.Printf("manager API requests per renewal: %.2f writes (status patches and Events), %.2f reads\n",
		float64(after[1]-before[1])/n, float64(after[0]-before[0])/n)
	fmt.Printf("controller workqueue over the renewals: %.0f reconciles, mean %s waiting in the queue once ready, mean %s reconciling (1 worker: at most %.0f renewals/s)\n",
		items, qWait.Round(100*time.Microsecond), qWork.Round(100*time.Microsecond), float64(time.Second)/float64(max(qWork, time.Microsecond)))
	return nil
}

// benchPush measures the push route against bare-client writes of the same
// count at the same concurrency.
func benchPush(ctx context.Context, c client.Client, rig *calendarRig, names []string, o calendarOptions) error {
	cache := rig.mgr.GetClient()
	type target struct{ channel, token string }
	targets := make([]target, len(names))
	for i, name := range names {
		var w v1alpha1.CalendarWatch
		if err := cache.Get(ctx, types.NamespacedName{Namespace: benchNS, Name: name}, &w); err != nil {
			return err
		}
		var s corev1.Secret
		if err := c.Get(ctx, types.NamespacedName{Namespace: benchNS, Name: calendarwatch.ChannelSecretName(name)}, &s); err != nil {
			return err
		}
		targets[i] = target{channel: w.Status.Channel.ID, token: string(s.Data[calendarwatch.ChannelTokenKey])}
	}
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128, MaxConnsPerHost: 128}}
	url := rig.hookURL + gcalendar.PushPath
	var msg atomic.Int64
	msg.Store(1000)
	var touch atomic.Int64

	bare := func(i int) (bool, error) {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{benchTouch: strconv.FormatInt(touch.Add(1), 10)}}})
		err := c.Patch(ctx, &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Name: names[i%len(names)], Namespace: benchNS}}, client.RawPatch(types.MergePatchType, patch))
		return err == nil, err
	}
	push := func(i int) (bool, error) {
		t := targets[i%len(targets)]
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, http.NoBody)
		if err != nil {
			return false, err
		}
		h := req.Header
		h.Set("X-Goog-Channel-ID", t.channel)
		h.Set("X-Goog-Channel-Token", t.token)
		h.Set("X-Goog-Resource-ID", "bench")
		h.Set("X-Goog-Resource-State", "exists")
		h.Set("X-Goog-Message-Number", strconv.FormatInt(msg.Add(1), 10))
		resp, err := httpc.Do(req)
		if err != nil {
			return false, err
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, nil
		}
		return strings.Contains(string(body), `"accepted":true`), nil
	}

	fmt.Printf("\n3. push route: %d valid notifications per client count, across %d watches (each accepted one is a metadata patch and queues a sync);\n"+
		"   baseline: a bare client merge-patching an annotation (which reconciles nothing) on the same watches, as many, at the same concurrency\n", o.pushes, len(names))
	fmt.Printf("%-8s %14s %10s %10s %14s %10s %10s %8s\n", "clients", "baseline w/s", "p50", "p99", "accepted/s", "p50", "p99", "ratio")
	syncsBefore := rig.box.Calls(sandbox.CalendarEventsList)
	var lastPush time.Time
	var catchUp []string
	for _, clients := range []int{1, 16, 64} {
		// Each run starts with the controller idle: the syncs the last
		// run's notifications queued are not the next baseline's load.
		if err := waitNotificationsHandled(ctx, c, len(names), 3*time.Minute); err != nil {
			return err
		}
		if !lastPush.IsZero() {
			catchUp = append(catchUp, time.Since(lastPush).Round(100*time.Millisecond).String())
		}
		baseRate, baseLat, _, err := drive(clients, o.pushes, bare)
		if err != nil {
			return err
		}
		rate, lat, refused, err := drive(clients, o.pushes, push)
		if err != nil {
			return err
		}
		lastPush = time.Now()
		fmt.Printf("%-8d %14.0f %10s %10s %14.0f %10s %10s %8.2f", clients, baseRate, pctMs(baseLat, 50), pctMs(baseLat, 99), rate, pctMs(lat, 50), pctMs(lat, 99), rate/baseRate)
		if refused > 0 {
			fmt.Printf("   (%d not accepted)", refused)
		}
		fmt.Println()
	}
	// The controller syncs every watch notified; how long it takes to
	// catch up once the pushes stop.
	if err := waitNotificationsHandled(ctx, c, len(names), 3*time.Minute); err != nil {
		return err
	}
	catchUp = append(catchUp, time.Since(lastPush).Round(100*time.Millisecond).String())
	fmt.Printf("controller caught up (every watch synced its last notification) %s after each run's last push (1, 16, 64 clients); %d events.list calls for %d notifications\n",
		strings.Join(catchUp, ", "), rig.box.Calls(sandbox.CalendarEventsList)-syncsBefore, 3*o.pushes)
	return nil
}

// waitNotificationsHandled polls the API server (the manager's cache lags
// seconds behind a burst of pushes) until no watch has a recorded
// notification its status has not handled.
func waitNotificationsHandled(ctx context.Context, api client.Reader, count int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var list v1alpha1.CalendarWatchList
		if err := api.List(ctx, &list, client.InNamespace(benchNS)); err != nil {
			return err
		}
		pending := 0
		for i := range list.Items {
			w := &list.Items[i]
			n, ok := gcalendar.ParseNotification(w.Annotations[v1alpha1.CalendarNotificationAnnotation])
			last := w.Status.LastNotification
			if ok && (last == nil || last.ChannelID != n.ChannelID || last.MessageNumber < n.MessageNumber) {
				pending++
			}
		}
		if pending == 0 && len(list.Items) == count {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d watches still have a notification to sync after %s", pending, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// benchCancel times cancellation → push → sync → appointment deleted, one
// at a time, against a bare client's delete seen by the same watch.
func benchCancel(ctx context.Context, c client.WithWatch, rig *calendarRig, names []string, o calendarOptions) error {
	k := min(o.cancels, len(names))
	events := make([]string, k)
	for i := range k {
		start := time.Now().Add(24 * time.Hour)
		events[i] = rig.cal.CreateEvent(calendarName(i), sandbox.CalendarEvent{Summary: "visit", Start: start, End: start.Add(time.Hour)})
		for _, cm := range []*corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Name: "appt-" + names[i], Namespace: benchNS, Labels: map[string]string{benchLabel: events[i]}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "base-" + names[i], Namespace: benchNS, Labels: map[string]string{benchLabel: "baseline" + strconv.Itoa(i)}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "list-" + names[i], Namespace: benchNS, Labels: map[string]string{benchLabel: "listed" + strconv.Itoa(i)}}},
		} {
			cm.Data = map[string]string{"who": names[i]}
			if err := c.Create(ctx, cm); err != nil {
				return err
			}
		}
	}
	// The creations pushed "exists" too: let those syncs finish first.
	if err := rig.cal.WaitPushesIdle(ctx); err != nil {
		return err
	}
	if err := waitNotificationsHandled(ctx, c, len(names), 2*time.Minute); err != nil {
		return err
	}

	w, err := c.Watch(ctx, &corev1.ConfigMapList{}, client.InNamespace(benchNS), client.HasLabels{benchLabel})
	if err != nil {
		return err
	}
	defer w.Stop()
	var mu sync.Mutex
	gone := map[string]chan time.Time{}
	wait := func(name string) chan time.Time {
		mu.Lock()
		defer mu.Unlock()
		if ch, ok := gone[name]; ok {
			return ch
		}
		ch := make(chan time.Time, 1)
		gone[name] = ch
		return ch
	}
	go func() {
		for ev := range w.ResultChan() {
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Deleted {
				wait(cm.Name) <- time.Now()
			}
		}
	}()
	timed := func(name string, act func() error) (time.Duration, error) {
		ch := wait(name)
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
	// Where the time goes: the sandbox's record of the push (stamped when
	// the webhook answered) and the notification annotation in the cache.
	inf, err := rig.mgr.GetCache().GetInformer(ctx, &v1alpha1.CalendarWatch{})
	if err != nil {
		return err
	}
	armed, noted := map[string]bool{}, map[string]time.Time{}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(old, obj any) {
		o, ok1 := old.(*v1alpha1.CalendarWatch)
		w, ok2 := obj.(*v1alpha1.CalendarWatch)
		if !ok1 || !ok2 || o.Annotations[v1alpha1.CalendarNotificationAnnotation] == w.Annotations[v1alpha1.CalendarNotificationAnnotation] {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if _, done := noted[w.Name]; armed[w.Name] && !done {
			noted[w.Name] = now
		}
	}})
	if err != nil {
		return err
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	pushedAt := func(channel string, after time.Time) time.Time {
		for _, p := range rig.cal.Pushes() {
			if p.ChannelID == channel && p.State == "exists" && p.Status == http.StatusOK && p.Time.After(after) {
				return p.Time
			}
		}
		return time.Time{}
	}

	base := make([]time.Duration, 0, k)
	ctrlLat := make([]time.Duration, 0, k)
	var toPush, toNoted []time.Duration
	for i := range k {
		d, err := timed("base-"+names[i], func() error {
			return c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "base-" + names[i], Namespace: benchNS}})
		})
		if err != nil {
			return err
		}
		base = append(base, d)
	}
	// The least a sync's deletion is: a metadata-only list of the
	// labelled ConfigMaps straight from the API server (a consistent read,
	// as the controller's) and a delete, right after a write elsewhere (the
	// webhook's annotation patch).
	listed := make([]time.Duration, 0, k)
	for i := range k {
		d, err := timed("list-"+names[i], func() error {
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{benchTouch: "list-" + strconv.Itoa(i)}}})
			if err := c.Patch(ctx, &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Name: names[i], Namespace: benchNS}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
				return err
			}
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
			if err := c.List(ctx, list, client.InNamespace(benchNS), client.HasLabels{benchLabel}); err != nil {
				return err
			}
			return c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "list-" + names[i], Namespace: benchNS}})
		})
		if err != nil {
			return err
		}
		listed = append(listed, d)
	}
	for i := range k {
		var w v1alpha1.CalendarWatch
		if err := rig.mgr.GetClient().Get(ctx, types.NamespacedName{Namespace: benchNS, Name: names[i]}, &w); err != nil {
			return err
		}
		mu.Lock()
		armed[names[i]] = true
		mu.Unlock()
		t0 := time.Now()
		d, err := timed("appt-"+names[i], func() error { return rig.cal.CancelEvent(calendarName(i), events[i]) })
		if err != nil {
			return err
		}
		ctrlLat = append(ctrlLat, d)
		if at := pushedAt(w.Status.Channel.ID, t0); !at.IsZero() {
			toPush = append(toPush, at.Sub(t0))
		}
		mu.Lock()
		if at, ok := noted[names[i]]; ok {
			toNoted = append(toNoted, at.Sub(t0))
		}
		mu.Unlock()
	}
	sortDurations(toPush)
	sortDurations(toNoted)
	sortDurations(base)
	sortDurations(listed)
	sortDurations(ctrlLat)
	fmt.Printf("\n2. cancellation → appointment deleted: %d events cancelled one at a time in the sandbox (push → webhook → sync → delete), deletion seen on a watch\n", k)
	fmt.Printf("%-66s %9s %9s %9s\n", "", "p50", "p95", "max")
	fmt.Printf("%-66s %9s %9s %9s\n", "baseline: bare client deletes the ConfigMap", pctMs(base, 50), pctMs(base, 95), base[len(base)-1].Round(100*time.Microsecond))
	fmt.Printf("%-66s %9s %9s %9s\n", "baseline: bare client patches a watch, lists (consistent), deletes", pctMs(listed, 50), pctMs(listed, 95), listed[len(listed)-1].Round(100*time.Microsecond))
	fmt.Printf("%-66s %9s %9s %9s\n", "controller: event cancelled → its ConfigMap deleted", pctMs(ctrlLat, 50), pctMs(ctrlLat, 95), ctrlLat[len(ctrlLat)-1].Round(100*time.Microsecond))
	fmt.Printf("ratio controller/baseline: p50 %.1f, p95 %.1f (to patch+list+delete: p50 %.1f, p95 %.1f)\n", ratio(pctD(ctrlLat, 50), pctD(base, 50)), ratio(pctD(ctrlLat, 95), pctD(base, 95)),
		ratio(pctD(ctrlLat, 50), pctD(listed, 50)), ratio(pctD(ctrlLat, 95), pctD(listed, 95)))
	fmt.Printf("   of which: cancellation → webhook answered the push p50 %s (%d seen); → notification annotation in the manager's cache p50 %s (%d seen)\n",
		pctMs(toPush, 50), len(toPush), pctMs(toNoted, 50), len(toNoted))
	return nil
}

// queueStats are the CalendarWatch controller's workqueue histograms
// (controller-runtime's metrics registry, in process): seconds waited in
// the queue once ready, and seconds reconciling, summed, and their count.
type queueStats struct{ waitSum, workSum, waits, works float64 }

func calendarQueue() queueStats {
	var q queueStats
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return q
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			named := false
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == "calendarwatch" {
					named = true
				}
			}
			if !named || m.GetHistogram() == nil {
				continue
			}
			h := m.GetHistogram()
			switch mf.GetName() {
			case "workqueue_queue_duration_seconds":
				q.waitSum, q.waits = h.GetSampleSum(), float64(h.GetSampleCount())
			case "workqueue_work_duration_seconds":
				q.workSum, q.works = h.GetSampleSum(), float64(h.GetSampleCount())
			}
		}
	}
	return q
}

// since is what was added between two readings: items, mean wait, mean
// work.
func (q queueStats) since(before queueStats) (items float64, wait, work time.Duration) {
	items = q.works - before.works
	if n := q.waits - before.waits; n > 0 {
		wait = time.Duration((q.waitSum - before.waitSum) / n * float64(time.Second))
	}
	if items > 0 {
		work = time.Duration((q.workSum - before.workSum) / items * float64(time.Second))
	}
	return items, wait, work
}
