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

package calendarwatch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/calendarpush"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/gcalendar"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// These tests drive the controller's Reconcile by hand with a fake clock,
// on a real API server, against the sandbox's Google OAuth and Calendar
// through the real calendar/v3 library: timers (backup sync, renewal,
// backoff, the deletion give-up) are asserted without waiting for them.

var (
	env      *testenv.Env
	box      *sandbox.Server
	googleEm = sandbox.NewGoogleOAuth()
	calEm    = sandbox.NewGoogleCalendar(googleEm)
	out      *outbound.Client
	cal      *gcalendar.Client
	// pushURL receives the sandbox's pushes (and answers 200): these tests
	// record notifications themselves, as the webhook would.
	pushURL string
	clk     atomic.Pointer[clocktesting.FakeClock]
)

func TestMain(m *testing.M) {
	testenv.Main(m, &env, func(*testenv.Env) (func(), error) {
		now := func() time.Time {
			if c := clk.Load(); c != nil {
				return c.Now()
			}
			return time.Now()
		}
		googleEm.Now, calEm.Now = now, now
		googleEm.AddClient("cal-client", "cal-secret")
		box = sandbox.New(googleEm, calEm)
		srv := httptest.NewServer(box)
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
		pushURL = hook.URL
		var err error
		// The sink servers of these tests listen on 127.0.0.1, which the
		// manager's sink policy refuses: allowed here, and only here
		// (ssrf_test.go runs the production policy).
		sinks := outbound.SinkPolicy{AllowLoopback: true}
		if out, err = outbound.New(sandbox.Upstreams(srv.URL), outbound.Options{Timeout: 2 * time.Second, Sink: sinks}); err != nil {
			return nil, err
		}
		if cal, err = gcalendar.New(context.Background(), out); err != nil {
			return nil, err
		}
		return func() { calEm.Close(); hook.Close(); srv.Close() }, nil
	})
}

type fixture struct {
	ns, calendar string
	key          types.NamespacedName
	clock        *clocktesting.FakeClock
	rec          *recorder
	r            *Reconciler
	run          *runner.Runner[*v1alpha1.CalendarWatch]
}

// recorder keeps every Event's text.
type recorder = testenv.Recorder

var calCount atomic.Int64

func newFixture(t *testing.T, change func(*v1alpha1.CalendarWatch)) *fixture {
	t.Helper()
	ctx := context.Background()
	c := clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
	clk.Store(c)
	t.Cleanup(func() { clk.Store(nil) })
	ns, err := env.Namespace("calw")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{ns: ns, calendar: "cal" + strconv.FormatInt(calCount.Add(1), 10) + "@example.com",
		key: types.NamespacedName{Namespace: ns, Name: "visits"}, clock: c, rec: &recorder{}}
	calEm.AddCalendar(f.calendar)
	if err := testenv.CalendarWatch(ctx, env.Client, ns, f.calendar, googleEm.IssueRefreshToken("cal-client", targets.CalendarScope), change); err != nil {
		t.Fatal(err)
	}
	engine := setup.Engine(env, out)
	engine.Clock = c
	f.r = &Reconciler{
		Client: env.Client, APIReader: env.Client, Calendar: cal, Out: out, Recorder: f.rec, Clock: c, PublicURL: pushURL, OAuth: engine,
	}
	f.run = f.r.Runner()
	return f
}

func (f *fixture) reconcile(t *testing.T) ctrl.Result {
	t.Helper()
	res, err := f.run.Reconcile(context.Background(), ctrl.Request{NamespacedName: f.key})
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	return res
}

func (f *fixture) watch(t *testing.T) *v1alpha1.CalendarWatch {
	t.Helper()
	w := &v1alpha1.CalendarWatch{}
	if err := env.Client.Get(context.Background(), f.key, w); err != nil {
		t.Fatal(err)
	}
	return w
}

// notify records a notification as the webhook does.
func (f *fixture) notify(t *testing.T, num int64) {
	t.Helper()
	w := f.watch(t)
	patch := client.MergeFrom(w.DeepCopy())
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, v1alpha1.CalendarNotificationAnnotation,
		calendarpush.Notification{ChannelID: w.Status.Channel.ID, MessageNumber: num, State: "exists"}.String())
	if err := env.Client.Patch(context.Background(), w, patch); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) event(summary string) string {
	start := f.clock.Now().Add(24 * time.Hour)
	return calEm.CreateEvent(f.calendar, sandbox.CalendarEvent{Summary: summary, Start: start, End: start.Add(time.Hour)})
}

func (f *fixture) appointment(t *testing.T, name, eventID string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}}
	if eventID != "" {
		cm.Labels = map[string]string{v1alpha1.DefaultEventIDLabel: eventID}
	}
	if err := env.Client.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) exists(t *testing.T, name string) bool {
	t.Helper()
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: name}, &corev1.ConfigMap{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func (f *fixture) secret(t *testing.T, name string) map[string]string {
	t.Helper()
	var s corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for k, v := range s.Data {
		m[k] = string(v)
	}
	return m
}

func condition(w *v1alpha1.CalendarWatch, typ string) metav1.Condition {
	for _, c := range w.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}
