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
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/resmetrics"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// The memory benchmark (-suite memory): the manager and webhook binaries,
// as the chart runs them (one Deployment each; watching the benchmark's
// namespace, which holds every object),
// with objects of all seven kinds at once, and each binary's resident set
// and live heap (after a collection) at three points of one run:
//
//   - idle, no Switchboard object: the baseline;
//   - -mem-first (1,000) of each kind, every one reconciled;
//   - -mem-objects (10,000) of each kind, every one reconciled: 70,000
//     objects plus the Secrets the manager writes for them (a connect
//     Secret per unconnected parent, a share Secret and short-token object
//     per minted link).
//
// The objects are as a fresh install's users leave them before connecting
// their grants: SlideStocks stocked (Ready), links minted on versitygw
// (Ready), NotionIntegrations, CalendarWatches and SheetConnections
// waiting for a person to connect (a connect link each, the token Secret
// missing: Stalled), and a PaperSync and a SheetSync for each of those
// parents, waiting for it. Connected parents would keep one more Secret
// each (the token), which the manager's cache holds as it holds the
// connect Secret.
//
// Each binary runs as it does in a container with a memory limit (-mem-limits,
// the chart's resources.limits.memory): with the soft limit it sets from
// its cgroup (setup.SoftMemoryLimit), given here as GOMEMLIMIT. The
// default limits are the goals, 300Mi and 150Mi; "none" runs
// both without a soft limit, the heap free to grow to twice what is live.
type memoryOptions struct {
	first, objects int
	// profileDir, when set, receives each binary's heap profile at each
	// reading (their --pprof-bind-address).
	profileDir string
	// managerLimit and webhookLimit are the containers' memory limits in
	// bytes (0: none).
	managerLimit, webhookLimit int64
	// settle is how long the objects of one reading may take to be
	// reconciled once created.
	settle time.Duration
	// ownNamespace has both binaries watch only the benchmark's namespace
	// (--watch-namespaces): under -suite all the other suites' objects are
	// still on the API server. Alone, the suite runs them as the chart
	// does, watching every namespace.
	ownNamespace bool
}

const (
	memNS      = "bench-mem"
	memStateNS = "bench-mem-system"
	memBucket  = "bench-mem"
)

// memKind is one kind of the memory benchmark: its list type and how to
// make its i-th object.
type memKind struct {
	name string
	list func() client.ObjectList
	make func(i int) client.Object
}

