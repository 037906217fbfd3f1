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

package memory

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

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
	v, err := bench.MetricValue("http://"+metricsAddr+"/metrics", "go_memstats_heap_alloc_bytes")
	return int64(v), err
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
	if p.manager, err = bench.StartBinary(ctx, env, bin, "manager", ports[1], time.Minute, softLimitEnv(o.managerLimit), append(append([]string{"--metrics-bind-address", ports[2]}, managerArgs...), common...)...); err != nil {
		return p, stop, err
	}
	p.webhook, err = bench.StartBinary(ctx, env, bin, "webhook", ports[3], time.Minute, softLimitEnv(o.webhookLimit), append(append([]string{"--metrics-bind-address", ports[4], "--bind-address", ports[0]}, hookArgs...), common...)...)
	return p, stop, err
}

// softLimitEnv is the environment of a binary run as in a container with
// limit bytes of memory (none for 0).
func softLimitEnv(limit int64) []string {
	if limit == 0 {
		return nil
	}
	return []string{fmt.Sprintf("GOMEMLIMIT=%d", setup.SoftMemoryLimit(limit))}
}
