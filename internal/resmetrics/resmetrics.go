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

// Package resmetrics serves the manager's metrics per resource: each
// object's readiness, the expiries a person relies on (access tokens, push
// channels, share links), and each parent's backlog of PaperSyncs or
// SheetSyncs, read from the manager's informer cache when Prometheus
// scrapes them (as kube-state-metrics does), so that a series lives
// exactly as long as its object and the manager keeps no state for them.
//
// They are written in Prometheus's text format straight from the cache:
// each metric's samples are read off the informers' own objects (their
// stores, listed without a copy), so that a scrape holds a slice of
// pointers per kind and the page's 64 KiB buffer, whatever the number of
// objects. At 70,000 objects the page is 240,000 series (24 MiB). Built in
// memory as text first, one scrape took the manager from 289.5 to 347.3
// MiB; listed into typed lists (each object copied by value) and held as
// samples until written, from 293.5 to 383.5 MiB: the copies' garbage,
// made faster than a manager near its soft memory limit collects it. Read
// off the stores, a scrape left the peak at 295.4 MiB, in 3.2 s.
//
// No label carries a token, a URL or a user's id: only kinds, namespaces,
// names and condition reasons.
package resmetrics

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/status"
)

// Path is where the manager's metrics server serves these metrics, beside
// controller-runtime's /metrics.
const Path = "/metrics/resources"

// Handler serves the metrics of the objects Reader holds.
type Handler struct {
	// Reader is the manager's cache: a scrape reads no API server. When it
	// is a cache.Informers whose informers are client-go's (a cache of
	// every namespace), each kind is read off its informer's store without
	// a copy; otherwise (a cache of some namespaces) through List, without
	// deep copies.
	Reader client.Reader
	// Namespaces are the namespaces Reader caches (the manager's
	// --watch-namespaces; empty: every one). Listed through List, each is
	// listed on its own, so that each object is copied once, not again
	// into a list of all namespaces.
	Namespaces []string
	// Serving reports whether this replica answers with series: only the
	// leader does, so that replicas do not repeat each other's. Nil
	// answers always.
	Serving func() bool
	// Timeout bounds one scrape's reads (default 10s).
	Timeout time.Duration
}

// kind is one kind a metric covers: its name, a new empty object and a
// new empty list of it.
type kind struct {
	name string
	obj  func() client.Object
	list func() client.ObjectList
}

var (
	notionKind = kind{"NotionIntegration", func() client.Object { return &v1alpha1.NotionIntegration{} },
		func() client.ObjectList { return &v1alpha1.NotionIntegrationList{} }}
	slidesKind = kind{"SlideStock", func() client.Object { return &v1alpha1.SlideStock{} },
		func() client.ObjectList { return &v1alpha1.SlideStockList{} }}
	calendarKind = kind{"CalendarWatch", func() client.Object { return &v1alpha1.CalendarWatch{} },
		func() client.ObjectList { return &v1alpha1.CalendarWatchList{} }}
	linkKind = kind{"ReceiveLink", func() client.Object { return &v1alpha1.ReceiveLink{} },
		func() client.ObjectList { return &v1alpha1.ReceiveLinkList{} }}
	sheetsKind = kind{"SheetConnection", func() client.Object { return &v1alpha1.SheetConnection{} },
		func() client.ObjectList { return &v1alpha1.SheetConnectionList{} }}
	paperKind = kind{"PaperSync", func() client.Object { return &v1alpha1.PaperSync{} },
		func() client.ObjectList { return &v1alpha1.PaperSyncList{} }}
	sheetSyncKind = kind{"SheetSync", func() client.Object { return &v1alpha1.SheetSync{} },
		func() client.ObjectList { return &v1alpha1.SheetSyncList{} }}
	signUpKind = kind{"NotionSignup", func() client.Object { return &v1alpha1.NotionSignup{} },
		func() client.ObjectList { return &v1alpha1.NotionSignupList{} }}

	// parents are the kinds with readiness series; oauthKinds those with
	// token series.
	parents    = []kind{notionKind, slidesKind, calendarKind, linkKind, sheetsKind, signUpKind}
	oauthKinds = []kind{notionKind, calendarKind, sheetsKind}
)