func memKinds() []memKind {
	return []memKind{
		{"SlideStock", func() client.ObjectList { return &v1alpha1.SlideStockList{} }, func(i int) client.Object {
			s := &v1alpha1.SlideStock{ObjectMeta: memMeta("deck", i)}
			s.Spec.URL = deckURL
			return s
		}},
		{"NotionIntegration", func() client.ObjectList { return &v1alpha1.NotionIntegrationList{} }, func(i int) client.Object {
			n := &v1alpha1.NotionIntegration{ObjectMeta: memMeta("ni", i)}
			n.Spec.OAuth.ClientSecretRef.Name = "notion-client"
			n.Spec.OAuth.TokenSecretRef.Name = memName("notion-token", i)
			n.Spec.WebhookSecretRef.Name = "notion-webhook"
			return n
		}},
		{"PaperSync", func() client.ObjectList { return &v1alpha1.PaperSyncList{} }, func(i int) client.Object {
			p := &v1alpha1.PaperSync{ObjectMeta: memMeta("ps", i)}
			p.Spec.IntegrationRef.Name = memName("ni", i)
			p.Spec.PageID = fmt.Sprintf("1c2d3e4f-5a6b-4c7d-8e9f-%012d", i)
			p.Spec.Link = "https://arxiv.org/abs/2301.12345v2"
			p.Spec.ArxivID = "2301.12345"
			return p
		}},
		{"CalendarWatch", func() client.ObjectList { return &v1alpha1.CalendarWatchList{} }, func(i int) client.Object {
			w := &v1alpha1.CalendarWatch{ObjectMeta: memMeta("cw", i)}
			w.Spec.CalendarID = calendarName(i)
			w.Spec.OAuth.ClientSecretRef.Name = "google-client"
			w.Spec.OAuth.TokenSecretRef.Name = memName("calendar-token", i)
			w.Spec.Sink.Objects = &v1alpha1.ObjectSink{APIVersion: "v1", Kind: "ConfigMap"}
			return w
		}},
		{"SheetConnection", func() client.ObjectList { return &v1alpha1.SheetConnectionList{} }, func(i int) client.Object {
			sc := &v1alpha1.SheetConnection{ObjectMeta: memMeta("sc", i)}
			sc.Spec.SpreadsheetID = sheetsBenchID
			sc.Spec.Sheet.Title = sheetsBenchTab
			sc.Spec.OAuth.ClientSecretRef.Name = "google-client"
			sc.Spec.OAuth.TokenSecretRef.Name = memName("sheet-token", i)
			sc.Spec.IngestTokenSecretRef.Name = "sheet-ingest"
			sc.Spec.ColumnMapping = map[string]v1alpha1.ColumnRef{"title": "A", "startedAt": "B", "endedAt": "C", "durationSeconds": "D", "id": "E"}
			return sc
		}},
		{"SheetSync", func() client.ObjectList { return &v1alpha1.SheetSyncList{} }, func(i int) client.Object {
			s := &v1alpha1.SheetSync{ObjectMeta: memMeta("ss", i)}
			s.Spec.ConnectionRef.Name = memName("sc", i)
			s.Spec.Session = benchSession("mem", i)
			return s
		}},
		{"ReceiveLink", func() client.ObjectList { return &v1alpha1.ReceiveLinkList{} }, func(i int) client.Object {
			l := &v1alpha1.ReceiveLink{ObjectMeta: memMeta("rl", i)}
			l.Spec.Blob = v1alpha1.BlobLocation{Bucket: memBucket, Key: memBlobKey(i), CredentialsSecretRef: v1alpha1.SecretReference{Name: "s3"}}
			l.Spec.TTL = &metav1.Duration{Duration: 168 * time.Hour}
			return l
		}},
	}
}

func memName(prefix string, i int) string { return fmt.Sprintf("%s-%05d", prefix, i) }
func memBlobKey(i int) string             { return fmt.Sprintf("mem/%05d.bin", i) }
func memMeta(prefix string, i int) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: memName(prefix, i), Namespace: memNS}
}

// memProcs are the two binaries under measurement, and their profiling
// and metrics addresses.
type memProcs struct {
	manager, webhook            *local.Process
	managerPprof, hookPprof     string
	managerMetrics, hookMetrics string
}

