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
// slidestock.go is that benchmark. Other suites (-suite notion, papersync,
// calendar; all runs every one): calendar*.go measure CalendarWatch renewal
// lateness, cancellation → appointment deleted, and the Google push
// route's throughput; sheets.go (-suite sheets) the Sheets ingest route
// against bare SheetSync creates, the values.append calls and the drain of
// 1,000 sessions into the sheet; receive*.go (-suite receive) the
// share-link resolve route against a bare cached Get, and 10,000 links
// expiring in one minute on versitygw; tokens*.go (-suite tokens) OAuth
// token refreshes of 10,000 NotionIntegrations and 10,000 SheetConnections
// falling due within one minute; memory.go (-suite memory) the manager's
// and the webhook's memory at 1,000 and 10,000 objects of every kind at
// once against the idle binaries; shards.go (-suite shards) 10,000
// SlideStocks reconciled by two sharded managers against one.
//
//	go run ./hack/bench --bin bin --n 1000 --m 10000
//	go run ./hack/bench -suite calendar -cal-watches 200
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/switchboard-dev/switchboard/internal/setup"
)

func main() {
	bin := flag.String("bin", "bin", "Directory holding the manager binary.")
	n := flag.Int("n", 1000, "Stocks in the timed comparison.")
	m := flag.Int("m", 10000, "Stocks for the second RSS reading (0 skips it).")
	creators := flag.Int("creators", 16, "Concurrent clients creating stocks (both runs).")
	suite := flag.String("suite", "all", "Which benchmark: slidestock, notion, papersync, calendar, sheets, receive, tokens, memory, shards or all.")
	requests := flag.Int("requests", 1000, "Notion webhook requests per route (and as many bare PaperSync creates) per client count.")
	pages := flag.Int("pages", 50, "Notion events timed from webhook to filled page, one at a time (Automation requests, and as many connection events).")
	pageBurst := flag.Int("page-burst", 30, "Pages edited at once, timed from their connection events to the last page filled (at least N/3 s at Notion's 3 requests/s).")
	syncs := flag.Int("syncs", 1000, "PaperSyncs in the drain compared with the bare-client baseline.")
	sizes := flag.String("sync-sizes", "500,5000", "PaperSync bursts on one integration whose cost per sync is compared.")
	calWatches := flag.Int("cal-watches", 10000, "CalendarWatches whose channels fall due for renewal together (also the push targets).")
	calPushes := flag.Int("cal-pushes", 1000, "Google Calendar push notifications per client count (and as many baseline writes).")
	calCancels := flag.Int("cal-cancels", 100, "Calendar events cancelled one at a time, timed until their appointment is deleted.")
	calBudget := flag.Duration("cal-open-budget", 0, "Time the manager gets to open every watch's first channel (0: 30 s + 45 ms per watch, and 12 min more with -cal-skip-renewal, for the steps that run before the renewals).")
	calSkipRenewal := flag.Bool("cal-skip-renewal", false, "Leave the renewal benchmark out: the cancellation and push benchmarks start once the channels are open; the renewals still begin when -cal-open-budget ends, so give it room for both (a renewal during the pushes refuses those on the replaced channels).")
	calWorkers := flag.Int("cal-workers", 0, "The CalendarWatch controller's --calendarwatch-workers, and the renewal baseline's writers (0: its default).")
	linkResolves := flag.Int("link-resolves", 2000, "Share-link resolves per client count (and as many baseline cached Gets).")
	links := flag.Int("links", 100, "ReceiveLinks the resolves are spread over.")
	linkExpiries := flag.Int("link-expiries", 10000, "ReceiveLinks expiring within -link-window, their blobs on versitygw.")
	linkWindow := flag.Duration("link-window", time.Minute, "The window the -link-expiries links expire in.")
	linkBudget := flag.Duration("link-budget", 0, "Time the manager gets to mint every expiring link before the first expires (0: 60 s + 20 ms per link).")
	linkWorkers := flag.Int("link-workers", 0, "The manager's --receivelink-workers (0: its default).")
	sheetRounds := flag.Int("sheet-rounds", 8, "Rounds the Sheets ingest route and its baseline take turns in at each client count (even: baseline, route, route, baseline, ...), each of -sheet-sessions/(rounds/2) sessions.")
	sheetSessions := flag.Int("sheet-sessions", 3000, "Sessions posted to the Sheets ingest route per client count (and as many creates in each baseline); 1,000 make rounds of 250, too short to judge the ratio.")
	sheetClients := flag.String("sheet-clients", "16,64", "Client counts of the Sheets ingest route and its baselines.")
	memFirst := flag.Int("mem-first", 1000, "Objects of each kind at the memory benchmark's first reading.")
	memObjects := flag.Int("mem-objects", 10000, "Objects of each kind at the memory benchmark's second reading (all seven kinds at once).")
	memProfile := flag.String("mem-profile", "", "Directory for each binary's heap profile at each reading of the memory benchmark (go tool pprof); empty takes none.")
	memLimits := flag.String("mem-limits", "300Mi,150Mi", "Container memory limits of the manager and the webhook in the memory benchmark (each binary's soft limit, GOMEMLIMIT, is what it sets from its cgroup: 90 %, and 64 MiB below at the least); \"none\" runs both without.")
	memSettle := flag.Duration("mem-settle", time.Hour, "How long the memory benchmark waits for the objects of one reading to be reconciled once they are created.")
	tokenGrants := flag.Int("token-grants", 10000, "NotionIntegrations, and as many SheetConnections, whose access tokens fall due for refresh within one minute.")
	tokenWorkers := flag.Int("token-workers", 0, "The NotionIntegration and SheetConnection controllers' workers, and the token baselines' writers (0: their defaults).")
	tokenBudget := flag.Duration("token-budget", 0, "Time the manager gets to take every grant of a kind to Ready before the first falls due (0: 30 s + 60 ms per grant).")
	tokenKinds := flag.String("token-kinds", "notion,sheets", "The kinds whose refreshes -suite tokens measures, in order: notion (NotionIntegrations), sheets (SheetConnections).")
	tokenWindow := flag.Duration("token-window", time.Minute, "The window the -token-grants access tokens of each kind fall due in (shorter: a burst of a few).")
	shardStocks := flag.Int("shard-stocks", 10000, "SlideStocks taken to Ready by one manager, then by two shards.")
	cpuProfile := flag.String("cpuprofile", "", "Write a CPU profile of this process (the in-process managers and webhooks) to this file.")
	flag.Parse()
	stopProfile := func() {}
	if *cpuProfile != "" {
		var err error
		if stopProfile, err = startCPUProfile(*cpuProfile); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
	}
	// The in-process managers log nothing: the figures are the output.
	ctrl.SetLogger(logr.Discard())
	syncSizes, err := positiveInts(*sizes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: -sync-sizes wants positive numbers separated by commas")
		os.Exit(2)
	}
	if *calBudget <= 0 {
		*calBudget = 30*time.Second + time.Duration(*calWatches)*45*time.Millisecond
		if *calSkipRenewal {
			// The cancellation and push steps run inside the budget:
			// at 10,000 watches the first channels took 7m47s of its
			// 8m, and the renewals began under the cancellations.
			*calBudget += 12 * time.Minute
		}
	}
	if *linkBudget <= 0 {
		*linkBudget = time.Minute + time.Duration(*linkExpiries)*20*time.Millisecond
	}
	// The suites besides SlideStock's, in the order -suite all runs them.
	others := []benchSuite{
		{name: "notion", run: func(cfg *rest.Config) error { return benchNotion(cfg, *requests, *pages, *pageBurst) }},
		{name: "papersync", run: func(cfg *rest.Config) error { return benchPaperSync(cfg, *syncs, syncSizes, *creators) }},
		{name: "calendar", run: func(cfg *rest.Config) error {
			return benchCalendar(cfg, calendarOptions{watches: *calWatches, pushes: *calPushes, cancels: *calCancels, openBudget: *calBudget, workers: *calWorkers, skipRenewal: *calSkipRenewal})
		}},
		{name: "sheets", run: func(cfg *rest.Config) error {
			counts, err := positiveInts(*sheetClients)
			if err != nil {
				return fmt.Errorf("-sheet-clients: %w", err)
			}
			return benchSheets(cfg, *sheetSessions, *sheetRounds, counts)
		}},
		{name: "receive", run: func(cfg *rest.Config) error {
			return benchReceive(cfg, receiveOptions{resolves: *linkResolves, links: *links, expiries: *linkExpiries, budget: *linkBudget, window: *linkWindow, workers: *linkWorkers})
		}},
		{name: "tokens", run: func(cfg *rest.Config) error {
			return benchTokens(cfg, tokenOptions{grants: *tokenGrants, workers: *tokenWorkers, budget: *tokenBudget, window: *tokenWindow, kinds: *tokenKinds})
		}},
	}
	others = append(others, benchSuite{name: "memory", runEnv: func(env *envtest.Environment, cfg *rest.Config) error {
		o := memoryOptions{first: *memFirst, objects: *memObjects, profileDir: *memProfile, settle: *memSettle, ownNamespace: *suite == "all"}
		var err error
		if o.managerLimit, o.webhookLimit, err = parseMemLimits(*memLimits); err != nil {
			return err
		}
		return benchMemory(env, cfg, *bin, o)
	}}, benchSuite{name: "shards", runEnv: func(env *envtest.Environment, cfg *rest.Config) error {
		return benchShards(env, cfg, *bin, shardOptions{stocks: *shardStocks})
	}})
	if err := run(*bin, slideOptions{n: *n, m: *m, creators: *creators}, *suite, others); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		stopProfile()
		os.Exit(1)
	}
	stopProfile()
}

