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

package notion

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// PaperSync is the PaperSync drain benchmark (-suite papersync).
type PaperSync struct {
	syncs int
	sizes string
}

// Name is the suite's -suite name.
func (*PaperSync) Name() string { return "papersync" }

// BindFlags registers -syncs and -sync-sizes.
func (s *PaperSync) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.syncs, "syncs", 1000, "PaperSyncs in the drain compared with the bare-client baseline.")
	fs.StringVar(&s.sizes, "sync-sizes", "500,5000", "PaperSync bursts on one integration whose cost per sync is compared.")
}

// Check checks -sync-sizes.
func (s *PaperSync) Check() error {
	if _, err := bench.PositiveInts(s.sizes); err != nil {
		return errors.New("-sync-sizes wants positive numbers separated by commas")
	}
	return nil
}

// Run runs the benchmark, with -creators creating clients.
func (s *PaperSync) Run(e bench.Env) error {
	sizes, err := bench.PositiveInts(s.sizes)
	if err != nil {
		return err
	}
	return benchPaperSync(e.Config, s.syncs, sizes, e.Creators)
}

// benchPaperSync measures how fast the manager drains a burst of
// PaperSyncs of one integration (instant sandbox, arXiv pacing off)
// against a bare client making one status patch per object in the same
// run, the manager's API requests per sync, and how both grow from a
// small to a large burst.
func benchPaperSync(cfg *rest.Config, n int, sizes []int, creators int) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctrl.SetLogger(logr.Discard())
	scheme := setup.Scheme()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	// The webhook benchmark's integration and its syncs (fake pages, which
	// fail) would be reconciled by this manager too: envtest runs no
	// garbage collector, so delete them by hand.
	for _, o := range []client.Object{&v1alpha1.PaperSync{}, &v1alpha1.NotionIntegration{}} {
		if err := c.DeleteAllOf(ctx, o, client.InNamespace("bench-notion")); err != nil {
			return err
		}
	}
	fmt.Printf("\nPaperSync drain: one integration, instant sandbox, arXiv pacing off, %d creating clients, real API server\n", creators)
	baseTime, patchTime, err := paperBaselines(ctx, c, n, creators)
	if err != nil {
		return err
	}

	calls := &bench.APICounter{}
	rig, err := startNotionRig(ctx, bench.Counted(cfg, calls), "be4c0000-0000-4000-8000-000000000002")
	if err != nil {
		return err
	}
	defer rig.Close()
	d := &paperDrain{c: c, rig: rig, calls: calls, creators: creators}

	burst, err := d.run(ctx, "bench-ps-burst", n)
	if err != nil {
		return err
	}
	baseRate, drainRate := float64(n)/baseTime.Seconds(), float64(n)/burst.took.Seconds()
	fmt.Printf("%-64s %10s %10s\n", "", "time", "syncs/s")
	fmt.Printf("%-64s %10s %10.0f\n", fmt.Sprintf("baseline: bare client, %d creates + %d status patches", n, n), baseTime.Round(time.Millisecond), baseRate)
	fmt.Printf("%-64s %10s %10.0f\n", fmt.Sprintf("(bare client, %d status patches alone)", n), patchTime.Round(time.Millisecond), float64(n)/patchTime.Seconds())
	fmt.Printf("%-64s %10s %10.0f\n", fmt.Sprintf("manager: %d creates → all Succeeded (end to end)", n), burst.took.Round(time.Millisecond), drainRate)
	fmt.Printf("ratio drain/baseline: %.2f (target ≥ 0.5)\n", drainRate/baseRate)
	fmt.Printf("manager API writes per sync: %.2f (target ≤ 1.1); reads per sync: %.3f; arXiv requests: %.0f for %d syncs\n\n",
		burst.writes, burst.reads, burst.arxivReq, n)
	return d.growth(ctx, sizes)
}