// profile saves each binary's heap profile, after a collection, as
// dir/<binary>-<objects>.pb.gz, making dir if it is missing.
func (p memProcs) profile(dir string, objects int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, addr := range map[string]string{"manager": p.managerPprof, "webhook": p.hookPprof} {
		resp, err := http.Get("http://" + addr + "/debug/pprof/heap?gc=1")
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		switch {
		case err != nil:
			return fmt.Errorf("%s heap profile: %w", name, err)
		case resp.StatusCode != http.StatusOK:
			return fmt.Errorf("%s heap profile: HTTP %d", name, resp.StatusCode)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.pb.gz", name, objects)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// memReading is one reading of both binaries' resident sets and live
// heaps, in bytes.
type memReading struct {
	objects                  int
	managerRSS, managerPeak  int64
	webhookRSS, webhookPeak  int64
	managerHeap, webhookHeap int64
	// The resident sets now, split: anonymous (what the soft limit
	// governs) and file-backed (the binary's mapped code and data).
	managerAnon, managerFile int64
	webhookAnon, webhookFile int64
}

// read takes the resident sets, then each binary's live heap: the heap
// its runtime holds right after a collection (the pprof handler's gc=1
// runs one).
func (p memProcs) read(objects int) (memReading, error) {
	r := memReading{objects: objects,
		managerRSS: p.manager.RSS(), managerPeak: p.manager.PeakRSS(),
		webhookRSS: p.webhook.RSS(), webhookPeak: p.webhook.PeakRSS(),
		managerAnon: p.manager.RSSAnon(), managerFile: p.manager.RSSFile(),
		webhookAnon: p.webhook.RSSAnon(), webhookFile: p.webhook.RSSFile()}
	var err error
	if r.managerHeap, err = liveHeap(p.managerPprof, p.managerMetrics); err != nil {
		return r, fmt.Errorf("manager: %w", err)
	}
	if r.webhookHeap, err = liveHeap(p.hookPprof, p.hookMetrics); err != nil {
		return r, fmt.Errorf("webhook: %w", err)
	}
	return r, nil
}

// liveHeap has the binary collect (its heap profile with gc=1), then
// reads its go_memstats_heap_alloc_bytes.
func liveHeap(pprofAddr, metricsAddr string) (int64, error) {
	resp, err := http.Get("http://" + pprofAddr + "/debug/pprof/heap?gc=1")
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	v, err := metricValue("http://"+metricsAddr+"/metrics", "go_memstats_heap_alloc_bytes")
	return int64(v), err
}

// benchMemory runs the memory benchmark on env's control plane.
func benchMemory(env *envtest.Environment, cfg *rest.Config, bin string, o memoryOptions) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.New(cfg, client.Options{Scheme: setupScheme()})
	if err != nil {
		return err
	}
	s3, err := testenv.StartS3()
	if err != nil {
		return err
	}
	defer func() { _ = s3.Stop() }()
	if err := s3.CreateBucket(ctx, memBucket); err != nil {
		return err
	}
	if err := memFixtures(ctx, c, s3); err != nil {
		return err
	}
	// Every emulator the kinds may call, answering from memory.
	google := sandbox.NewGoogleOAuth()
	cal := sandbox.NewGoogleCalendar(google)
	defer cal.Close()
	box := sandbox.New(sandbox.NewSpeakerDeck(), sandbox.NewNotion(), sandbox.NewArxiv(), google, cal, sandbox.NewGoogleSheets(google))
	srv := httptest.NewServer(box)
	defer srv.Close()
	procs, stop, err := startMemoryBinaries(ctx, env, bin, srv.URL, s3.Endpoint, o)
	defer stop()
	if err != nil {
		return err
	}
	watching := "every namespace, as the chart's default"
	if o.ownNamespace {
		watching = "--watch-namespaces " + memNS
	}
	fmt.Printf("\nMemory: the manager and webhook binaries (default flags, watching %s), objects of all 7 kinds at once on the real API server,\n"+
		"SlideStocks stocked from an instant sandbox, links minted on versitygw, OAuth parents waiting for a connect with a PaperSync or SheetSync each;\n"+
		"container memory limits %s (manager) and %s (webhook): soft limits (GOMEMLIMIT, setup.SoftMemoryLimit) %s and %s\n",
		watching, limitText(o.managerLimit), limitText(o.webhookLimit), limitText(setup.SoftMemoryLimit(o.managerLimit)), limitText(setup.SoftMemoryLimit(o.webhookLimit)))
	kinds := memKinds()
	fmt.Printf("%-34s %14s %14s %14s %14s %14s %14s\n", "", "manager RSS", "manager peak", "manager heap", "webhook RSS", "webhook peak", "webhook heap")
	idle, err := procs.read(0)
	if err != nil {
		return err
	}
	readings := []memReading{idle}
	printReading(readings[0], len(kinds))
	objs, err := memCache(ctx, cfg, kinds)
	if err != nil {
		return err
	}
	for _, n := range []int{o.first, o.objects} {
		have := readings[len(readings)-1].objects / len(kinds)
		if n <= have {
			continue
		}
		took, err := timed(func() error { return memCreate(ctx, c, s3, kinds, have, n) })
		if err != nil {
			return err
		}
		settled, err := timed(func() error { return memSettled(ctx, objs, procs, kinds, n, o.settle) })
		if err != nil {
			return err
		}
		fmt.Printf("%d of each kind (%d objects): created in %s, every one reconciled %s later\n",
			n, n*len(kinds), took.Round(time.Second), settled.Round(time.Second))
		x, err := procs.read(n * len(kinds))
		if err != nil {
			return err
		}
		readings = append(readings, x)
		printReading(readings[len(readings)-1], len(kinds))
		if o.profileDir != "" {
			if err := procs.profile(o.profileDir, n*len(kinds)); err != nil {
				return err
			}
		}
	}
	if err := reportMemory(readings, o); err != nil {
		return err
	}
	return scrapeResources(procs, readings[len(readings)-1])
}

// scrapeResources scrapes the manager's per-resource metrics once, as
// Prometheus would, after the readings (which it leaves as they are):
// how many series, how large, how long, and the manager's peak resident
// set after it beside the one before.
func scrapeResources(p memProcs, last memReading) error {
	start := time.Now()
	series, size := 0, int64(0)
	err := scrape("http://"+p.managerMetrics+resmetrics.Path, func(line string) {
		size += int64(len(line)) + 1
		if line != "" && !strings.HasPrefix(line, "#") {
			series++
		}
	})
	if err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Printf("then one scrape of the manager's %s at %d objects: %d series, %.1f MiB, %s; manager RSS %.1f MiB, peak %.1f MiB (%.1f before the scrape)\n",
		resmetrics.Path, last.objects, series, mib(size), took.Round(time.Millisecond), mib(p.manager.RSS()), mib(p.manager.PeakRSS()), mib(last.managerPeak))
	return nil
}

// parseMemLimits reads -mem-limits: "none", or the manager's and the
// webhook's container memory limits as Kubernetes quantities, "300Mi,150Mi".
func parseMemLimits(s string) (manager, webhook int64, err error) {
	if s == "none" {
		return 0, 0, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 2 {
		return 0, 0, fmt.Errorf("-mem-limits %q: want \"none\" or the manager's and the webhook's limits, \"300Mi,150Mi\"", s)
	}
	var out [2]int64
	for i, part := range parts {
		q, err := resource.ParseQuantity(strings.TrimSpace(part))
		if err != nil || q.Value() <= 0 {
			return 0, 0, fmt.Errorf("-mem-limits %q: %q is not a memory quantity such as 300Mi", s, part)
		}
		out[i] = q.Value()
	}
	return out[0], out[1], nil
}

// limitText shows a container memory limit, in MiB.
func limitText(b int64) string {
	if b == 0 {
		return "none"
	}
	return fmt.Sprintf("%.0fMi", mib(b))
}

// softLimitEnv is the environment of a binary run as in a container with
// limit bytes of memory (none for 0).
func softLimitEnv(limit int64) []string {
	if limit == 0 {
		return nil
	}
	return []string{fmt.Sprintf("GOMEMLIMIT=%d", setup.SoftMemoryLimit(limit))}
}

// memFixtures creates the namespaces and the Secrets a person creates: the
// OAuth clients and webhook/ingest tokens shared by every parent, and the
// storage credentials.
func memFixtures(ctx context.Context, c client.Client, s3 *testenv.S3) error {
	for _, ns := range []string{memNS, memStateNS} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	secrets := map[string]map[string][]byte{
		"notion-client":  {"client_id": []byte("mem-client"), "client_secret": []byte("mem-secret")},
		"notion-webhook": {"token": []byte("mem-notion-webhook-token-0123456789")},
		"google-client":  {"client_id": []byte("mem-client"), "client_secret": []byte("mem-secret")},
		"sheet-ingest":   {"token": []byte(testenv.SheetIngestToken)},
		"s3":             s3.Credentials.SecretData(),
	}
	for name, data := range secrets {
		if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: memNS}, Data: data}); err != nil {
			return err
		}
	}
	return nil
}

