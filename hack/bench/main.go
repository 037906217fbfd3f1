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

// Command bench measures the SlideStock controller against a baseline in
// the same run, on a real kube-apiserver and etcd (envtest):
//
//   - baseline: a bare client creates N stocks and patches each one's
//     status to Ready itself (the least work any controller could do);
//   - controller: the same N creates, and the real manager binary — default
//     settings, fetching from an instant in-process sandbox — takes every
//     stock to Ready.
//
// It prints both times and their ratio, the manager's status writes per
// stock (from its own client metrics), and the manager's peak RSS at N and
// at a larger M stocks.
//
// Other suites (-suite notion, papersync, calendar; all runs every one):
// calendar.go measures CalendarWatch renewal lateness, cancellation →
// appointment deleted, and the Google push route's throughput; sheets.go
// (-suite sheets) the Sheets ingest route against bare SheetSync creates,
// the values.append calls and the drain of 1,000 sessions into the sheet;
// receive.go (-suite receive) the share-link resolve route against a bare
// cached Get, and 10,000 links expiring in one minute on versitygw.
//
//	go run ./hack/bench --bin bin --n 1000 --m 10000
//	go run ./hack/bench -suite calendar -cal-watches 200
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/status"
)

const deckURL = "https://speakerdeck.com/jnunemaker/atom"

