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

// Package tokens is the token benchmark (-suite tokens): OAuth token
// refreshes as deadlines at scale. For each OAuth kind with a grant of its
// own per object — NotionIntegration, then SheetConnection, each with its
// own manager — -token-grants objects are connected with grants whose
// access tokens all fall due for refresh within one minute (run.go
// measures the refreshes). A grant is written into its token Secret as the
// OAuth engine writes one after a refresh made a token lifetime earlier:
// the access and refresh tokens the sandbox issued, and the expiry
// (Google's from the emulator's clock set back to the issue, Notion's
// assumed, as Notion states none). The Grant phase requeues each object at
// expiry − spec refreshBefore, its due instant.
package tokens

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// Suite is the token benchmark (-suite tokens).
type Suite struct{ o tokenOptions }

// Name is the suite's -suite name.
func (*Suite) Name() string { return "tokens" }

// BindFlags registers the -token- flags.
func (s *Suite) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.o.grants, "token-grants", 10000, "NotionIntegrations, and as many SheetConnections, whose access tokens fall due for refresh within one minute.")
	fs.IntVar(&s.o.workers, "token-workers", 0, "The NotionIntegration and SheetConnection controllers' workers, and the token baselines' writers (0: their defaults).")
	fs.DurationVar(&s.o.budget, "token-budget", 0, "Time the manager gets to take every grant of a kind to Ready before the first falls due (0: 30 s + 60 ms per grant).")
	fs.StringVar(&s.o.kinds, "token-kinds", "notion,sheets", "The kinds whose refreshes -suite tokens measures, in order: notion (NotionIntegrations), sheets (SheetConnections).")
	fs.DurationVar(&s.o.window, "token-window", time.Minute, "The window the -token-grants access tokens of each kind fall due in (shorter: a burst of a few).")
}

// Run runs the benchmark for each kind of -token-kinds.
func (s *Suite) Run(e bench.Env) error { return benchTokens(e.Config, s.o) }

// tokenOptions size the token benchmark.
type tokenOptions struct {
	// kinds are the kinds measured, comma-separated (-token-kinds):
	// notion, sheets.
	kinds string
	// grants of each kind (-token-grants).
	grants int
	// workers is both controllers' --<kind>-workers (0: each one's
	// default), and the baselines' writers.
	workers int
	// budget is how long the manager gets to take every object of a kind
	// to Ready; the first token falls due this long after the first
	// create (0: defaultTokenBudget).
	budget time.Duration
	// window is how long the due instants are spread over (a minute: the
	// issue's; shorter makes a burst of a few grants): the grants are due
	// in equal shares at each whole second of it, since a token Secret's
	// expiry is RFC 3339, whole seconds.
	window time.Duration
}

// defaultTokenBudget is 30 s and 60 ms per grant: eight workers connected
// 300 grants in about 10 s on a busy 2-core machine, and a larger cache
// slows every one.
func defaultTokenBudget(grants int) time.Duration {
	return 30*time.Second + time.Duration(grants)*60*time.Millisecond
}

const (
	// tokenCreators create the benchmark's objects and Secrets.
	tokenCreators = 16
	// notionRefreshBefore and sheetsRefreshBefore are the kinds' default
	// spec refreshBefore (the CRDs'), written out so that due instants do
	// not depend on defaulting.
	notionRefreshBefore = 24 * time.Hour
	sheetsRefreshBefore = 5 * time.Minute
	tokensSheetID       = "1BenchTokenSpreadsheet00000000000000000000000"
	tokensSheetTab      = "Time log"
)

// benchTokens runs the token benchmark for NotionIntegrations, then for
// SheetConnections.
func benchTokens(cfg *rest.Config, o tokenOptions) error {
	if o.budget <= 0 {
		o.budget = defaultTokenBudget(o.grants)
	}
	if o.window <= 0 {
		o.window = time.Minute
	}
	c, err := client.New(cfg, client.Options{Scheme: setup.Scheme()})
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
	defer func() { cancel(); k.Close() }()
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