// startMemoryBinaries starts the manager and the webhook server binaries,
// each with its own kubeconfig and ports, pointed at the sandbox and S3,
// and waits until both are ready. stop is never nil.
func startMemoryBinaries(ctx context.Context, env *envtest.Environment, bin, sandboxURL, s3URL string, o memoryOptions) (memProcs, func(), error) {
	var p memProcs
	stop := func() {
		for _, proc := range []*local.Process{p.webhook, p.manager} {
			if proc != nil {
				proc.Stop(10 * time.Second)
			}
		}
	}
	ports, err := local.FreePorts("127.0.0.1", 7)
	if err != nil {
		return p, stop, err
	}
	// Profiling is on in both, on local ports: each reading has the
	// binary collect before its live heap is read.
	p.managerPprof, p.hookPprof, p.managerMetrics, p.hookMetrics = ports[5], ports[6], ports[2], ports[4]
	managerArgs, hookArgs := []string{"--pprof-bind-address", p.managerPprof}, []string{"--pprof-bind-address", p.hookPprof}
	publicURL := "http://" + ports[0]
	common := []string{"--public-url", publicURL, "--state-namespace", memStateNS, "--link-namespace", memStateNS}
	if o.ownNamespace {
		common = append(common, "--watch-namespaces", memNS)
	}
	for _, f := range sandbox.UpstreamFlags(sandboxURL) {
		common = append(common, "--upstream", f)
	}
	// The last --upstream of a name wins: S3 is versitygw.
	common = append(common, "--upstream", "s3="+s3URL)
	if p.manager, err = startBinary(ctx, env, bin, "manager", ports[1], time.Minute, softLimitEnv(o.managerLimit), append(append([]string{"--metrics-bind-address", ports[2]}, managerArgs...), common...)...); err != nil {
		return p, stop, err
	}
	p.webhook, err = startBinary(ctx, env, bin, "webhook", ports[3], time.Minute, softLimitEnv(o.webhookLimit), append(append([]string{"--metrics-bind-address", ports[4], "--bind-address", ports[0]}, hookArgs...), common...)...)
	return p, stop, err
}