func main() {
	bin := flag.String("bin", "bin", "Directory holding the manager binary.")
	n := flag.Int("n", 1000, "Stocks in the timed comparison.")
	m := flag.Int("m", 10000, "Stocks for the second RSS reading (0 skips it).")
	creators := flag.Int("creators", 16, "Concurrent clients creating stocks (both runs).")
	suite := flag.String("suite", "all", "Which benchmark: slidestock, notion, papersync, calendar, sheets, receive or all.")
	requests := flag.Int("requests", 2000, "Notion webhook events per client count.")
	pages := flag.Int("pages", 100, "Notion events timed from webhook to filled page.")
	syncs := flag.Int("syncs", 1000, "PaperSyncs in the drain compared with the bare-client baseline.")
	sizes := flag.String("sync-sizes", "500,5000", "PaperSync bursts on one integration whose cost per sync is compared.")
	calWatches := flag.Int("cal-watches", 1000, "CalendarWatches whose channels fall due for renewal together (also the push targets).")
	calPushes := flag.Int("cal-pushes", 1000, "Google Calendar push notifications per client count (and as many baseline writes).")
	calCancels := flag.Int("cal-cancels", 100, "Calendar events cancelled one at a time, timed until their appointment is deleted.")
	calBudget := flag.Duration("cal-open-budget", 0, "Time the manager gets to open every watch's first channel (0: 30 s + 60 ms per watch).")
	linkResolves := flag.Int("link-resolves", 2000, "Share-link resolves per client count (and as many baseline cached Gets).")
	links := flag.Int("links", 100, "ReceiveLinks the resolves are spread over.")
	linkExpiries := flag.Int("link-expiries", 10000, "ReceiveLinks expiring within -link-window, their blobs on versitygw.")
	linkWindow := flag.Duration("link-window", time.Minute, "The window the -link-expiries links expire in.")
	linkBudget := flag.Duration("link-budget", 0, "Time the manager gets to mint every expiring link before the first expires (0: 60 s + 20 ms per link).")
	linkWorkers := flag.Int("link-workers", 0, "The manager's --link-workers (0: its default).")
	sheetSessions := flag.Int("sheet-sessions", 1000, "Sessions posted to the Sheets ingest route by -creators clients (and as many baseline SheetSync creates).")
	flag.Parse()
	// The in-process managers log nothing: the figures are the output.
	ctrl.SetLogger(logr.Discard())
	var syncSizes []int
	for _, f := range strings.Split(*sizes, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			fmt.Fprintln(os.Stderr, "bench: -sync-sizes wants positive numbers separated by commas")
			os.Exit(2)
		}
		syncSizes = append(syncSizes, v)
	}
	papersync := func(cfg *rest.Config) error { return benchPaperSync(cfg, *syncs, syncSizes, *creators) }
	if *calBudget <= 0 {
		*calBudget = 30*time.Second + time.Duration(*calWatches)*60*time.Millisecond
	}
	calendar := func(cfg *rest.Config) error {
		return benchCalendar(cfg, calendarOptions{watches: *calWatches, pushes: *calPushes, cancels: *calCancels, openBudget: *calBudget})
	}
	sheets := func(cfg *rest.Config) error { return benchSheets(cfg, *sheetSessions, *creators) }
	if *linkBudget <= 0 {
		*linkBudget = time.Minute + time.Duration(*linkExpiries)*20*time.Millisecond
	}
	receive := func(cfg *rest.Config) error {
		return benchReceive(cfg, receiveOptions{resolves: *linkResolves, links: *links, expiries: *linkExpiries, budget: *linkBudget, window: *linkWindow, workers: *linkWorkers})
	}
	if err := run(*bin, *n, *m, *creators, *suite, *requests, *pages, papersync, calendar, sheets, receive); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(bin string, n, m, creators int, suite string, requests, pages int, papersync, calendar, sheets, receive func(*rest.Config) error) error {
	ctx := context.Background()
	scheme := setup.Scheme()
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("config", "crd", "bases")}, ErrorIfCRDPathMissing: true, Scheme: scheme}
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("start envtest: %w", err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: stop control plane:", err)
		}
	}()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1 // no client-side throttling, as the manager (controller-runtime's default)
	switch suite {
	case "notion":
		return benchNotion(cfg, requests, pages)
	case "papersync":
		return papersync(cfg)
	case "calendar":
		return calendar(cfg)
	case "sheets":
		return sheets(cfg)
	case "receive":
		return receive(cfg)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}

	// An instant sandbox: the deck is known, answers come from memory.
	box := sandbox.New(sandbox.NewSpeakerDeck())
	srv := httptest.NewServer(box)
	defer srv.Close()

	fmt.Printf("SlideStock benchmark: N=%d, creators=%d, kube-apiserver and etcd from envtest, sandbox in process\n\n", n, creators)

	// Baseline: a bare client creates and patches.
	base, err := timed(func() error { return createAll(ctx, c, "bench-baseline", n, creators, true) })
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	if err := c.DeleteAllOf(ctx, &v1alpha1.SlideStock{}, client.InNamespace("bench-baseline")); err != nil {
		return err
	}

	// The manager, as a separate process with default settings.
	mgr, metricsURL, err := startManager(ctx, env, bin, srv.URL)
	if err != nil {
		return err
	}
	var once sync.Once
	stopManager := func() { once.Do(mgr.Stop) }
	defer stopManager()
	writesBefore, err := apiWrites(metricsURL)
	if err != nil {
		return err
	}
	var createsDone time.Time
	ctrlTime, err := timed(func() error {
		if err := createAll(ctx, c, "bench-controller", n, creators, false); err != nil {
			return err
		}
		createsDone = time.Now()
		return waitReady(ctx, c, "bench-controller", n)
	})
	lag := time.Since(createsDone)
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	writesAfter, err := apiWrites(metricsURL)
	if err != nil {
		return err
	}
	rssN := mgr.PeakRSS()
	fetches := box.Calls(sandbox.SpeakerDeckOEmbed)

	fmt.Printf("%-52s %10s %12s\n", "", "time", "stocks/s")
	fmt.Printf("%-52s %10s %12.0f\n", fmt.Sprintf("baseline: bare client, %d creates + %d status patches", n, n), base.Round(time.Millisecond), float64(n)/base.Seconds())
	fmt.Printf("%-52s %10s %12.0f\n", fmt.Sprintf("controller: %d creates, manager takes all to Ready", n), ctrlTime.Round(time.Millisecond), float64(n)/ctrlTime.Seconds())
	fmt.Printf("ratio controller/baseline: %.2f (target ≤ 1.5)\n", ctrlTime.Seconds()/base.Seconds())
	fmt.Printf("last stock Ready %s after the last create (includes the 50 ms polling of this program)\n\n", lag.Round(time.Millisecond))
	patches := writesAfter["PATCH"] - writesBefore["PATCH"]
	total := 0.0
	for method, v := range writesAfter {
		total += v - writesBefore[method]
	}
	fmt.Printf("manager API writes per stock: %.2f status patches, %.2f writes in all (target: 1 status write Pending→Ready)\n", patches/float64(n), total/float64(n))
	fmt.Printf("upstream fetches per stock: %.2f\n", float64(fetches)/float64(n))
	fmt.Printf("manager peak RSS at %d stocks: %.1f MiB\n", n, float64(rssN)/(1<<20))

	if m > n {
		more, err := timed(func() error {
			if err := createAll(ctx, c, "bench-more", m-n, creators, false); err != nil {
				return err
			}
			return waitReady(ctx, c, "bench-more", m-n)
		})
		if err != nil {
			return fmt.Errorf("%d stocks: %w", m, err)
		}
		fmt.Printf("manager peak RSS at %d stocks: %.1f MiB (%d more stocks Ready in %s)\n", m, float64(mgr.PeakRSS())/(1<<20), m-n, more.Round(time.Millisecond))
	}
	if suite == "all" {
		// The manager binary would reconcile the Notion benchmark's objects
		// too (against the wrong sandbox): stop it first.
		stopManager()
		if err := benchNotion(cfg, requests, pages); err != nil {
			return err
		}
		if err := papersync(cfg); err != nil {
			return err
		}
		if err := calendar(cfg); err != nil {
			return err
		}
		if err := sheets(cfg); err != nil {
			return err
		}
		return receive(cfg)
	}
	return nil
}

