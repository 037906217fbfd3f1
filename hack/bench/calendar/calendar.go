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

// Package calendar is the CalendarWatch benchmark (-suite calendar):
// renewal lateness of channels due together (renewal.go), cancellation →
// appointment deleted (cancel.go), and the Google push route's throughput
// (push.go), each against a bare client in the same run.
package calendar

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/contract/calendarpush"
	"github.com/switchboard-dev/switchboard/internal/controller/calendarwatch"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// Suite is the CalendarWatch benchmark (-suite calendar).
type Suite struct{ o calendarOptions }

// Name is the suite's -suite name.
func (*Suite) Name() string { return "calendar" }

// BindFlags registers the -cal- flags.
func (s *Suite) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.o.watches, "cal-watches", 10000, "CalendarWatches whose channels fall due for renewal together (also the push targets).")
	fs.IntVar(&s.o.pushes, "cal-pushes", 1000, "Google Calendar push notifications per client count (and as many baseline writes).")
	fs.IntVar(&s.o.cancels, "cal-cancels", 100, "Calendar events cancelled one at a time, timed until their appointment is deleted.")
	fs.DurationVar(&s.o.openBudget, "cal-open-budget", 0, "Time the manager gets to open every watch's first channel (0: 30 s + 45 ms per watch, and 12 min more with -cal-skip-renewal, for the steps that run before the renewals).")
	fs.BoolVar(&s.o.skipRenewal, "cal-skip-renewal", false, "Leave the renewal benchmark out: the cancellation and push benchmarks start once the channels are open; the renewals still begin when -cal-open-budget ends, so give it room for both (a renewal during the pushes refuses those on the replaced channels).")
	fs.IntVar(&s.o.workers, "cal-workers", 0, "The CalendarWatch controller's --calendarwatch-workers, and the renewal baseline's writers (0: its default).")
}

// Run runs the three CalendarWatch benchmarks.
func (s *Suite) Run(e bench.Env) error {
	o := s.o
	if o.openBudget <= 0 {
		o.openBudget = 30*time.Second + time.Duration(o.watches)*45*time.Millisecond
		if o.skipRenewal {
			// The cancellation and push steps run inside the budget:
			// at 10,000 watches the first channels took 7m47s of its
			// 8m, and the renewals began under the cancellations.
			o.openBudget += 12 * time.Minute
		}
	}
	return benchCalendar(e.Config, o)
}

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
	// workers is the controller's --calendarwatch-workers (0: its
	// default), and the baseline's writers.
	workers int
	// skipRenewal leaves the renewal benchmark out (the cancellation and
	// push benchmarks run once the channels are open).
	skipRenewal bool
}