// memCreate brings every kind from have to n objects (16 clients), the
// links' blobs uploaded first.
func memCreate(ctx context.Context, c client.Client, s3 *testenv.S3, kinds []memKind, have, n int) error {
	if err := parallel(n-have, 16, func(i int) error {
		key := memBlobKey(have + i)
		return s3.Blob.Put(ctx, s3.Object(memBucket, key), []byte(key), "application/octet-stream")
	}); err != nil {
		return fmt.Errorf("upload blobs: %w", err)
	}
	return parallel((n-have)*len(kinds), 16, func(j int) error {
		// Round the kinds, so that every controller has work from the start.
		k, i := kinds[j%len(kinds)], have+j/len(kinds)
		if err := c.Create(ctx, k.make(i)); err != nil {
			return fmt.Errorf("create %s %d: %w", k.name, i, err)
		}
		return nil
	})
}

// memSettled waits until each of the n objects of every kind has its
// first status from the controller (conditions written), counting from
// the bench's own informers (watch events; listing 70,000 objects from
// the API server every poll would be most of its load), and fails if a
// binary exits.
func memSettled(ctx context.Context, objs cache.Cache, p memProcs, kinds []memKind, n int, settle time.Duration) error {
	waiting := map[string]int{}
	return poll.Until(ctx, "", 2*time.Second, settle, func() (bool, error) {
		for _, proc := range []*local.Process{p.manager, p.webhook} {
			if proc.Exited() {
				return false, poll.Stop(fmt.Errorf("a binary exited (log %s): %w", proc.Log, proc.Err()))
			}
		}
		done := true
		for _, k := range kinds {
			have, err := memReconciled(ctx, objs, k)
			if err != nil {
				return false, poll.Stop(err)
			}
			waiting[k.name] = n - have
			done = done && have == n
		}
		return done, fmt.Errorf("objects not reconciled yet: %v", waiting)
	})
}