// metric is one metric as it is written: its name, type and help, the
// kinds it covers, and what it reads of each object: a value, and the
// reason label's value when it has one (ok false: no sample).
type metric struct {
	name, typ, help string
	kinds           []kind
	// byKind labels samples with kind, namespace and name (else
	// namespace and name); reason adds a reason label.
	byKind, reason bool
	value          func(o runtime.Object) (v float64, reason string, ok bool)
}

// condition is the status and reason of o's condition typ, and whether
// o has it.
func condition(o runtime.Object, typ string) (bool, string, bool) {
	c := status.Get(o.(status.Object), typ)
	if c == nil {
		return false, "", false
	}
	return c.Status == metav1.ConditionTrue, c.Reason, true
}

func tokenOf(o runtime.Object) *v1alpha1.TokenStatus {
	return o.(v1alpha1.OAuthObject).GetTokenStatus()
}

func timestamp(t *metav1.Time) (float64, string, bool) {
	if t == nil {
		return 0, "", false
	}
	return seconds(t.Time), "", true
}

func count[N int | int32 | int64](n N) (float64, string, bool) { return float64(n), "", true }

// metrics are the metrics, in the order they are written. Their names,
// types and labels are documented in docs/metrics.md.
var metrics = []metric{
	{"switchboard_resource_ready", "gauge",
		"Whether the object's Ready condition is True (1) or not (0), with the condition's reason (Unknown before the first reconcile).",
		parents, true, true, func(o runtime.Object) (float64, string, bool) {
			ready, reason, ok := condition(o, v1alpha1.ReadyCondition)
			if !ok {
				reason = "Unknown"
			}
			return boolean(ready), reason, true
		}},
	{"switchboard_resource_stalled", "gauge",
		"Whether the object's Stalled condition is True (1: a person must act) or not (0), with the condition's reason.",
		parents, true, true, func(o runtime.Object) (float64, string, bool) {
			stalled, reason, _ := condition(o, v1alpha1.StalledCondition)
			if !stalled {
				reason = ""
			}
			return boolean(stalled), reason, true
		}},
	{"switchboard_oauth_token_expiration_timestamp_seconds", "gauge",
		"When the access token of the object's working grant expires (status.tokenExpiresAt), in Unix seconds.",
		oauthKinds, true, false, func(o runtime.Object) (float64, string, bool) { return timestamp(tokenOf(o).TokenExpiresAt) }},
	{"switchboard_oauth_token_last_refresh_timestamp_seconds", "gauge",
		"When the object's access token was last refreshed (status.lastTokenRefreshAt), in Unix seconds.",
		oauthKinds, true, false, func(o runtime.Object) (float64, string, bool) { return timestamp(tokenOf(o).LastTokenRefreshAt) }},
	{"switchboard_oauth_token_refresh_failures", "gauge",
		"Refreshes of the object's access token that failed since the last that succeeded (status.tokenRefreshFailures).",
		oauthKinds, true, false, func(o runtime.Object) (float64, string, bool) { return count(tokenOf(o).TokenRefreshFailures) }},
	{"switchboard_calendar_channel_expiration_timestamp_seconds", "gauge",
		"When the CalendarWatch's current Google push channel expires (status.channel.expiration), in Unix seconds.",
		[]kind{calendarKind}, false, false, func(o runtime.Object) (float64, string, bool) {
			if ch := o.(*v1alpha1.CalendarWatch).Status.Channel; ch != nil {
				return timestamp(ch.Expiration)
			}
			return 0, "", false
		}},
	{"switchboard_calendar_notifications_total", "counter",
		"Push notifications the CalendarWatch handled (status.notifications).",
		[]kind{calendarKind}, false, false, func(o runtime.Object) (float64, string, bool) {
			return count(o.(*v1alpha1.CalendarWatch).Status.Notifications)
		}},
	{"switchboard_calendar_appointments_deleted_total", "counter",
		"Appointments the CalendarWatch deleted for cancelled events (status.appointmentsDeleted).",
		[]kind{calendarKind}, false, false, func(o runtime.Object) (float64, string, bool) {
			return count(o.(*v1alpha1.CalendarWatch).Status.AppointmentsDeleted)
		}},
	{"switchboard_calendar_sink_deliveries_pending", "gauge",
		"Deliveries to the CalendarWatch's sink waiting to be sent or retried (status.pendingDeliveries).",
		[]kind{calendarKind}, false, false, func(o runtime.Object) (float64, string, bool) {
			return count(len(o.(*v1alpha1.CalendarWatch).Status.PendingDeliveries))
		}},
	{"switchboard_receivelink_expiration_timestamp_seconds", "gauge",
		"When the ReceiveLink's share link expires (status.expiresAt), in Unix seconds.",
		[]kind{linkKind}, false, false, func(o runtime.Object) (float64, string, bool) {
			return timestamp(o.(*v1alpha1.ReceiveLink).Status.ExpiresAt)
		}},
	{"switchboard_receivelink_blob_deleted", "gauge",
		"Whether the ReceiveLink's blob has been deleted after its expiry (1) or still exists (0).",
		[]kind{linkKind}, false, false, func(o runtime.Object) (float64, string, bool) {
			l := o.(*v1alpha1.ReceiveLink)
			return boolean(l.Status.BlobDeletedAt != nil), "", l.Status.ExpiresAt != nil
		}},
}