// startCPUProfile profiles this process into path until the returned
// func is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

// positiveInts parses numbers separated by commas, each above zero.
func positiveInts(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			return nil, errors.New("not a positive number: " + f)
		}
		out = append(out, v)
	}
	return out, nil
}

// benchSuite is one benchmark besides SlideStock's, run on the control
// plane: run, or runEnv for one that starts binaries (they need
// kubeconfigs of the control plane).
type benchSuite struct {
	name   string
	run    func(*rest.Config) error
	runEnv func(*envtest.Environment, *rest.Config) error
}

func (s benchSuite) start(env *envtest.Environment, cfg *rest.Config) error {
	if s.runEnv != nil {
		return s.runEnv(env, cfg)
	}
	return s.run(cfg)
}

// run starts the control plane and runs the suite named which: one of
// others, SlideStock's, or (all) SlideStock's and then every other.
func run(bin string, o slideOptions, which string, others []benchSuite) error {
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
	for _, s := range others {
		if s.name == which {
			return s.start(env, cfg)
		}
	}
	stop, err := benchSlideStock(env, cfg, bin, o)
	defer stop()
	if err != nil || which != "all" {
		return err
	}
	// The manager binary would reconcile the Notion benchmark's objects
	// too (against the wrong sandbox): stop it first.
	stop()
	for _, s := range others {
		if err := s.start(env, cfg); err != nil {
			return err
		}
	}
	return nil
}

func setupScheme() *runtime.Scheme { return setup.Scheme() }

func timed(f func() error) (time.Duration, error) {
	began := time.Now()
	err := f()
	return time.Since(began), err
}
