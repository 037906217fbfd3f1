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
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/status"
)

const deckURL = "https://speakerdeck.com/jnunemaker/atom"

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
	c, err := client.New(cfg, client.Options{Scheme: setupScheme()})
	if err != nil {
		return stop, err
	}
	fmt.Printf("SlideStock benchmark: N=%d, creators=%d, kube-apiserver and etcd from envtest, sandbox in process\n\n", o.n, o.creators)

	// Baseline: a bare client creates and patches.
	var r slideRun
	if r.base, err = timed(func() error { return createAll(ctx, c, "bench-baseline", o.n, o.creators, true) }); err != nil {
		return stop, fmt.Errorf("baseline: %w", err)
	}
	if err := c.DeleteAllOf(ctx, &v1alpha1.SlideStock{}, client.InNamespace("bench-baseline")); err != nil {
		return stop, err
	}

	// The manager, as a separate process with default settings.
	var metricsURL string
	if mgr, metricsURL, err = startManager(ctx, env, bin, srv.URL); err != nil {
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
	if r.writesBefore, err = apiWrites(metricsURL); err != nil {
		return err
	}
	var createsDone time.Time
	r.ctrl, err = timed(func() error {
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
	if r.writesAfter, err = apiWrites(metricsURL); err != nil {
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
	more, err := timed(func() error {
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
	return parallel(count, creators, func(i int) error {
		s := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("deck-%05d", i+1), Namespace: ns}}
		s.Spec.URL = deckURL
		if err := c.Create(ctx, s); err != nil || !patch {
			return err
		}
		p := status.NewPatcher(c, s)
		st := &s.Status
		st.Phase, st.Provider, st.ObservedURL, st.CanonicalURL = v1alpha1.SlideReady, v1alpha1.ProviderSpeakerDeck, deckURL, deckURL
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

// startManager starts the manager binary with default settings (and
// extra flags), pointed at the sandbox, and waits until it is ready; it
// returns the process and the URL of its metrics.
func startManager(ctx context.Context, env *envtest.Environment, bin, sandboxURL string, extra ...string) (*local.Process, string, error) {
	ports, err := local.FreePorts("127.0.0.1", 2)
	if err != nil {
		return nil, "", err
	}
	args := append([]string{"--metrics-bind-address", ports[0]}, extra...)
	for _, f := range sandbox.UpstreamFlags(sandboxURL) {
		args = append(args, "--upstream", f)
	}
	p, err := startBinary(ctx, env, bin, "manager", ports[1], 30*time.Second, nil, args...)
	if err != nil {
		return nil, "", err
	}
	return p, "http://" + ports[0] + "/metrics", nil
}

// startBinary starts the binary name of bin with a kubeconfig of its own
// (in a new directory, which also holds its log) and its probes on
// readyAddr, in this process's environment plus environ (may be nil), and
// waits at most wait until it is ready.
func startBinary(ctx context.Context, env *envtest.Environment, bin, name, readyAddr string, wait time.Duration, environ []string, args ...string) (*local.Process, error) {
	dir, err := os.MkdirTemp("", "switchboard-bench-"+name)
	if err != nil {
		return nil, err
	}
	kc, err := local.Kubeconfig(env, dir, "bench-"+name)
	if err != nil {
		return nil, err
	}
	p, err := local.Start(bin, dir, name, environ, append([]string{"--kubeconfig", kc, "--health-probe-bind-address", readyAddr}, args...)...)
	if err != nil {
		return nil, err
	}
	if err := local.WaitOK(ctx, "http://"+readyAddr+"/readyz", wait); err != nil {
		p.Stop(10 * time.Second)
		return nil, fmt.Errorf("%s (log %s): %w", name, p.Log, err)
	}
	return p, nil
}

// apiWrites sums the manager's rest_client_requests_total by method, for
// the write methods.
func apiWrites(metricsURL string) (map[string]float64, error) {
	out := map[string]float64{}
	err := scrape(metricsURL, func(line string) {
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			return
		}
		for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			if strings.Contains(line, `method="`+method+`"`) {
				if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
					out[method] += v
				}
			}
		}
	})
	return out, err
}

// metricValue is the value of the unlabelled metric name at metricsURL.
func metricValue(metricsURL, name string) (float64, error) {
	v, found := 0.0, false
	err := scrape(metricsURL, func(line string) {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			var perr error
			v, perr = strconv.ParseFloat(rest, 64)
			found = perr == nil
		}
	})
	if err == nil && !found {
		err = fmt.Errorf("%s has no %s", metricsURL, name)
	}
	return v, err
}

// scrape hands each line of the Prometheus text at metricsURL to f; a
// page answered with another status than 200 is an error.
func scrape(metricsURL string, f func(line string)) error {
	resp, err := http.Get(metricsURL)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", metricsURL, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f(sc.Text())
	}
	return sc.Err()
}