// backlogMetrics are written after metrics, from the children counted per
// parent.
var backlogMetrics = []struct {
	name, help string
	value      func(*backlog) (float64, bool)
}{
	{"switchboard_backlog_pending", "Unfinished children (PaperSyncs of a NotionIntegration, SheetSyncs of a SheetConnection) of the parent.",
		func(b *backlog) (float64, bool) { return float64(b.pending), true }},
	{"switchboard_backlog_failed", "Children of the parent that failed for good (phase Failed), kept for their retention.",
		func(b *backlog) (float64, bool) { return float64(b.failed), true }},
	{"switchboard_backlog_oldest_pending_timestamp_seconds", "When the parent's oldest unfinished child was created, in Unix seconds.",
		func(b *backlog) (float64, bool) { return seconds(b.oldest), b.pending > 0 }},
}

// page writes the text format, buffered; num is the scratch a value is
// formatted in.
type page struct {
	w   *bufio.Writer
	num []byte
}

// sent is the response, counting what has gone out to it.
type sent struct {
	w io.Writer
	n int
}

func (s *sent) Write(b []byte) (int, error) {
	n, err := s.w.Write(b)
	s.n += n
	return n, err
}

func (p *page) header(name, typ, help string) {
	fmt.Fprintf(p.w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

// sample writes one sample: labels are name, value pairs. A bufio.Writer's
// error sticks: ServeHTTP's Flush meets it.
func (p *page) sample(name string, v float64, labels ...string) {
	w := p.w
	_, _ = w.WriteString(name)
	if len(labels) > 0 {
		_ = w.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				_ = w.WriteByte(',')
			}
			_, _ = w.WriteString(labels[i])
			_, _ = w.WriteString(`="`)
			escape(w, labels[i+1])
			_ = w.WriteByte('"')
		}
		_ = w.WriteByte('}')
	}
	_ = w.WriteByte(' ')
	p.num = strconv.AppendFloat(p.num[:0], v, 'g', -1, 64)
	_, _ = w.Write(p.num)
	_ = w.WriteByte('\n')
}

