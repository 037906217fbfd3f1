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

package slidestock

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// The sharding benchmark (-suite shards): -shard-stocks SlideStocks,
// created by 16 clients, taken to Ready by one manager binary (the
// baseline) and then, in the same run, by two manager binaries each given
// half of them by their sharding.switchboard.dev/key label, as the chart's
// manager.shards runs them. Each manager fetches from a sandbox of its
// own, so the fetches each one served show that every stock was stocked by
// its own shard, once. Both phases select their managers' objects by a
// key, so that no other suite's objects on the API server are theirs.
type Shards struct{ o shardOptions }

// shardOptions size the sharding benchmark.
type shardOptions struct{ stocks int }

// Name is the suite's -suite name.
func (*Shards) Name() string { return "shards" }

// BindFlags registers -shard-stocks.
func (s *Shards) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.o.stocks, "shard-stocks", 10000, "SlideStocks taken to Ready by one manager, then by two shards.")
}

// Run runs the sharding benchmark.
func (s *Shards) Run(e bench.Env) error { return benchShards(e.ControlPlane, e.Config, e.Bin, s.o) }

// shardRun is one phase: how long the stocks took to be Ready from the
// first create, and each manager's peak RSS and fetches.
type shardRun struct {
	keys    []string
	took    time.Duration
	rss     []int64
	fetches []int
}

// benchShards runs the sharding benchmark on env's control plane.
func benchShards(env *envtest.Environment, cfg *rest.Config, bin string, o shardOptions) error {
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{Scheme: setup.Scheme()})
	if err != nil {
		return err
	}
	fmt.Printf("\nSharding: %d SlideStocks (16 clients creating) taken to Ready by manager binaries (default flags, --watch-label-selector on %s),\n"+
		"each with its own instant sandbox; the baseline is one manager taking all of them in the same run\n", o.stocks, v1alpha1.ShardLabel)
	one, err := shardPhase(ctx, env, c, bin, "bench-shards-one", []string{"all"}, o.stocks)
	if err != nil {
		return fmt.Errorf("one manager: %w", err)
	}
	two, err := shardPhase(ctx, env, c, bin, "bench-shards-two", []string{"shard1", "shard2"}, o.stocks)
	if err != nil {
		return fmt.Errorf("two shards: %w", err)
	}
	fmt.Printf("%-40s %10s %12s %s\n", "", "time", "stocks/s", "each manager: peak RSS, fetches served")
	for _, r := range []shardRun{one, two} {
		var each []string
		for i, k := range r.keys {
			each = append(each, fmt.Sprintf("%s %.1f MiB, %d", k, bench.MiB(r.rss[i]), r.fetches[i]))
		}
		fmt.Printf("%-40s %10s %12.0f %s\n", fmt.Sprintf("%d manager(s), %d stocks to Ready", len(r.keys), o.stocks),
			r.took.Round(time.Millisecond), float64(o.stocks)/r.took.Seconds(), strings.Join(each, "; "))
	}
	fmt.Printf("ratio two shards/one manager: stocks per second %.2f; largest manager's peak RSS %.2f\n",
		one.took.Seconds()/two.took.Seconds(), float64(max(two.rss[0], two.rss[1]))/float64(one.rss[0]))
	for i, k := range two.keys {
		if two.fetches[i] != o.stocks/2 {
			return fmt.Errorf("shard %s fetched %d decks, want %d: a stock was reconciled by a manager not its own", k, two.fetches[i], o.stocks/2)
		}
	}
	return nil
}

// shardPhase starts one manager per key (selecting its key), creates n
// stocks in ns labelled with the keys in turn, waits until every one is
// Ready, reads each manager's peak RSS and fetches, and stops them.
func shardPhase(ctx context.Context, env *envtest.Environment, c client.Client, bin, ns string, keys []string, n int) (shardRun, error) {
	r := shardRun{keys: keys}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return r, err
	}
	boxes := make([]*sandbox.Server, len(keys))
	mgrs := make([]*local.Process, len(keys))
	defer func() {
		for _, m := range mgrs {
			if m != nil {
				m.Stop(10 * time.Second)
			}
		}
	}()
	for i, k := range keys {
		boxes[i] = sandbox.New(sandbox.NewSpeakerDeck())
		srv := httptest.NewServer(boxes[i])
		defer srv.Close()
		var err error
		if mgrs[i], _, err = bench.StartManager(ctx, env, bin, srv.URL,
			"--watch-label-selector", fmt.Sprintf("%s in (%s)", v1alpha1.ShardLabel, k)); err != nil {
			return r, err
		}
	}
	var err error
	r.took, err = bench.Timed(func() error {
		if err := bench.Parallel(n, 16, func(i int) error {
			s := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("deck-%05d", i), Namespace: ns,
				Labels: map[string]string{v1alpha1.ShardLabel: keys[i%len(keys)]}}}
			s.Spec.URL = bench.DeckURL
			return c.Create(ctx, s)
		}); err != nil {
			return err
		}
		// Every half second: at thousands of stocks, lists every 50 ms
		// would be most of the API server's load.
		return waitReady(ctx, c, ns, n, 500*time.Millisecond)
	})
	if err != nil {
		return r, err
	}
	for i := range keys {
		r.rss = append(r.rss, mgrs[i].PeakRSS())
		r.fetches = append(r.fetches, boxes[i].Calls(sandbox.SpeakerDeckOEmbed))
	}
	return r, nil
}
