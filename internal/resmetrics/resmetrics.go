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
// They are written in Prometheus's text format straight from the cache,
// not gathered into a registry first: at 50,000 objects a registry's
// gather would hold every series at once (tens of MiB) on top of the
// cache. No label carries a token, a URL or a user's id: only kinds,
// namespaces, names and condition reasons.
package resmetrics

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// Path is where the manager's metrics server serves these metrics, beside
// controller-runtime's /metrics.
const Path = "/metrics/resources"

// Handler serves the metrics of the objects Reader holds.
type Handler struct {
	// Reader is the manager's cache: a scrape reads no API server.
	Reader client.Reader
	// Serving reports whether this replica answers with series: only the
	// leader does, so that replicas do not repeat each other's. Nil
	// answers always.
	Serving func() bool
	// Timeout bounds one scrape's reads (default 10s).
	Timeout time.Duration
}

// family is one metric as it is written: its help, its type and the
// samples gathered for it.
type family struct {
	name, help, typ string
	buf             bytes.Buffer
}

// sample appends one sample: labels are name, value pairs.
func (f *family) sample(v float64, labels ...string) {
	f.buf.WriteString(f.name)
	if len(labels) > 0 {
		f.buf.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				f.buf.WriteByte(',')
			}
			f.buf.WriteString(labels[i])
			f.buf.WriteString(`="`)
			escape(&f.buf, labels[i+1])
			f.buf.WriteByte('"')
		}
		f.buf.WriteByte('}')
	}
	f.buf.WriteByte(' ')
	f.buf.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	f.buf.WriteByte('\n')
}

// escape writes a label value as the text format quotes it: backslash,
// double quote and line feed escaped.
func escape(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
}

// The metrics, in the order they are written. Their names, types and
// labels are documented in docs/metrics.md.
type families struct {
	ready, stalled                               *family
	tokenExpiry, tokenRefresh, refreshFailures   *family
	channelExpiry, notifications, deleted, sinks *family
	linkExpiry, blobDeleted                      *family
	backlogPending, backlogFailed, backlogOldest *family
	all                                          []*family
}

