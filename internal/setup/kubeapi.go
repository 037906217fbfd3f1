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

package setup

import (
	"flag"
	"fmt"
	"math"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// KubeAPI is how hard a binary's client may press the Kubernetes API
// server (--kube-api-qps, --kube-api-burst). The zero value sets no
// client-side limit, which is what both binaries did before the flags:
// ctrl.GetConfig (controller-runtime v0.25) sets QPS -1 and leaves the
// API server's API Priority and Fairness to slow a client down.
type KubeAPI struct {
	// QPS is the requests per second sent on average; 0 is no limit.
	QPS float64
	// Burst is the requests sent at once before QPS paces them; 0 is
	// twice QPS rounded up (client-go's own ratio, 5 and 10).
	Burst int
}

// BindKubeAPIFlags registers --kube-api-qps and --kube-api-burst of both
// binaries into k.
func BindKubeAPIFlags(k *KubeAPI, fs *flag.FlagSet) {
	fs.Float64Var(&k.QPS, "kube-api-qps", 0, "Requests per second this process sends to the Kubernetes API server on average, all its clients together (a token bucket of --kube-api-burst); "+
		"leader election's Lease and the readiness probe's API server check are outside it. 0 is no client-side limit, controller-runtime's default: the API server's API Priority and Fairness alone slows the process down.")
	fs.IntVar(&k.Burst, "kube-api-burst", 0, "Requests sent at once before --kube-api-qps paces them; at least --kube-api-qps rounded up. 0 is twice --kube-api-qps, rounded up. Needs --kube-api-qps.")
}

// Validate refuses what the flags cannot mean, naming them.
func (k KubeAPI) Validate() error {
	switch {
	case math.IsNaN(k.QPS) || math.IsInf(k.QPS, 0) || k.QPS < 0:
		return fmt.Errorf("--kube-api-qps %v must be a number of requests per second, 0 or more (0: no limit)", k.QPS)
	case k.Burst < 0:
		return fmt.Errorf("--kube-api-burst %d must be 1 or more (or 0: twice --kube-api-qps)", k.Burst)
	case k.Burst > 0 && k.QPS == 0:
		return fmt.Errorf("--kube-api-burst %d needs --kube-api-qps: without it the client has no limit to burst above", k.Burst)
	case k.Burst > 0 && float64(k.Burst) < math.Ceil(k.QPS):
		return fmt.Errorf("--kube-api-burst %d must be at least --kube-api-qps %v rounded up (%v): a smaller bucket never holds one second's requests", k.Burst, k.QPS, math.Ceil(k.QPS))
	}
	return nil
}

// EffectiveBurst is the bucket's size: Burst, or twice QPS rounded up.
func (k KubeAPI) EffectiveBurst() int {
	if k.Burst > 0 {
		return k.Burst
	}
	return int(math.Min(math.Ceil(2*k.QPS), math.MaxInt32))
}

// Limit returns a copy of cfg for the binary's clients. With QPS set, every
// client built from the copy, or from a copy of it, takes its requests
// from one token bucket: client-go gives each REST client a bucket of its
// own from QPS and Burst alone, and controller-runtime builds one REST
// client per resource kind, so without the shared bucket the process could
// send QPS requests a second per kind. With QPS 0 the copy sets no limit.
// cfg itself is left as it was: what must never wait behind the client's
// own traffic (leader election's Lease renewals) is built from it.
func (k KubeAPI) Limit(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	if k.QPS == 0 {
		out.QPS, out.RateLimiter = -1, nil
		return out
	}
	out.QPS, out.Burst = float32(k.QPS), k.EffectiveBurst()
	out.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(out.QPS, out.Burst)
	return out
}