// paperBaselines run before the manager does, by a bare client with
// `creators` workers: the least any controller could do for the same
// result. The end-to-end one creates each PaperSync and patches its
// status once (what the webhook and the manager do together); the other
// only patches objects that exist.
func paperBaselines(ctx context.Context, c client.Client, n, creators int) (baseTime, patchTime time.Duration, err error) {
	base := "bench-ps-baseline"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: base}}); err != nil {
		return 0, 0, err
	}
	finish := func(ps *v1alpha1.PaperSync) error {
		before := ps.DeepCopy()
		now := metav1.Now()
		ps.Status.Phase, ps.Status.CompletedAt = v1alpha1.SyncSucceeded, &now
		status.MarkReady(ps, v1alpha1.SucceededReason, "page updated")
		return c.Status().Patch(ctx, ps, client.MergeFrom(before))
	}
	bareSync := func(i int) *v1alpha1.PaperSync {
		return &v1alpha1.PaperSync{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sync-%d", i), Namespace: base},
			Spec: v1alpha1.PaperSyncSpec{IntegrationRef: v1alpha1.LocalObjectReference{Name: "none"},
				PageID: fmt.Sprintf("00000000-0000-4000-8000-%012x", i), Link: "https://arxiv.org/abs/2301.12345", ArxivID: "2301.12345"}}
	}
	baseTime, err = bench.Timed(func() error {
		return bench.Parallel(n, creators, func(i int) error {
			ps := bareSync(i)
			if err := c.Create(ctx, ps); err != nil {
				return err
			}
			return finish(ps)
		})
	})
	if err != nil {
		return 0, 0, fmt.Errorf("baseline: %w", err)
	}
	var list v1alpha1.PaperSyncList
	if err := c.List(ctx, &list, client.InNamespace(base)); err != nil {
		return 0, 0, err
	}
	patchTime, err = bench.Timed(func() error {
		return bench.Parallel(len(list.Items), creators, func(i int) error { return finish(&list.Items[i]) })
	})
	if err != nil {
		return 0, 0, fmt.Errorf("patch baseline: %w", err)
	}
	return baseTime, patchTime, nil
}

// paperDrain drains bursts of PaperSyncs through the rig's manager, its
// API requests counted by calls.
type paperDrain struct {
	c        client.Client
	rig      *notionRig
	calls    *bench.APICounter
	creators int
}

// drainResult is one burst's drain: count syncs took took, with the
// manager's API reads and writes per sync and the arXiv requests.
type drainResult struct {
	n                       int
	took                    time.Duration
	reads, writes, arxivReq float64
}

// run drains count PaperSyncs of a new integration in ns, one per row.
func (d *paperDrain) run(ctx context.Context, ns string, count int) (drainResult, error) {
	ni, err := benchIntegration(ctx, d.c, ns, d.rig.notion, d.rig.ws)
	if err != nil {
		return drainResult{}, err
	}
	rows := make([]string, count)
	for i := range rows {
		rows[i] = d.rig.notion.AddRow(ni.Status.DatabaseID, map[string]any{"Link": "https://arxiv.org/abs/2301.12345"})
	}
	d.rig.Box.ResetCalls()
	before := d.calls.Snapshot()
	took, err := bench.Timed(func() error {
		if err := createSyncs(ctx, d.c, count, d.creators, func(i int) *v1alpha1.PaperSync {
			return papers.NewSync(ni, rows[i], "https://arxiv.org/abs/2301.12345", "2301.12345")
		}); err != nil {
			return err
		}
		return waitSucceeded(ctx, d.rig.Mgr.GetClient(), ns, count)
	})
	if err != nil {
		return drainResult{}, err
	}
	after := d.calls.Snapshot()
	return drainResult{n: count, took: took, reads: float64(after[0]-before[0]) / float64(count),
		writes: float64(after[1]-before[1]) / float64(count), arxivReq: float64(d.rig.Box.Calls(sandbox.ArxivQuery))}, nil
}

