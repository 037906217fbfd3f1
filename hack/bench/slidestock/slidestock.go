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

// Package slidestock is the SlideStock benchmarks, on a real
// kube-apiserver and etcd (envtest):
//
//   - slidestock: a bare client creates N stocks and patches each one's
//     status to Ready itself (the least work any controller could do),
//     against the same N creates with the real manager binary — default
//     settings, fetching from an instant in-process sandbox — taking every
//     stock to Ready. It prints both times and their ratio, the manager's
//     status writes per stock (from its own client metrics), and the
//     manager's peak RSS at N and at a larger M stocks;
//   - shards: SlideStocks reconciled by two sharded managers against one.
package slidestock

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// Suite is the SlideStock benchmark (-suite slidestock).
type Suite struct{ n, m int }

// Name is the suite's -suite name.
func (*Suite) Name() string { return "slidestock" }

// BindFlags registers -n and -m.
func (s *Suite) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.n, "n", 1000, "Stocks in the timed comparison.")
	fs.IntVar(&s.m, "m", 10000, "Stocks for the second RSS reading (0 skips it).")
}

// Run runs the benchmark, and stops the manager it started before it
// returns: the suites after it would find it reconciling their objects.
func (s *Suite) Run(e bench.Env) error {
	stop, err := benchSlideStock(e.ControlPlane, e.Config, e.Bin, slideOptions{n: s.n, m: s.m, creators: e.Creators})
	stop()
	return err
}

// slideOptions size the SlideStock benchmark: n stocks timed against the
// baseline, the manager's peak RSS at n and at m, creators concurrent
// clients.
type slideOptions struct{ n, m, creators int }

// slideRun is what the SlideStock benchmark measured.
type slideRun struct {
	base, ctrl time.Duration
	// lag is from the last create to the last stock Ready.
	lag                       time.Duration
	writesBefore, writesAfter map[string]float64
	rss                       int64
	fetches                   int
}

// benchSlideStock runs the SlideStock benchmark: the baseline, then the
// manager binary (started here) on the same count, then m stocks for the
// second RSS reading. stop stops the manager and the sandbox; it is never
// nil, and may be called more than once.
func benchSlideStock(env *envtest.Environment, cfg *rest.Config, bin string, o slideOptions) (stop func(), err error) {
	ctx := context.Background()
	// An instant sandbox: the deck is known, answers come from memory.
	box := sandbox.New(sandbox.NewSpeakerDeck())
	srv := httptest.NewServer(box)
	var mgr *local.Process
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if mgr != nil {
				mgr.Stop(10 * time.Second)
			}
			srv.Close()
		})
	}
	c, err := client.New(cfg, client.Options{Scheme: setup.Scheme()})
	if err != nil {
		return stop, err
	}
	fmt.Printf("SlideStock benchmark: N=%d, creators=%d, kube-apiserver and etcd from envtest, sandbox in process\n\n", o.n, o.creators)

	// Baseline: a bare client creates and patches.
	var r slideRun
	if r.base, err = bench.Timed(func() error { return createAll(ctx, c, "bench-baseline", o.n, o.creators, true) }); err != nil {
		return stop, fmt.Errorf("baseline: %w", err)
	}
	if err := c.DeleteAllOf(ctx, &v1alpha1.SlideStock{}, client.InNamespace("bench-baseline")); err != nil {
		return stop, err
	}

	// The manager, as a separate process with default settings.
	var metricsURL string
	if mgr, metricsURL, err = bench.StartManager(ctx, env, bin, srv.URL); err != nil {
		return stop, err
	}
	if err := r.measure(ctx, c, mgr, metricsURL, o); err != nil {
		return stop, err
	}
	r.fetches = box.Calls(sandbox.SpeakerDeckOEmbed)
	r.report(o.n)
	return stop, moreStocks(ctx, c, mgr, o)
}

// measure times the manager taking n new stocks to Ready, and reads its
// API writes around that and its peak RSS after.
func (r *slideRun) measure(ctx context.Context, c client.Client, mgr *local.Process, metricsURL string, o slideOptions) error {
	var err error
	if r.writesBefore, err = bench.APIWrites(metricsURL); err != nil {
		return err
	}
	var createsDone time.Time
	r.ctrl, err = bench.Timed(func() error {
		if err := createAll(ctx, c, "bench-controller", o.n, o.creators, false); err != nil {
			return err
		}
		createsDone = time.Now()
		return waitReady(ctx, c, "bench-controller", o.n, 50*time.Millisecond)
	})
	r.lag = time.Since(createsDone)
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if r.writesAfter, err = bench.APIWrites(metricsURL); err != nil {
		return err
	}
	r.rss = mgr.PeakRSS()
	return nil
}

