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

package setup_test

import (
	"context"
	"flag"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/setup"
)

func TestKubeAPIFlagsRefuseWhatTheyCannotMean(t *testing.T) {
	for name, c := range map[string]struct {
		args      []string
		want      setup.KubeAPI
		wantBurst int
		wantErr   string
	}{
		"the defaults: no limit":            {want: setup.KubeAPI{}},
		"a rate and a burst":                {args: []string{"--kube-api-qps=50", "--kube-api-burst=100"}, want: setup.KubeAPI{QPS: 50, Burst: 100}, wantBurst: 100},
		"a rate alone: twice it as burst":   {args: []string{"--kube-api-qps=7.5"}, want: setup.KubeAPI{QPS: 7.5}, wantBurst: 15},
		"a burst of the rate rounded up":    {args: []string{"--kube-api-qps=2.5", "--kube-api-burst=3"}, want: setup.KubeAPI{QPS: 2.5, Burst: 3}, wantBurst: 3},
		"a rate below one a second":         {args: []string{"--kube-api-qps=0.2"}, want: setup.KubeAPI{QPS: 0.2}, wantBurst: 1},
		"a negative rate":                   {args: []string{"--kube-api-qps=-1"}, wantErr: "--kube-api-qps -1 must be a number of requests per second, 0 or more"},
		"a rate that is not a number":       {args: []string{"--kube-api-qps=NaN"}, wantErr: "--kube-api-qps NaN must be"},
		"an infinite rate":                  {args: []string{"--kube-api-qps=+Inf"}, wantErr: "--kube-api-qps +Inf must be"},
		"a negative burst":                  {args: []string{"--kube-api-qps=5", "--kube-api-burst=-2"}, wantErr: "--kube-api-burst -2 must be 1 or more"},
		"a burst without a rate":            {args: []string{"--kube-api-burst=30"}, wantErr: "--kube-api-burst 30 needs --kube-api-qps"},
		"a burst below the rate":            {args: []string{"--kube-api-qps=20", "--kube-api-burst=10"}, wantErr: "--kube-api-burst 10 must be at least --kube-api-qps 20 rounded up (20)"},
		"a burst below the rate rounded up": {args: []string{"--kube-api-qps=2.5", "--kube-api-burst=2"}, wantErr: "--kube-api-burst 2 must be at least --kube-api-qps 2.5 rounded up (3)"},
	} {
		t.Run(name, func(t *testing.T) {
			var k setup.KubeAPI
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			setup.BindKubeAPIFlags(&k, fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			err := k.Validate()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("%v: error %v, want one saying %q", c.args, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v: %v", c.args, err)
			}
			if k != c.want {
				t.Errorf("%v parsed to %+v, want %+v", c.args, k, c.want)
			}
			if k.QPS > 0 && k.EffectiveBurst() != c.wantBurst {
				t.Errorf("%v: burst %d, want %d", c.args, k.EffectiveBurst(), c.wantBurst)
			}
		})
	}
}

func TestNoKubeAPIQPSLeavesTheClientUnthrottled(t *testing.T) {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 0, 0 // client-go would read 0 as its default, 5/s
	cs, err := kubernetes.NewForConfig(setup.KubeAPI{}.Limit(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if rl := cs.CoreV1().RESTClient().GetRateLimiter(); rl != nil {
		t.Errorf("with --kube-api-qps 0 the client has a rate limiter of %v/s", rl.QPS())
	}
	limited, err := kubernetes.NewForConfig(setup.KubeAPI{QPS: 5, Burst: 2}.Limit(cfg))
	if err != nil {
		t.Fatal(err)
	}
	core, apps := limited.CoreV1().RESTClient().GetRateLimiter(), limited.AppsV1().RESTClient().GetRateLimiter()
	if core == nil || core.QPS() != 5 || core != apps {
		t.Errorf("with --kube-api-qps 5 the core client's limiter is %v, the apps client's %v: want one, of 5/s", core, apps)
	}
	// What is exempt from the limit (the Lease, the probe) is built from
	// the config the limit was applied to: that one stays unthrottled.
	if cfg.QPS != 0 || cfg.Burst != 0 || cfg.RateLimiter != nil {
		t.Errorf("Limit changed the config it was given: QPS %v, burst %d, limiter %v", cfg.QPS, cfg.Burst, cfg.RateLimiter)
	}
}

// sentAt records when each request left the client for the API server.
type sentAt struct {
	mu    sync.Mutex
	times []time.Time
}

func (s *sentAt) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		s.mu.Lock()
		s.times = append(s.times, time.Now())
		s.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (s *sentAt) since(start time.Time) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Time
	for _, at := range s.times {
		if !at.Before(start) {
			out = append(out, at)
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// TestTheClientStaysWithinKubeAPIQPSAndBurst fires requests from several
// goroutines through two clients (controller-runtime's, one REST client
// per kind, and a clientset) built from one limited config, against a real
// API server, and checks every window of the requests sent.
func TestTheClientStaysWithinKubeAPIQPSAndBurst(t *testing.T) {
	const qps, burst, workers, each = 5, 2, 4, 4
	ns, err := env.Namespace("kubeapi")
	if err != nil {
		t.Fatal(err)
	}
	sent := &sentAt{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = sent.wrap
	limited := setup.KubeAPI{QPS: qps, Burst: burst}.Limit(cfg)
	cl, err := client.New(limited, client.Options{Scheme: setup.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(limited)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	requests := []func() error{
		func() error { return cl.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns)) },
		func() error { return cl.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}) },
		func() error { return cl.List(ctx, &corev1.ServiceAccountList{}, client.InNamespace(ns)) },
		func() error { _, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); return err },
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				errs <- requests[(w+i)%len(requests)]()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkWithin(t, sent.since(start), start, qps, burst, workers*each)
}

// checkWithin: no window between two requests holds more than burst + qps
// × its length (+1, for a request held up between the bucket and the
// transport on a loaded machine), and the requests took at least what the
// bucket allows (less 200 ms).
func checkWithin(t *testing.T, times []time.Time, start time.Time, qps float64, burst, fired int) {
	t.Helper()
	if len(times) < fired {
		t.Fatalf("%d requests sent, want at least the %d fired", len(times), fired)
	}
	for i := range times {
		for j := i + 1; j < len(times); j++ {
			window := times[j].Sub(times[i]).Seconds()
			if n, most := j-i+1, float64(burst)+qps*window+1; float64(n) > most {
				t.Fatalf("%d requests sent in %.3f s (requests %d to %d): want at most %.1f at %v/s with a burst of %d",
					n, window, i+1, j+1, most, qps, burst)
			}
		}
	}
	took, least := times[len(times)-1].Sub(start), time.Duration(float64(len(times)-burst)/qps*float64(time.Second))
	if took < least-200*time.Millisecond {
		t.Errorf("%d requests sent in %s: want at least %s at %v/s with a burst of %d", len(times), took, least, qps, burst)
	}
	t.Logf("%d requests in %s (the bucket's least: %s)", len(times), took.Round(time.Millisecond), least)
}
