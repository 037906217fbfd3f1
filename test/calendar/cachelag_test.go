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

package calendar_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// laggingWebhook is a second webhook server, on the webhook's own
// identity and API reader, whose cache of CalendarWatches is frozen at the
// moment of freeze: the worst a lagging informer can do, made
// deterministic. What its push route records must still never go back.
type laggingWebhook struct {
	url    string
	frozen *frozenWatches
}

// frozenWatches answers List of CalendarWatches with a snapshot; every
// other read and every write goes to the webhook's real client.
type frozenWatches struct {
	client.Client
	mu   sync.Mutex
	snap *v1alpha1.CalendarWatchList
}

func (c *frozenWatches) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if l, ok := list.(*v1alpha1.CalendarWatchList); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.snap != nil {
			c.snap.DeepCopyInto(l)
			return nil
		}
	}
	return c.Client.List(ctx, list, opts...)
}

func newLaggingWebhook(t *testing.T) *laggingWebhook {
	t.Helper()
	frozen := &frozenWatches{Client: hookMgr.GetClient()}
	out, err := outbound.New(ups, outbound.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := webhook.NewServer(webhook.Options{Log: logr.Discard()},
		webhook.Deps{Client: frozen, APIReader: hookMgr.GetAPIReader(), Upstreams: ups, Outbound: out, Log: logr.Discard(), PublicURL: hookURL, StateNamespace: "default"},
		webhook.Families()...)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &laggingWebhook{url: hs.URL, frozen: frozen}
}

// freeze makes the server's cache hold w as it is now, and nothing newer.
func (l *laggingWebhook) freeze(w *v1alpha1.CalendarWatch) {
	l.frozen.mu.Lock()
	defer l.frozen.mu.Unlock()
	l.frozen.snap = &v1alpha1.CalendarWatchList{Items: []v1alpha1.CalendarWatch{*w.DeepCopy()}}
}

// push posts a notification to the lagging server.
func (l *laggingWebhook) push(t *testing.T, h http.Header) int {
	t.Helper()
	return pushTo(t, l.url, h)
}

// A push whose number is below the recorded one, judged by a cache that
// has not seen the record yet, must not overwrite it: the record is
// checked against the live object (issue 18, item 8).
func TestALateNotificationJudgedByAStaleCacheDoesNotLowerTheRecord(t *testing.T) {
	f := newFixture(t, nil)
	w := f.ready(t)
	tok, ch := f.channelToken(t), w.Status.Channel.ID
	lag := newLaggingWebhook(t)
	lag.freeze(w)
	base := int64(1 << 30)
	for _, n := range []int64{base + 300, base + 100, base + 300, base + 200} {
		if got := lag.push(t, pushHeaders(ch, tok, "exists", n)); got != http.StatusOK {
			t.Fatalf("push %d answered %d", n, got)
		}
		if got, want := f.watch(t).Annotations[v1alpha1.CalendarNotificationAnnotation], ch+"/"+itoa(base+300)+"/exists"; got != want {
			t.Fatalf("after %d the record is %q, want %q", n, got, want)
		}
	}
}