// The benchmark's watches renew renewBefore ahead of an expiration they all
// share, spread by up to a tenth of it (renewAt): every renewal due within
// benchRenewSpread, a minute.
const (
	benchRenewBefore = 10 * time.Minute
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
// controller in an in-process manager, and the webhook server's routes on
// a loopback listener.
type calendarRig struct {
	*bench.Rig
	// workers is the controller's worker count.
	workers int
	google  *sandbox.GoogleOAuth
	cal     *sandbox.GoogleCalendar
	// frozen, when not zero, is the sandbox calendar's clock (Unix ms).
	frozen atomic.Int64
}

func startCalendarRig(ctx context.Context, cfg *rest.Config, workers int) (*calendarRig, error) {
	r := &calendarRig{google: sandbox.NewGoogleOAuth(), workers: wire.Workers{N: workers}.Or(calendarwatch.DefaultWorkers)}
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
	if r.Rig, err = bench.NewRig(ctx, cfg, sandbox.New(r.google, r.cal), &bench.APICounter{}, func(rig *bench.Rig) wire.Operator {
		return wire.Operator{Kinds: []wire.Kind{&calendarwatch.Controller{Workers: wire.Workers{N: r.workers}}}, Deps: wire.Deps{PublicURL: rig.HookURL}}
	}); err != nil {
		r.cal.Close()
		return nil, err
	}
	stopRig := r.Close
	r.Close = func() { r.cal.Close(); stopRig() }
	return r, r.Start(ctx)
}

func channelSeqTime(id string) time.Time {
	_, seq, _ := calendarpush.ParseChannelID(id)
	return time.UnixMilli(seq)
}

// benchCalendar runs the three CalendarWatch benchmarks.
func benchCalendar(cfg *rest.Config, o calendarOptions) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctrl.SetLogger(logr.Discard())
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: setup.Scheme()})
	if err != nil {
		return err
	}
	rig, err := startCalendarRig(ctx, cfg, o.workers)
	if err != nil {
		return err
	}
	defer rig.Close()
	fmt.Printf("\nCalendarWatch: %d watches in one namespace (one calendar and token Secret each, one client Secret), instant sandbox with its push sender,\n"+
		"controller in process (%d workers), webhook on loopback with the per-client rate limit off, real API server\n", o.watches, rig.workers)

	names, err := createWatches(ctx, c, rig, o)
	if err != nil {
		return err
	}
	if !o.skipRenewal {
		if err := benchRenewal(ctx, c, rig); err != nil {
			return fmt.Errorf("renewal: %w", err)
		}
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

func watchName(i int) string { return fmt.Sprintf("w%04d", i) }

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
	err := bench.Parallel(o.watches, 16, func(i int) error {
		names[i] = watchName(i)
		rig.cal.AddCalendar(bench.CalendarName(i))
		tok := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tok-" + names[i], Namespace: benchNS},
			StringData: map[string]string{"refresh_token": rig.google.IssueRefreshToken("bench-client", targets.CalendarScope)}}
		if err := c.Create(ctx, tok); err != nil {
			return err
		}
		w := &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Name: names[i], Namespace: benchNS}}
		w.Spec.CalendarID = bench.CalendarName(i)
		w.Spec.OAuth.ClientSecretRef.Name, w.Spec.OAuth.TokenSecretRef.Name = "google-client", tok.Name
		w.Spec.Sink.Objects = &v1alpha1.ObjectSink{APIVersion: "v1", Kind: "ConfigMap"}
		w.Spec.Channel.TTL, w.Spec.Channel.RenewBefore = metav1.Duration{Duration: time.Hour}, metav1.Duration{Duration: benchRenewBefore}
		return c.Create(ctx, w)
	})
	if err != nil {
		return nil, err
	}
	created := time.Since(began)
	if err := waitOpen(ctx, rig, o, expire.Add(-benchRenewBefore-benchRenewSpread)); err != nil {
		return nil, err
	}
	fmt.Printf("setup: %d watches created in %s (16 clients); all first channels open %s after the first create\n",
		o.watches, created.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	return names, nil
}

// waitOpen waits until every watch has its first channel, which must be
// before the first renewals fall due. It counts from the manager's
// informer: listing 10,000 watches from the cache every poll would cost
// the process more than the controller it measures.
func waitOpen(ctx context.Context, rig *calendarRig, o calendarOptions, firstDue time.Time) error {
	inf, err := rig.Mgr.GetCache().GetInformer(ctx, &v1alpha1.CalendarWatch{})
	if err != nil {
		return err
	}
	var mu sync.Mutex
	opened := map[string]bool{}
	seen := func(obj any) {
		if w, ok := obj.(*v1alpha1.CalendarWatch); ok && w.Namespace == benchNS && w.Status.Channel != nil {
			mu.Lock()
			opened[w.Name] = true
			mu.Unlock()
		}
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) }})
	if err != nil {
		return err
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	open := 0
	if poll.Until(ctx, "", 50*time.Millisecond, time.Until(firstDue), func() (bool, error) {
		mu.Lock()
		open = len(opened)
		mu.Unlock()
		return open == o.watches, nil
	}) != nil {
		return fmt.Errorf("%d of %d channels open when the first renewals fall due: raise -cal-open-budget (now %s)", open, o.watches, o.openBudget)
	}
	return nil
}