func setupScheme() *runtime.Scheme { return setup.Scheme() }

func timed(f func() error) (time.Duration, error) {
	began := time.Now()
	err := f()
	return time.Since(began), err
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

func waitReady(ctx context.Context, c client.Client, ns string, count int) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var list v1alpha1.SlideStockList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		ready := 0
		for i := range list.Items {
			if list.Items[i].Status.Phase == v1alpha1.SlideReady {
				ready++
			}
		}
		if ready == count {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d Ready after 10 minutes", ready, count)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func startManager(ctx context.Context, env *envtest.Environment, bin, sandboxURL string) (*local.Process, string, error) {
	dir, err := os.MkdirTemp("", "switchboard-bench")
	if err != nil {
		return nil, "", err
	}
	kcPath, err := local.Kubeconfig(env, dir, "bench-manager")
	if err != nil {
		return nil, "", err
	}
	ports, err := local.FreePorts(2)
	if err != nil {
		return nil, "", err
	}
	args := []string{"--kubeconfig", kcPath, "--metrics-bind-address", ports[0], "--health-probe-bind-address", ports[1]}
	for _, f := range sandbox.UpstreamFlags(sandboxURL) {
		args = append(args, "--upstream", f)
	}
	p, err := local.Start(bin, dir, "manager", args...)
	if err != nil {
		return nil, "", err
	}
	if err := local.WaitOK(ctx, "http://"+ports[1]+"/readyz", 30*time.Second); err != nil {
		p.Stop()
		return nil, "", fmt.Errorf("manager (log %s): %w", p.Log, err)
	}
	return p, "http://" + ports[0] + "/metrics", nil
}

// apiWrites sums the manager's rest_client_requests_total by method, for
// the write methods.
func apiWrites(metricsURL string) (map[string]float64, error) {
	resp, err := http.Get(metricsURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			if strings.Contains(line, `method="`+method+`"`) {
				v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
				if err == nil {
					out[method] += v
				}
			}
		}
	}
	return out, sc.Err()
}