// memReconciled counts kind k's objects whose status has conditions.
func memReconciled(ctx context.Context, objs cache.Cache, k memKind) (int, error) {
	list := k.list()
	if err := objs.List(ctx, list, client.InNamespace(memNS), client.UnsafeDisableDeepCopy); err != nil {
		return 0, err
	}
	count := 0
	err := meta.EachListItem(list, func(obj runtime.Object) error {
		if so, ok := obj.(v1alpha1.StatusObject); ok && len(so.GetReconcileStatus().Conditions) > 0 {
			count++
		}
		return nil
	})
	return count, err
}

// memCache starts an informer cache of the benchmark's namespace for
// every kind, and waits until it has synced.
func memCache(ctx context.Context, cfg *rest.Config, kinds []memKind) (cache.Cache, error) {
	objs, err := cache.New(cfg, cache.Options{Scheme: setupScheme(), DefaultNamespaces: map[string]cache.Config{memNS: {}},
		DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return nil, err
	}
	for _, k := range kinds {
		if _, err := objs.GetInformer(ctx, k.make(0)); err != nil {
			return nil, err
		}
	}
	go func() { _ = objs.Start(ctx) }()
	if !objs.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the benchmark's cache did not sync")
	}
	return objs, nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// printReading prints one reading as a row of the memory table, as soon
// as it is taken.
func printReading(x memReading, kinds int) {
	what := "idle (baseline): no object"
	if x.objects > 0 {
		what = fmt.Sprintf("%d of each kind (%d objects)", x.objects/kinds, x.objects)
	}
	fmt.Printf("%-34s %11.1f MiB %11.1f MiB %11.1f MiB %11.1f MiB %11.1f MiB %11.1f MiB\n", what,
		mib(x.managerRSS), mib(x.managerPeak), mib(x.managerHeap), mib(x.webhookRSS), mib(x.webhookPeak), mib(x.webhookHeap))
	fmt.Printf("%-34s resident set now, anonymous + file-backed: manager %.1f + %.1f MiB, webhook %.1f + %.1f MiB\n", "",
		mib(x.managerAnon), mib(x.managerFile), mib(x.webhookAnon), mib(x.webhookFile))
}

// reportMemory prints, after the readings, the growth per 1,000 objects
// of each stage (peak resident set, and live heap, which a soft limit
// does not bend), and the goals.
func reportMemory(r []memReading, o memoryOptions) error {
	for i := 1; i < len(r); i++ {
		per := float64(r[i].objects-r[i-1].objects) / 1000
		fmt.Printf("growth %d → %d objects, per 1,000 objects: manager %.2f MiB peak, %.2f MiB live heap; webhook %.2f MiB peak, %.2f MiB live heap\n",
			r[i-1].objects, r[i].objects, mib(r[i].managerPeak-r[i-1].managerPeak)/per, mib(r[i].managerHeap-r[i-1].managerHeap)/per,
			mib(r[i].webhookPeak-r[i-1].webhookPeak)/per, mib(r[i].webhookHeap-r[i-1].webhookHeap)/per)
	}
	last := r[len(r)-1]
	if len(r) >= 3 {
		first := r[1]
		lin := func(a, b, idle int64) float64 {
			return (float64(b-idle) / float64(last.objects)) / (float64(a-idle) / float64(first.objects))
		}
		fmt.Printf("per-object cost at %d against at %d objects (1.00 linear, below sublinear): manager %.2f, webhook %.2f\n",
			last.objects, first.objects, lin(first.managerPeak, last.managerPeak, r[0].managerPeak), lin(first.webhookPeak, last.webhookPeak, r[0].webhookPeak))
	}
	fmt.Printf("at %d objects, container limits %s and %s: manager peak %.1f MiB (goal ≤ 300, %.2f of it), webhook peak %.1f MiB (goal ≤ 150, %.2f of it)\n",
		last.objects, limitText(o.managerLimit), limitText(o.webhookLimit), mib(last.managerPeak), mib(last.managerPeak)/300, mib(last.webhookPeak), mib(last.webhookPeak)/150)
	return nil
}