func newFamilies() *families {
	f := &families{}
	add := func(name, typ, help string) *family {
		m := &family{name: name, typ: typ, help: help}
		f.all = append(f.all, m)
		return m
	}
	f.ready = add("switchboard_resource_ready", "gauge",
		"Whether the object's Ready condition is True (1) or not (0), with the condition's reason (Unknown before the first reconcile).")
	f.stalled = add("switchboard_resource_stalled", "gauge",
		"Whether the object's Stalled condition is True (1: a person must act) or not (0), with the condition's reason.")
	f.tokenExpiry = add("switchboard_oauth_token_expiration_timestamp_seconds", "gauge",
		"When the access token of the object's working grant expires (status.tokenExpiresAt), in Unix seconds.")
	f.tokenRefresh = add("switchboard_oauth_token_last_refresh_timestamp_seconds", "gauge",
		"When the object's access token was last refreshed (status.lastTokenRefreshAt), in Unix seconds.")
	f.refreshFailures = add("switchboard_oauth_token_refresh_failures", "gauge",
		"Refreshes of the object's access token that failed since the last that succeeded (status.tokenRefreshFailures).")
	f.channelExpiry = add("switchboard_calendar_channel_expiration_timestamp_seconds", "gauge",
		"When the CalendarWatch's current Google push channel expires (status.channel.expiration), in Unix seconds.")
	f.notifications = add("switchboard_calendar_notifications_total", "counter",
		"Push notifications the CalendarWatch handled (status.notifications).")
	f.deleted = add("switchboard_calendar_appointments_deleted_total", "counter",
		"Appointments the CalendarWatch deleted for cancelled events (status.appointmentsDeleted).")
	f.sinks = add("switchboard_calendar_sink_deliveries_pending", "gauge",
		"Deliveries to the CalendarWatch's sink waiting to be sent or retried (status.pendingDeliveries).")
	f.linkExpiry = add("switchboard_receivelink_expiration_timestamp_seconds", "gauge",
		"When the ReceiveLink's share link expires (status.expiresAt), in Unix seconds.")
	f.blobDeleted = add("switchboard_receivelink_blob_deleted", "gauge",
		"Whether the ReceiveLink's blob has been deleted after its expiry (1) or still exists (0).")
	f.backlogPending = add("switchboard_backlog_pending", "gauge",
		"Unfinished children (PaperSyncs of a NotionIntegration, SheetSyncs of a SheetConnection) of the parent.")
	f.backlogFailed = add("switchboard_backlog_failed", "gauge",
		"Children of the parent that failed for good (phase Failed), kept for their retention.")
	f.backlogOldest = add("switchboard_backlog_oldest_pending_timestamp_seconds", "gauge",
		"When the parent's oldest unfinished child was created, in Unix seconds.")
	return f
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
	f := newFamilies()
	if err := collect(ctx, h.Reader, f); err != nil {
		http.Error(w, "reading the cache: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	// Every family's HELP and TYPE, samples or not: a scrape names every
	// metric the page can hold (the dashboard's test reads them).
	for _, m := range f.all {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", m.name, m.help, m.name, m.typ)
		_, _ = w.Write(m.buf.Bytes())
	}
}

func unix(t *metav1.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func boolean(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// collect lists each kind from the cache, one kind at a time and without
// deep copies (it only reads), and fills f: a list's copies of its
// objects are garbage before the next kind's are made.
func collect(ctx context.Context, c client.Reader, f *families) error {
	list := func(l client.ObjectList) error {
		if err := c.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return fmt.Errorf("list %T: %w", l, err)
		}
		return nil
	}
	b := backlogs{}
	for _, kind := range []func() error{
		func() error {
			var l v1alpha1.NotionIntegrationList
			if err := list(&l); err != nil {
				return err
			}
			for i := range l.Items {
				o := &l.Items[i]
				f.conditions("NotionIntegration", o)
				f.token("NotionIntegration", o)
			}
			return nil
		},
		func() error {
			var l v1alpha1.SlideStockList
			if err := list(&l); err != nil {
				return err
			}
			for i := range l.Items {
				f.conditions("SlideStock", &l.Items[i])
			}
			return nil
		},
		func() error {
			var l v1alpha1.CalendarWatchList
			if err := list(&l); err != nil {
				return err
			}
			for i := range l.Items {
				o := &l.Items[i]
				f.conditions("CalendarWatch", o)
				f.token("CalendarWatch", o)
				id := []string{"namespace", o.Namespace, "name", o.Name}
				if ch := o.Status.Channel; ch != nil && ch.Expiration != nil {
					f.channelExpiry.sample(unix(ch.Expiration), id...)
				}
				f.notifications.sample(float64(o.Status.Notifications), id...)
				f.deleted.sample(float64(o.Status.AppointmentsDeleted), id...)
				f.sinks.sample(float64(len(o.Status.PendingDeliveries)), id...)
			}
			return nil
		},
		func() error {
			var l v1alpha1.ReceiveLinkList
			if err := list(&l); err != nil {
				return err
			}
			for i := range l.Items {
				o := &l.Items[i]
				f.conditions("ReceiveLink", o)
				if o.Status.ExpiresAt != nil {
					id := []string{"namespace", o.Namespace, "name", o.Name}
					f.linkExpiry.sample(unix(o.Status.ExpiresAt), id...)
					f.blobDeleted.sample(boolean(o.Status.BlobDeletedAt != nil), id...)
				}
			}
			return nil
		},
		func() error {
			var l v1alpha1.SheetConnectionList
			if err := list(&l); err != nil {
				return err
			}
			for i := range l.Items {
				o := &l.Items[i]
				f.conditions("SheetConnection", o)
				f.token("SheetConnection", o)
			}
			return nil
		},
		func() error {
			var l v1alpha1.PaperSyncList
			if err := list(&l); err != nil {
				return err
			}
			for i := range l.Items {
				o := &l.Items[i]
				b.add(parentKey{"NotionIntegration", o.Namespace, o.Spec.IntegrationRef.Name}, o.Status.Phase, o.Status.CompletedAt, o.CreationTimestamp)
			}
			return nil
		},
		func() error {
			var l v1alpha1.SheetSyncList
			if err := list(&l); err != nil {
				return err
			}
			for i := range l.Items {
				o := &l.Items[i]
				b.add(parentKey{"SheetConnection", o.Namespace, o.Spec.ConnectionRef.Name}, o.Status.Phase, o.Status.CompletedAt, o.CreationTimestamp)
			}
			return nil
		},
	} {
		if err := kind(); err != nil {
			return err
		}
	}
	b.write(f)
	return nil
}

// object is what conditions reads of a Switchboard object.
type object interface {
	client.Object
	v1alpha1.StatusObject
}

// conditions samples o's Ready and Stalled.
func (f *families) conditions(kind string, o object) {
	id := []string{"kind", kind, "namespace", o.GetNamespace(), "name", o.GetName()}
	ready, reason := false, "Unknown"
	stalled, why := false, ""
	for _, c := range o.GetReconcileStatus().Conditions {
		switch c.Type {
		case v1alpha1.ReadyCondition:
			ready, reason = c.Status == metav1.ConditionTrue, c.Reason
		case v1alpha1.StalledCondition:
			stalled, why = c.Status == metav1.ConditionTrue, c.Reason
		}
	}
	f.ready.sample(boolean(ready), append(id, "reason", reason)...)
	f.stalled.sample(boolean(stalled), append(id, "reason", why)...)
}

// token samples what an OAuth object's status says of its access token:
// its expiry and last refresh once known, and the refreshes failed since.
func (f *families) token(kind string, o oauthObject) {
	id := []string{"kind", kind, "namespace", o.GetNamespace(), "name", o.GetName()}
	ts := o.GetTokenStatus()
	if ts.TokenExpiresAt != nil {
		f.tokenExpiry.sample(unix(ts.TokenExpiresAt), id...)
	}
	if ts.LastTokenRefreshAt != nil {
		f.tokenRefresh.sample(unix(ts.LastTokenRefreshAt), id...)
	}
	f.refreshFailures.sample(float64(ts.TokenRefreshFailures), id...)
}

// oauthObject is what token reads of an OAuth kind's object.
type oauthObject interface {
	client.Object
	v1alpha1.OAuthObject
}

// parentKey names a parent by kind, namespace and name.
type parentKey struct{ kind, namespace, name string }

// backlog is one parent's children as the backlog metrics count them.
type backlog struct {
	pending, failed int
	oldest          time.Time
}

type backlogs map[parentKey]*backlog

func (b backlogs) add(k parentKey, phase v1alpha1.SyncPhase, completed *metav1.Time, created metav1.Time) {
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

// write samples each parent's backlog, parents in order.
func (b backlogs) write(f *families) {
	keys := slices.SortedFunc(maps.Keys(b), func(x, y parentKey) int {
		return cmp.Or(cmp.Compare(x.kind, y.kind), cmp.Compare(x.namespace, y.namespace), cmp.Compare(x.name, y.name))
	})
	for _, k := range keys {
		x := b[k]
		id := []string{"kind", k.kind, "namespace", k.namespace, "parent", k.name}
		f.backlogPending.sample(float64(x.pending), id...)
		f.backlogFailed.sample(float64(x.failed), id...)
		if x.pending > 0 {
			f.backlogOldest.sample(float64(x.oldest.UnixNano())/1e9, id...)
		}
	}
}
