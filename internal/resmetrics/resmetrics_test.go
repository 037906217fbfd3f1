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

package resmetrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/resmetrics"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// sample is the repository's sample of obj's kind, named name in ns.
func sample(t *testing.T, kind, ns, name string, obj client.Object) {
	t.Helper()
	u := testenv.Sample(t, kind)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		t.Fatal(err)
	}
	obj.SetNamespace(ns)
	obj.SetName(name)
}

// scrape reads the handler as Prometheus would, parsing the text format
// with Prometheus's own parser.
func scrape(t *testing.T, url string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: HTTP %d: %s", resp.StatusCode, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("the scrape is not Prometheus's text format: %v\n%s", err, b)
	}
	return fams, string(b)
}

// value is the sample of family name whose labels include want, and
// whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if got[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue(), true
		default:
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func TestEachObjectHasItsSeriesFromTheCacheAndLosesThemWithIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ns, err := env.Namespace("resmetrics")
	if err != nil {
		t.Fatal(err)
	}
	c := env.Client
	create := func(o client.Object) {
		t.Helper()
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("create %T: %v", o, err)
		}
	}
	at := func(s string) *metav1.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &metav1.Time{Time: tm}
	}
	cond := func(typ string, s metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: "m", LastTransitionTime: metav1.Now()}
	}

	ni := &v1alpha1.NotionIntegration{}
	sample(t, "NotionIntegration", ns, "papers", ni)
	create(ni)
	ni.Status.Conditions = []metav1.Condition{cond(v1alpha1.ReadyCondition, metav1.ConditionTrue, v1alpha1.SucceededReason)}
	ni.Status.TokenExpiresAt = at("2026-11-28T10:00:00Z")
	ni.Status.LastTokenRefreshAt = at("2026-11-28T09:00:00Z")
	ni.Status.ConnectTokenHash = "c0ffee-connect-token-hash"
	if err := c.Status().Update(ctx, ni); err != nil {
		t.Fatal(err)
	}

	cw := &v1alpha1.CalendarWatch{}
	sample(t, "CalendarWatch", ns, "calendar", cw)
	create(cw)
	cw.Status.Conditions = []metav1.Condition{
		cond(v1alpha1.ReadyCondition, metav1.ConditionFalse, v1alpha1.ReauthRequiredReason),
		cond(v1alpha1.StalledCondition, metav1.ConditionTrue, v1alpha1.ReauthRequiredReason),
	}
	cw.Status.Channel = &v1alpha1.ChannelStatus{ID: "sb-x-1", Expiration: at("2026-12-05T00:00:00Z")}
	cw.Status.Notifications, cw.Status.AppointmentsDeleted = 7, 2
	cw.Status.TokenRefreshFailures = 3
	cw.Status.PendingDeliveries = []v1alpha1.SinkDelivery{{EventID: "e1", DeletedAt: metav1.Now()}}
	if err := c.Status().Update(ctx, cw); err != nil {
		t.Fatal(err)
	}

	rl := &v1alpha1.ReceiveLink{}
	sample(t, "ReceiveLink", ns, "share", rl)
	create(rl)
	rl.Status.ExpiresAt = at("2026-11-29T00:00:00Z")
	if err := c.Status().Update(ctx, rl); err != nil {
		t.Fatal(err)
	}

	// A SheetConnection never reconciled: Ready is Unknown.
	sc := &v1alpha1.SheetConnection{}
	sample(t, "SheetConnection", ns, "sheet", sc)
	create(sc)

	// Two pending PaperSyncs and a failed one of the integration.
	var pending []*v1alpha1.PaperSync
	for _, name := range []string{"p1", "p2", "p3"} {
		ps := &v1alpha1.PaperSync{}
		sample(t, "PaperSync", ns, name, ps)
		ps.Spec.IntegrationRef.Name = ni.Name
		create(ps)
		if name == "p3" {
			ps.Status.Phase = v1alpha1.SyncFailed
			ps.Status.CompletedAt = &metav1.Time{Time: time.Now()}
			if err := c.Status().Update(ctx, ps); err != nil {
				t.Fatal(err)
			}
			continue
		}
		pending = append(pending, ps)
	}

	ca, err := cache.New(env.Config, cache.Options{Scheme: setup.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ca.Start(ctx) }()
	var notLeading atomic.Bool
	h := &resmetrics.Handler{Reader: ca, Serving: func() bool { return !notLeading.Load() }}
	srv := httptest.NewServer(h)
	defer srv.Close()

	var fams map[string]*dto.MetricFamily
	var body string
	testenv.Eventually(t, "the cache holds every object as updated", func() bool {
		if !ca.WaitForCacheSync(ctx) {
			return false
		}
		fams, body = scrape(t, srv.URL)
		_, link := value(fams, "switchboard_receivelink_expiration_timestamp_seconds", nil)
		n, _ := value(fams, "switchboard_calendar_notifications_total", nil)
		f, _ := value(fams, "switchboard_backlog_failed", map[string]string{"parent": ni.Name})
		tok, _ := value(fams, "switchboard_oauth_token_expiration_timestamp_seconds", map[string]string{"name": ni.Name})
		return link && n == 7 && f == 1 && tok > 0
	})

	id := func(kind, name string, kv ...string) map[string]string {
		m := map[string]string{"kind": kind, "namespace": ns, "name": name}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		what   string
		family string
		labels map[string]string
		want   float64
	}{
		{"NotionIntegration Ready", "switchboard_resource_ready", id("NotionIntegration", "papers", "reason", v1alpha1.SucceededReason), 1},
		{"NotionIntegration not Stalled", "switchboard_resource_stalled", id("NotionIntegration", "papers", "reason", ""), 0},
		{"CalendarWatch not Ready", "switchboard_resource_ready", id("CalendarWatch", "calendar", "reason", v1alpha1.ReauthRequiredReason), 0},
		{"CalendarWatch Stalled", "switchboard_resource_stalled", id("CalendarWatch", "calendar", "reason", v1alpha1.ReauthRequiredReason), 1},
		{"SheetConnection not reconciled yet", "switchboard_resource_ready", id("SheetConnection", "sheet", "reason", "Unknown"), 0},
		{"ReceiveLink has no Ready yet", "switchboard_resource_ready", id("ReceiveLink", "share", "reason", "Unknown"), 0},
		{"token expiry", "switchboard_oauth_token_expiration_timestamp_seconds", id("NotionIntegration", "papers"), float64(ni.Status.TokenExpiresAt.Unix())},
		{"last refresh", "switchboard_oauth_token_last_refresh_timestamp_seconds", id("NotionIntegration", "papers"), float64(ni.Status.LastTokenRefreshAt.Unix())},
		{"no refresh failed", "switchboard_oauth_token_refresh_failures", id("NotionIntegration", "papers"), 0},
		{"refreshes failing", "switchboard_oauth_token_refresh_failures", id("CalendarWatch", "calendar"), 3},
		{"channel expiry", "switchboard_calendar_channel_expiration_timestamp_seconds", map[string]string{"namespace": ns, "name": "calendar"}, float64(cw.Status.Channel.Expiration.Unix())},
		{"notifications", "switchboard_calendar_notifications_total", map[string]string{"name": "calendar"}, 7},
		{"appointments deleted", "switchboard_calendar_appointments_deleted_total", map[string]string{"name": "calendar"}, 2},
		{"sink deliveries pending", "switchboard_calendar_sink_deliveries_pending", map[string]string{"name": "calendar"}, 1},
		{"link expiry", "switchboard_receivelink_expiration_timestamp_seconds", map[string]string{"name": "share"}, float64(rl.Status.ExpiresAt.Unix())},
		{"blob not deleted", "switchboard_receivelink_blob_deleted", map[string]string{"name": "share"}, 0},
		{"pending PaperSyncs", "switchboard_backlog_pending", map[string]string{"kind": "NotionIntegration", "namespace": ns, "parent": "papers"}, 2},
		{"failed PaperSyncs", "switchboard_backlog_failed", map[string]string{"kind": "NotionIntegration", "namespace": ns, "parent": "papers"}, 1},
		{"oldest pending", "switchboard_backlog_oldest_pending_timestamp_seconds", map[string]string{"parent": "papers"},
			float64(min(pending[0].CreationTimestamp.Unix(), pending[1].CreationTimestamp.Unix()))},
	} {
		got, ok := value(fams, c.family, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s: %s%v = %v (found %v), want %v", c.what, c.family, c.labels, got, ok, c.want)
		}
	}
	// One series per object and metric: no kind's objects repeat.
	if n := len(fams["switchboard_resource_ready"].GetMetric()); n != 4 {
		t.Errorf("switchboard_resource_ready has %d series, want 4 (one per parent object)", n)
	}
	if _, ok := value(fams, "switchboard_resource_ready", map[string]string{"kind": "PaperSync"}); ok {
		t.Errorf("children have readiness series: their parents' backlog counts them")
	}
	if strings.Contains(body, ni.Status.ConnectTokenHash) {
		t.Errorf("the scrape holds the connect token's hash")
	}
	// A channel not yet opened has no expiry series; the SheetConnection
	// has no token series before its first grant.
	if _, ok := value(fams, "switchboard_oauth_token_expiration_timestamp_seconds", id("SheetConnection", "sheet")); ok {
		t.Errorf("a SheetConnection never granted has a token expiry")
	}

	// Deleted, an object loses its series; a parent whose children are
	// all gone loses its backlog.
	if err := c.Delete(ctx, cw); err != nil {
		t.Fatal(err)
	}
	for _, ps := range []client.Object{pending[0], pending[1]} {
		if err := c.Delete(ctx, ps); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, "the deleted objects' series are gone", func() bool {
		fams, _ = scrape(t, srv.URL)
		_, watch := value(fams, "switchboard_resource_ready", id("CalendarWatch", "calendar"))
		_, channel := value(fams, "switchboard_calendar_channel_expiration_timestamp_seconds", nil)
		p, _ := value(fams, "switchboard_backlog_pending", map[string]string{"parent": "papers"})
		_, oldest := value(fams, "switchboard_backlog_oldest_pending_timestamp_seconds", nil)
		return !watch && !channel && p == 0 && !oldest
	})

	// A family without samples is still named.
	if _, body = scrape(t, srv.URL); !strings.Contains(body, "# TYPE switchboard_calendar_channel_expiration_timestamp_seconds gauge\n") {
		t.Errorf("a family with no object left is not named:\n%s", body)
	}

	// A replica that does not lead answers no series.
	notLeading.Store(true)
	if fams, body = scrape(t, srv.URL); len(fams) != 0 {
		t.Errorf("a replica that does not lead served %d families:\n%s", len(fams), body)
	}
}

