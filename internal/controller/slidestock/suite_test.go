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

package slidestock_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/controller/slidestock"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/oembed"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// The suite runs the real controller in a manager against a real API
// server, fetching from the sandbox through the outbound policy.

// testTimeout is the outbound timeout in these tests (seed 001 §9 says
// 10 s; a shorter one keeps the timeout rows fast).
const testTimeout = 300 * time.Millisecond

var (
	env  *testenv.Env
	box  *sandbox.Server
	sd   = sandbox.NewSpeakerDeck()
	dw   = sandbox.NewDocswell()
	gs   = sandbox.NewGoogleSlides()
	hook = &statusHook{fail: map[string]int{}, writes: map[string]int{}}
)

// statusHook counts status writes per stock and fails the first N of a
// named stock, to test "DB update failure: retry" (seed 001 §7.2) on the
// real API server.
type statusHook struct {
	mu     sync.Mutex
	fail   map[string]int
	writes map[string]int
}

func (h *statusHook) failNext(key types.NamespacedName, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fail[key.String()] = n
}

func (h *statusHook) writesOf(key types.NamespacedName) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.writes[key.String()]
}

// hookedClient is the manager's client with status writes going through
// the hook; everything else reaches the API server unchanged.
type hookedClient struct {
	client.Client
	hook *statusHook
}

func (c hookedClient) Status() client.SubResourceWriter {
	return hookedStatus{SubResourceWriter: c.Client.Status(), hook: c.hook}
}

type hookedStatus struct {
	client.SubResourceWriter
	hook *statusHook
}

func (s hookedStatus) Patch(ctx context.Context, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
	h := s.hook
	key := client.ObjectKeyFromObject(obj).String()
	h.mu.Lock()
	if h.fail[key] > 0 {
		h.fail[key]--
		h.mu.Unlock()
		return fmt.Errorf("injected status write failure")
	}
	h.writes[key]++
	h.mu.Unlock()
	return s.SubResourceWriter.Patch(ctx, obj, p, opts...)
}

func TestMain(m *testing.M) {
	testenv.Main(m, &env, func(e *testenv.Env) (func(), error) {
		box = sandbox.New(sd, dw, gs)
		srv := httptest.NewServer(box)
		ups := sandbox.Upstreams(srv.URL)
		// The operator as cmd/manager builds it, with the controller's
		// client wrapped to count and fail status writes, and seed 001's
		// retries shortened.
		_, stop, err := testenv.StartOperator(e.Config, wire.Operator{Upstreams: ups, OutboundOptions: outbound.Options{Timeout: testTimeout},
			Kinds: []wire.Kind{wire.SetupFunc{Named: "slidestock", Func: func(mgr ctrl.Manager, d wire.Deps) error {
				r := &slidestock.Reconciler{
					Client:   hookedClient{Client: mgr.GetClient(), hook: hook},
					Fetcher:  &oembed.Client{Out: d.Outbound},
					Recorder: mgr.GetEventRecorder("slidestock-controller"),
					Retries:  outbound.Schedule{Base: 20 * time.Millisecond, Retries: slidestock.MaxAttempts - 1, Max: 5 * time.Second, Jitter: outbound.NoJitter},
				}
				return r.SetupWithManager(mgr)
			}}}})
		if err != nil {
			return nil, err
		}
		return func() { stop(); srv.Close() }, nil
	})
}

// waitFor polls the stock until cond holds.
func waitFor(t *testing.T, key types.NamespacedName, what string, cond func(*v1alpha1.SlideStock) bool) *v1alpha1.SlideStock {
	t.Helper()
	var s *v1alpha1.SlideStock
	testenv.EventuallyReport(t, 20*time.Second, fmt.Sprintf("%s on %s", what, key.Name), func() (bool, string) {
		s = &v1alpha1.SlideStock{}
		if err := env.Client.Get(context.Background(), key, s); err != nil {
			t.Fatal(err)
		}
		return s.Status.ObservedGeneration == s.Generation && cond(s), fmt.Sprintf("status %+v", s.Status)
	})
	return s
}

func settled(s *v1alpha1.SlideStock) bool {
	return s.Status.Phase == v1alpha1.SlideReady || s.Status.Phase == v1alpha1.SlideFailed
}