// report prints the SlideStock benchmark's figures for n stocks.
func (r *slideRun) report(n int) {
	fmt.Printf("%-52s %10s %12s\n", "", "time", "stocks/s")
	fmt.Printf("%-52s %10s %12.0f\n", fmt.Sprintf("baseline: bare client, %d creates + %d status patches", n, n), r.base.Round(time.Millisecond), float64(n)/r.base.Seconds())
	fmt.Printf("%-52s %10s %12.0f\n", fmt.Sprintf("controller: %d creates, manager takes all to Ready", n), r.ctrl.Round(time.Millisecond), float64(n)/r.ctrl.Seconds())
	fmt.Printf("ratio controller/baseline: %.2f (target ≤ 1.5)\n", r.ctrl.Seconds()/r.base.Seconds())
	fmt.Printf("last stock Ready %s after the last create (includes the 50 ms polling of this program)\n\n", r.lag.Round(time.Millisecond))
	patches := r.writesAfter["PATCH"] - r.writesBefore["PATCH"]
	total := 0.0
	for method, v := range r.writesAfter {
		total += v - r.writesBefore[method]
	}
	fmt.Printf("manager API writes per stock: %.2f status patches, %.2f writes in all (target: 1 status write Pending→Ready)\n", patches/float64(n), total/float64(n))
	fmt.Printf("upstream fetches per stock: %.2f\n", float64(r.fetches)/float64(n))
	fmt.Printf("manager peak RSS at %d stocks: %.1f MiB\n", n, float64(r.rss)/(1<<20))
}

// moreStocks takes the manager to m stocks in all, when m is more than n,
// and prints its peak RSS then.
func moreStocks(ctx context.Context, c client.Client, mgr *local.Process, o slideOptions) error {
	if o.m <= o.n {
		return nil
	}
	more, err := bench.Timed(func() error {
		if err := createAll(ctx, c, "bench-more", o.m-o.n, o.creators, false); err != nil {
			return err
		}
		return waitReady(ctx, c, "bench-more", o.m-o.n, 50*time.Millisecond)
	})
	if err != nil {
		return fmt.Errorf("%d stocks: %w", o.m, err)
	}
	fmt.Printf("manager peak RSS at %d stocks: %.1f MiB (%d more stocks Ready in %s)\n", o.m, float64(mgr.PeakRSS())/(1<<20), o.m-o.n, more.Round(time.Millisecond))
	return nil
}

// createAll creates count stocks with `creators` clients; with patch, each
// client then writes the Ready status the controller would have written.
func createAll(ctx context.Context, c client.Client, ns string, count, creators int, patch bool) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	return bench.Parallel(count, creators, func(i int) error {
		s := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("deck-%05d", i+1), Namespace: ns}}
		s.Spec.URL = bench.DeckURL
		if err := c.Create(ctx, s); err != nil || !patch {
			return err
		}
		p := status.NewPatcher(c, s)
		st := &s.Status
		st.Phase, st.Provider, st.ObservedURL, st.CanonicalURL = v1alpha1.SlideReady, v1alpha1.ProviderSpeakerDeck, bench.DeckURL, bench.DeckURL
		st.Title, st.AuthorName, st.EmbedURL, st.Attempts = "Atom", "John Nunemaker", "https://speakerdeck.com/player/31f86a9069ae0132dede22511952b5a3", 1
		now := metav1.Now()
		st.LastFetchedAt = &now
		status.MarkReady(s, v1alpha1.SucceededReason, "embed URL from SpeakerDeck")
		return p.Patch(ctx, s)
	})
}

// waitReady polls, every every, until count SlideStocks in ns are Ready,
// listing them 2,000 at a time.
func waitReady(ctx context.Context, c client.Client, ns string, count int, every time.Duration) error {
	return poll.Until(ctx, "", every, 10*time.Minute, func() (bool, error) {
		ready, next := 0, ""
		for {
			var list v1alpha1.SlideStockList
			if err := c.List(ctx, &list, client.InNamespace(ns), client.Limit(2000), client.Continue(next)); err != nil {
				return false, poll.Stop(err)
			}
			for i := range list.Items {
				if list.Items[i].Status.Phase == v1alpha1.SlideReady {
					ready++
				}
			}
			if next = list.Continue; next == "" {
				break
			}
		}
		return ready == count, fmt.Errorf("%d of %d Ready", ready, count)
	})
}