// failingReader is a cache that cannot list.
type failingReader struct{ client.Reader }

func (failingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("informer not synced")
}

// A cache that cannot be read answers 503 and no partial page.
func TestACacheThatCannotBeReadAnswers503(t *testing.T) {
	srv := httptest.NewServer(&resmetrics.Handler{Reader: failingReader{}})
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || strings.Contains(string(b), "# TYPE") {
		t.Fatalf("HTTP %d:\n%s", resp.StatusCode, b)
	}
}

// series are the samples of fams whose namespace label is one of
// namespaces, each as "family{labels} value", sorted.
func series(fams map[string]*dto.MetricFamily, namespaces ...string) []string {
	var out []string
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			var labels []string
			keep := false
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
				if l.GetName() == "namespace" && slices.Contains(namespaces, l.GetValue()) {
					keep = true
				}
			}
			if keep {
				slices.Sort(labels)
				out = append(out, fmt.Sprintf("%s{%s} %v", name, strings.Join(labels, ","), m.GetGauge().GetValue()+m.GetCounter().GetValue()))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestACacheOfEveryNamespaceIsReadOffItsInformersStores: a cache of
// every namespace (the chart's default) is read off its informers' own
// objects, with no List (each List copies every object: at 70,000
// objects a scrape's copies took the manager 90 MiB past its peak); a
// cache of some namespaces is listed a namespace at a time; both pages
// hold the same series.
func TestACacheOfEveryNamespaceIsReadOffItsInformersStores(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var namespaces []string
	for range 2 {
		ns, err := env.Namespace("resmetrics-all")
		if err != nil {
			t.Fatal(err)
		}
		namespaces = append(namespaces, ns)
		for _, o := range []struct {
			kind string
			obj  client.Object
		}{{"NotionIntegration", &v1alpha1.NotionIntegration{}}, {"SlideStock", &v1alpha1.SlideStock{}}, {"PaperSync", &v1alpha1.PaperSync{}}} {
			sample(t, o.kind, ns, "one", o.obj)
			if p, ok := o.obj.(*v1alpha1.PaperSync); ok {
				p.Spec.IntegrationRef.Name = "one"
			}
			if err := env.Client.Create(ctx, o.obj); err != nil {
				t.Fatalf("create %s: %v", o.kind, err)
			}
		}
	}
	everywhere, err := cache.New(env.Config, cache.Options{Scheme: setup.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	some, err := cache.New(env.Config, cache.Options{Scheme: setup.Scheme(),
		DefaultNamespaces: map[string]cache.Config{namespaces[0]: {}, namespaces[1]: {}}})
	if err != nil {
		t.Fatal(err)
	}
	all, listed := &testenv.ListCounting{Cache: everywhere}, &testenv.ListCounting{Cache: some}
	for _, c := range []cache.Cache{everywhere, some} {
		go func() { _ = c.Start(ctx) }()
	}
	fromStores := httptest.NewServer(&resmetrics.Handler{Reader: all})
	defer fromStores.Close()
	fromLists := httptest.NewServer(&resmetrics.Handler{Reader: listed, Namespaces: namespaces})
	defer fromLists.Close()

	// Two parents and a backlog per namespace, each with its series.
	want := func(got []string) bool {
		n := 0
		for _, s := range got {
			if strings.HasPrefix(s, "switchboard_resource_ready{") || strings.HasPrefix(s, "switchboard_backlog_pending{") {
				n++
			}
		}
		return n == 6
	}
	var stores, lists []string
	testenv.Eventually(t, "both caches hold every object", func() bool {
		f, _ := scrape(t, fromStores.URL)
		stores = series(f, namespaces...)
		f, _ = scrape(t, fromLists.URL)
		lists = series(f, namespaces...)
		return want(stores) && want(lists)
	})
	if !slices.Equal(stores, lists) {
		t.Errorf("the pages differ:\nfrom the stores:\n%s\nfrom lists:\n%s", strings.Join(stores, "\n"), strings.Join(lists, "\n"))
	}
	if n := all.Lists.Load(); n != 0 {
		t.Errorf("a cache of every namespace was listed %d times: each List copies every object", n)
	}
	if n := listed.Lists.Load(); n == 0 {
		t.Errorf("a cache of some namespaces was never listed: the test reads the same path twice")
	}
}

// Every kind of the API has readiness series, or is a child its parent's
// backlog counts: a new kind is not left without series because no table
// here names it.
func TestEveryKindHasReadinessSeriesOrIsCountedInABacklog(t *testing.T) {
	ready, stalled := resmetrics.Kinds("switchboard_resource_ready"), resmetrics.Kinds("switchboard_resource_stalled")
	counted := resmetrics.Kinds("switchboard_backlog_pending")
	if len(ready) == 0 || len(counted) == 0 {
		t.Fatalf("readiness covers %v, the backlog counts %v: want some kinds in each", ready, counted)
	}
	for _, k := range v1alpha1.Kinds() {
		r, s, c := slices.Contains(ready, k), slices.Contains(stalled, k), slices.Contains(counted, k)
		if r == c || r != s {
			t.Errorf("%s: readiness series %v, stalled series %v, counted in a backlog %v: want readiness and stalled series, or a backlog", k, r, s, c)
		}
	}
	if got := append(slices.Clone(ready), counted...); len(got) != len(v1alpha1.Kinds()) {
		t.Errorf("the metrics cover %v, want each of %v once", got, v1alpha1.Kinds())
	}
}