// growth drains a burst of each size and prints how the cost per sync
// grows from the first size to the last.
func (d *paperDrain) growth(ctx context.Context, sizes []int) error {
	fmt.Printf("%-8s %10s %10s %14s %14s %10s\n", "syncs", "time", "syncs/s", "writes/sync", "reads/sync", "arXiv")
	var results []drainResult
	for _, size := range sizes {
		r, err := d.run(ctx, fmt.Sprintf("bench-ps-%d", size), size)
		if err != nil {
			return err
		}
		results = append(results, r)
		fmt.Printf("%-8d %10s %10.0f %14.3f %14.3f %10.0f\n", size, r.took.Round(time.Millisecond), float64(size)/r.took.Seconds(), r.writes, r.reads, r.arxivReq)
	}
	if len(sizes) > 1 {
		first := results[0]
		last := sizes[len(sizes)-1]
		r := float64(last) / float64(sizes[0])
		lastR := results[len(results)-1]
		fmt.Printf("growth %d → %d syncs (×%.0f): time ×%.1f, time per sync ×%.2f (1.00 is linear), API reads per sync %.3f → %.3f, writes per sync %.3f → %.3f\n",
			sizes[0], last, r, lastR.took.Seconds()/first.took.Seconds(), (lastR.took.Seconds()/float64(last))/(first.took.Seconds()/float64(sizes[0])),
			first.reads, lastR.reads, first.writes, lastR.writes)
	}
	return nil
}

// benchIntegration creates a connected NotionIntegration in ns and waits
// until it is Ready.
func benchIntegration(ctx context.Context, c client.Client, ns string, notionEmu *sandbox.Notion, ws sandbox.NotionWorkspace) (*v1alpha1.NotionIntegration, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	if err := bench.CreateSecrets(ctx, c, ns, map[string]map[string]string{
		"notion-client":  {"client_id": "bench-client", "client_secret": "bench-secret"},
		"notion-webhook": {"token": "bench-webhook-token-0123456789"},
		"notion-token":   {"refresh_token": notionEmu.IssueRefreshToken("bench-client", ws)},
	}); err != nil {
		return nil, err
	}
	ni := &v1alpha1.NotionIntegration{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: ns}}
	ni.Spec.OAuth.ClientSecretRef.Name, ni.Spec.OAuth.TokenSecretRef.Name, ni.Spec.WebhookSecretRef.Name = "notion-client", "notion-token", "notion-webhook"
	ni.Spec.SyncRetention = metav1.Duration{Duration: time.Hour}
	if err := c.Create(ctx, ni); err != nil {
		return nil, err
	}
	if err := poll.Until(ctx, "", 50*time.Millisecond, time.Minute, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(ni), ni); err != nil {
			return false, poll.Stop(err)
		}
		return status.IsTrue(ni, v1alpha1.ReadyCondition) && ni.Status.WebhookPath != "", nil
	}); err != nil {
		if poll.Stopped(err) {
			return nil, err
		}
		return nil, fmt.Errorf("integration %s not Ready: %+v", ns, ni.Status.Conditions)
	}
	return ni, nil
}

// createSyncs makes count PaperSyncs with `creators` clients; build makes
// each.
func createSyncs(ctx context.Context, c client.Client, count, creators int, build func(int) *v1alpha1.PaperSync) error {
	// AlreadyExists is the integration's backfill having found the row
	// first, as the webhook would take it: the same PaperSync.
	return bench.Parallel(count, creators, func(i int) error {
		if err := c.Create(ctx, build(i)); !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	})
}

// waitSucceeded polls the manager's cache (no load on the API server)
// until count syncs of ns have succeeded.
func waitSucceeded(ctx context.Context, cache client.Reader, ns string, count int) error {
	return poll.Until(ctx, "", 20*time.Millisecond, 10*time.Minute, func() (bool, error) {
		// The cache's own copies, read and never changed: a deep copy of
		// every sync each 20 ms would take the CPU the drain is timed on.
		var list v1alpha1.PaperSyncList
		if err := cache.List(ctx, &list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return false, poll.Stop(err)
		}
		done, failed := 0, 0
		for i := range list.Items {
			switch list.Items[i].Status.Phase {
			case v1alpha1.SyncSucceeded:
				done++
			case v1alpha1.SyncFailed:
				failed++
			}
		}
		if failed > 0 {
			return false, poll.Stop(fmt.Errorf("%d syncs failed in %s", failed, ns))
		}
		return done >= count, fmt.Errorf("%d of %d syncs succeeded in %s", done, count, ns)
	})
}