// escape writes a label value as the text format quotes it: backslash,
// double quote and line feed escaped.
func escape(w *bufio.Writer, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			_, _ = w.WriteString(`\\`)
		case '"':
			_, _ = w.WriteString(`\"`)
		case '\n':
			_, _ = w.WriteString(`\n`)
		default:
			_ = w.WriteByte(c)
		}
	}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if h.Serving != nil && !h.Serving() {
		return
	}
	out := &sent{w: w}
	p := &page{w: bufio.NewWriterSize(out, 64<<10)}
	if err := write(ctx, source{h.Reader, h.Namespaces}, p); err != nil {
		if out.n > 0 {
			// Part of the page is out: break the response off, so that
			// Prometheus fails the scrape rather than take half a page.
			panic(http.ErrAbortHandler)
		}
		http.Error(w, "reading the cache: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	_ = p.w.Flush()
}

// seconds is t in Unix seconds.
func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func boolean(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// objectKey names a parent of children by kind, namespace and name (the
// strings are the cache's own).
type objectKey struct{ kind, namespace, name string }

// source is where a scrape reads the objects: the cache, and the
// namespaces it holds.
type source struct {
	c          client.Reader
	namespaces []string
}

// objects are the cached objects of kind k: the informer's own where
// the cache gives its store, else lists' items (copied by value, not
// deep), a namespace at a time. They are only read.
func (s source) objects(ctx context.Context, k kind) ([]runtime.Object, error) {
	if infs, ok := s.c.(cache.Informers); ok {
		inf, err := infs.GetInformer(ctx, k.obj())
		if err != nil {
			return nil, fmt.Errorf("list %ss: %w", k.name, err)
		}
		if store, ok := inf.(toolscache.SharedIndexInformer); ok {
			items := store.GetIndexer().List()
			out := make([]runtime.Object, 0, len(items))
			for _, o := range items {
				if o, ok := o.(runtime.Object); ok {
					out = append(out, o)
				}
			}
			return out, nil
		}
	}
	namespaces := s.namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	var out []runtime.Object
	for _, ns := range namespaces {
		l := k.list()
		if err := s.c.List(ctx, l, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("list %ss: %w", k.name, err)
		}
		objs, err := meta.ExtractList(l)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// write reads each kind from the cache once, then writes every metric:
// its HELP and TYPE, samples or not (a scrape names every metric the page
// can hold), then a sample per object it has one of, straight to the
// page.
func write(ctx context.Context, src source, p *page) error {
	objs := make(map[string][]runtime.Object, len(parents))
	for _, k := range parents {
		l, err := src.objects(ctx, k)
		if err != nil {
			return err
		}
		objs[k.name] = l
	}
	for _, m := range metrics {
		p.header(m.name, m.typ, m.help)
		for _, k := range m.kinds {
			for _, o := range objs[k.name] {
				v, reason, ok := m.value(o)
				if !ok {
					continue
				}
				co := o.(client.Object)
				switch {
				case m.reason:
					p.sample(m.name, v, "kind", k.name, "namespace", co.GetNamespace(), "name", co.GetName(), "reason", reason)
				case m.byKind:
					p.sample(m.name, v, "kind", k.name, "namespace", co.GetNamespace(), "name", co.GetName())
				default:
					p.sample(m.name, v, "namespace", co.GetNamespace(), "name", co.GetName())
				}
			}
		}
	}
	clear(objs)
	b, err := countBacklogs(ctx, src)
	if err != nil {
		return err
	}
	keys := slices.SortedFunc(maps.Keys(b), func(x, y objectKey) int {
		return cmp.Or(cmp.Compare(x.kind, y.kind), cmp.Compare(x.namespace, y.namespace), cmp.Compare(x.name, y.name))
	})
	for _, m := range backlogMetrics {
		p.header(m.name, "gauge", m.help)
		for _, k := range keys {
			if v, ok := m.value(b[k]); ok {
				p.sample(m.name, v, "kind", k.kind, "namespace", k.namespace, "parent", k.name)
			}
		}
	}
	return nil
}

// backlog is one parent's children as the backlog metrics count them.
type backlog struct {
	pending, failed int
	oldest          time.Time
}

type backlogs map[objectKey]*backlog

// countBacklogs counts the PaperSyncs and SheetSyncs per parent.
func countBacklogs(ctx context.Context, src source) (backlogs, error) {
	b := backlogs{}
	papers, err := src.objects(ctx, paperKind)
	if err != nil {
		return nil, err
	}
	for _, o := range papers {
		o := o.(*v1alpha1.PaperSync)
		b.add(objectKey{notionKind.name, o.Namespace, o.Spec.IntegrationRef.Name}, o.Status.Phase, o.Status.CompletedAt, o.CreationTimestamp)
	}
	syncs, err := src.objects(ctx, sheetSyncKind)
	if err != nil {
		return nil, err
	}
	for _, o := range syncs {
		o := o.(*v1alpha1.SheetSync)
		b.add(objectKey{sheetsKind.name, o.Namespace, o.Spec.ConnectionRef.Name}, o.Status.Phase, o.Status.CompletedAt, o.CreationTimestamp)
	}
	return b, nil
}

func (b backlogs) add(k objectKey, phase v1alpha1.SyncPhase, completed *metav1.Time, created metav1.Time) {
	if k.name == "" {
		return
	}
	x := b[k]
	if x == nil {
		x = &backlog{}
		b[k] = x
	}
	switch {
	case phase == v1alpha1.SyncFailed:
		x.failed++
	case completed == nil:
		x.pending++
		if x.oldest.IsZero() || created.Time.Before(x.oldest) {
			x.oldest = created.Time
		}
	}
}
