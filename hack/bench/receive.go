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
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/blob"
	"github.com/switchboard-dev/switchboard/internal/controller"
	"github.com/switchboard-dev/switchboard/internal/controller/receivelink"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/linktoken"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// The ReceiveLink benchmark (-suite receive), on a real S3 server
// (versitygw, posix backend) and the real API server:
//
//  1. the resolve route, GET /r/{short} → 302 to a presigned URL, at 1, 16
//     and 64 clients, against a bare Get of the same short-token object
//     from the same informer cache at the same concurrency (the least a
//     resolve must do);
//  2. -link-expiries links (10,000) expiring within one minute: how late
//     each link's blob is deleted, when the last one is Expired, and the
//     S3 deletes per second the manager's bound (--blob-delete-rate,
//     100/s) lets through.
type receiveOptions struct {
	resolves int // per client count
	links    int // resolved in part 1
	expiries int // expiring together in part 2
	// budget is the time the manager gets to mint every expiring link
	// before the first expires.
	budget time.Duration
	window time.Duration
	// workers is the manager's --link-workers (0: the default).
	workers int
}

const (
	benchLinkNS     = "bench-links"
	benchOperatorNS = "bench-switchboard"
	benchBucket     = "bench-links"
)

// receiveRig is the manager (ReceiveLink controller, default options) and
// the webhook (its own cache, as the webhook Deployment has) in process,
// wired as cmd/manager and cmd/webhook wire them.
type receiveRig struct {
	s3      *testenv.S3
	mgr     ctrl.Manager
	hook    ctrl.Manager
	hookURL string
}

func startReceiveRig(ctx context.Context, cfg *rest.Config, s3 *testenv.S3, workers int) (*receiveRig, error) {
	r := &receiveRig{s3: s3}
	ups := upstream.NewSet()
	if err := ups.Set(string(upstream.S3) + "=" + s3.Endpoint); err != nil {
		return nil, err
	}
	out, err := outbound.New(ups, outbound.Options{})
	if err != nil {
		return nil, err
	}
	scheme := setupScheme()
	opts := func() ctrl.Options {
		co := setup.ClientOptions()
		return ctrl.Options{Scheme: scheme, Cache: setup.CacheOptions(scheme), Client: client.Options{Cache: &co},
			Metrics: metricsserver.Options{BindAddress: "0"}, Logger: logr.Discard()}
	}
	if r.mgr, err = ctrl.NewManager(cfg, opts()); err != nil {
		return nil, err
	}
	if r.hook, err = ctrl.NewManager(cfg, opts()); err != nil {
		return nil, err
	}
	if err := index.Register(ctx, r.hook.GetFieldIndexer()); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.hookURL = "http://" + ln.Addr().String()
	keys := types.NamespacedName{Namespace: benchOperatorNS, Name: "link-keys"}
	if err := controller.SetupLinks(r.mgr, controller.LinksDeps{Out: out, Namespace: benchOperatorNS, DefaultKeys: keys, PublicURL: r.hookURL, Workers: workers}); err != nil {
		return nil, err
	}
	bc, err := blob.New(blob.Options{Endpoint: s3.Endpoint, HTTPClient: out.HTTPClient()})
	if err != nil {
		return nil, err
	}
	audit := &webhook.Auditor{Client: r.hook.GetClient(), Reader: r.hook.GetAPIReader(),
		Recorder: r.hook.GetEventRecorder("switchboard-webhook"), Log: logr.Discard()}
	// RateLimit is zero: the per-client limit is off, since every
	// benchmark client shares 127.0.0.1.
	srv, err := webhook.NewServer(webhook.Options{Log: logr.Discard()},
		webhook.Deps{Client: r.hook.GetClient(), APIReader: r.hook.GetAPIReader(), Upstreams: ups, Outbound: out, Log: logr.Discard(),
			PublicURL: r.hookURL, StateNamespace: benchOperatorNS,
			Links: &webhook.Links{Namespace: benchOperatorNS, Cache: r.hook.GetCache(), Blobs: bc,
				DefaultKeys: keys, Audit: audit}},
		webhook.Registered()...)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	go func() { _ = srv.Serve(ctx, ln) }()
	go func() { _ = audit.Start(ctx) }()
	go func() { _ = r.mgr.Start(ctx) }()
	go func() { _ = r.hook.Start(ctx) }()
	return r, nil
}

func benchReceive(cfg *rest.Config, o receiveOptions) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s3, err := testenv.StartS3()
	if err != nil {
		return err
	}
	defer func() { _ = s3.Stop() }()
	if err := s3.CreateBucket(ctx, benchBucket); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: setupScheme()})
	if err != nil {
		return err
	}
	for _, ns := range []string{benchLinkNS, benchOperatorNS} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: benchLinkNS, Name: "s3"}, Data: s3.Credentials.SecretData()}); err != nil {
		return err
	}
	rig, err := startReceiveRig(ctx, cfg, s3, o.workers)
	if err != nil {
		return err
	}
	fmt.Printf("\nReceiveLink benchmark: versitygw %s (posix backend), kube-apiserver and etcd from envtest, manager and webhook in process\n", s3.Endpoint)
	if err := benchResolve(ctx, c, rig, o); err != nil {
		return err
	}
	return benchExpiry(ctx, c, rig, o)
}

// createLinks uploads one small blob per link and creates the links (16
// clients each); expires gives link i's spec.expiresAt.
func createLinks(ctx context.Context, c client.Client, s3 *testenv.S3, prefix string, n int, expires func(i int) time.Time) error {
	return parallel(n, 16, func(i int) error {
		key := fmt.Sprintf("bench/%s/%05d.bin", prefix, i)
		if err := s3.Blob.Put(ctx, s3.Object(benchBucket, key), []byte(key), "application/octet-stream"); err != nil {
			return err
		}
		l := &v1alpha1.ReceiveLink{ObjectMeta: metav1.ObjectMeta{Namespace: benchLinkNS, Name: fmt.Sprintf("%s-%05d", prefix, i)}}
		l.Spec.Blob = v1alpha1.BlobLocation{Bucket: benchBucket, Key: key, CredentialsSecretRef: v1alpha1.SecretReference{Name: "s3"}}
		l.Spec.ExpiresAt = &metav1.Time{Time: expires(i)}
		l.Spec.Retention = metav1.Duration{Duration: time.Hour}
		return c.Create(ctx, l)
	})
}

// waitLinks lists the links whose name starts with prefix from the API
// server every 250 ms until done says every one is there, for limit.
func waitLinks(ctx context.Context, c client.Client, prefix string, n int, limit time.Duration, done func(*v1alpha1.ReceiveLink) bool) ([]v1alpha1.ReceiveLink, error) {
	deadline := time.Now().Add(limit)
	for {
		var list v1alpha1.ReceiveLinkList
		if err := c.List(ctx, &list, client.InNamespace(benchLinkNS)); err != nil {
			return nil, err
		}
		var got []v1alpha1.ReceiveLink
		for _, l := range list.Items {
			if len(l.Name) > len(prefix) && l.Name[:len(prefix)+1] == prefix+"-" && done(&l) {
				got = append(got, l)
			}
		}
		if len(got) == n {
			return got, nil
		}
		if time.Now().After(deadline) {
			return got, fmt.Errorf("%d of %d links after %s", len(got), n, limit)
		}
		// Listing thousands of links is itself load on the API server
		// the manager writes to: list less often the more there are.
		time.Sleep(max(250*time.Millisecond, time.Duration(n)*250*time.Microsecond))
	}
}

func ready(l *v1alpha1.ReceiveLink) bool {
	return meta.IsStatusConditionTrue(l.Status.Conditions, v1alpha1.ReadyCondition)
}

func benchResolve(ctx context.Context, c client.Client, rig *receiveRig, o receiveOptions) error {
	expires := time.Now().Add(time.Hour)
	if err := createLinks(ctx, c, rig.s3, "r", o.links, func(int) time.Time { return expires }); err != nil {
		return err
	}
	links, err := waitLinks(ctx, c, "r", o.links, 2*time.Minute, ready)
	if err != nil {
		return err
	}
	shorts := make([]string, len(links))
	for i, l := range links {
		var share corev1.Secret
		if err := c.Get(ctx, types.NamespacedName{Namespace: benchLinkNS, Name: l.Status.ShareSecretName}, &share); err != nil {
			return err
		}
		shorts[i] = string(share.Data[linktoken.ShareShortToken])
	}
	cache := rig.hook.GetCache()
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128, MaxConnsPerHost: 128},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resolve := func(i int) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, rig.hookURL+"/r/"+shorts[i%len(shorts)], http.NoBody)
		if err != nil {
			return false, err
		}
		resp, err := httpc.Do(req)
		if err != nil {
			return false, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusFound, nil
	}
	bare := func(i int) (bool, error) {
		var obj corev1.Secret
		err := cache.Get(ctx, types.NamespacedName{Namespace: benchOperatorNS, Name: linktoken.ObjectName(shorts[i%len(shorts)])}, &obj)
		return err == nil, err
	}
	// The webhook's cache holds every short-token object before timing.
	for i := range shorts {
		if err := waitFor(ctx, time.Minute, func() bool { ok, _ := resolve(i); return ok }); err != nil {
			return fmt.Errorf("link %d never resolved: %w", i, err)
		}
	}

	fmt.Printf("\n1. resolve route: %d resolves per client count across %d links (302 to a presigned versitygw URL; each one audited: an Event and a counted resolve);\n"+
		"   baseline: a bare Get of the same short-token object from the webhook's informer cache, as many, at the same concurrency\n", o.resolves, o.links)
	fmt.Printf("%-8s %14s %10s %10s %14s %10s %10s %12s %10s\n", "clients", "bare Get/s", "p50", "p99", "resolves/s", "p50", "p99", "ratio rate", "ratio p99")
	for _, clients := range []int{1, 16, 64} {
		baseRate, baseLat, _, err := drive(clients, o.resolves, bare)
		if err != nil {
			return err
		}
		rate, lat, refused, err := drive(clients, o.resolves, resolve)
		if err != nil {
			return err
		}
		fmt.Printf("%-8d %14.0f %10s %10s %14.0f %10s %10s %12.4f %10.1f", clients, baseRate, pctMs(baseLat, 50), pctMs(baseLat, 99),
			rate, pctMs(lat, 50), pctMs(lat, 99), rate/baseRate, ratio(pctD(lat, 99), pctD(baseLat, 99)))
		if refused > 0 {
			fmt.Printf("   (%d not 302)", refused)
		}
		fmt.Println()
	}
	// The audit lands: every resolve counted in status.
	want := int64(3*o.resolves + len(shorts))
	var counted int64
	err = waitFor(ctx, time.Minute, func() bool {
		var list v1alpha1.ReceiveLinkList
		if c.List(ctx, &list, client.InNamespace(benchLinkNS)) != nil {
			return false
		}
		counted = 0
		for _, l := range list.Items {
			counted += l.Status.ResolveCount
		}
		return counted >= want
	})
	fmt.Printf("status.resolveCount summed over the links: %d of %d resolves (%v)\n", counted, want, err)
	return nil
}

func benchExpiry(ctx context.Context, c client.Client, rig *receiveRig, o receiveOptions) error {
	n := o.expiries
	first := time.Now().Add(o.budget).Truncate(time.Second)
	expires := func(i int) time.Time { return first.Add(time.Duration(i) * o.window / time.Duration(n)) }
	last := expires(n - 1)
	fmt.Printf("\n2. %d links expiring within %s (from %s, %s from now); the manager deletes at most %d blobs per second\n",
		n, o.window, first.Format(time.TimeOnly), o.budget, receivelink.DefaultDeleteRate)
	began := time.Now()
	if err := createLinks(ctx, c, rig.s3, "x", n, expires); err != nil {
		return err
	}
	created := time.Since(began)
	if _, err := waitLinks(ctx, c, "x", n, time.Until(first), ready); err != nil {
		return fmt.Errorf("not every link was Ready before the first expiry (raise -link-budget): %w", err)
	}
	minted := time.Since(began)
	fmt.Printf("uploaded %d blobs and created %d links in %s; all Ready %s after the first create (%.0f links minted per second)\n",
		n, n, created.Round(time.Millisecond), minted.Round(time.Millisecond), float64(n)/minted.Seconds())

	expired, err := waitLinks(ctx, c, "x", n, time.Until(last)+o.window+time.Duration(n)*100*time.Millisecond,
		func(l *v1alpha1.ReceiveLink) bool {
			return l.Status.Phase == v1alpha1.LinkExpired && l.Status.BlobDeletedAt != nil
		})
	allExpired := time.Now()
	if err != nil {
		return err
	}
	// Lateness of each deletion (status times are whole seconds) and the
	// deletes in each second.
	late := make([]time.Duration, 0, n)
	perSecond := map[int64]int{}
	var firstDel, lastDel time.Time
	for _, l := range expired {
		d := l.Status.BlobDeletedAt.Time
		late = append(late, d.Sub(l.Status.ExpiresAt.Time))
		perSecond[d.Unix()]++
		if firstDel.IsZero() || d.Before(firstDel) {
			firstDel = d
		}
		if d.After(lastDel) {
			lastDel = d
		}
	}
	sortDurations(late)
	peak := 0
	for _, v := range perSecond {
		peak = max(peak, v)
	}
	span := lastDel.Sub(firstDel) + time.Second
	fmt.Printf("every link Expired with its blob deleted %s after the last expiry\n", allExpired.Sub(last).Round(100*time.Millisecond))
	fmt.Printf("blob deleted after expiry (status, whole seconds): p50 %s, p99 %s, max %s\n", pctD(late, 50), pctD(late, 99), pctD(late, 100))
	fmt.Printf("S3 deletes: %d in %s = %.0f/s on average, at most %d in any one second (bound: %d/s, burst %d)\n",
		n, span, float64(n)/span.Seconds(), peak, receivelink.DefaultDeleteRate, receivelink.DefaultDeleteRate/5)

	// versitygw has none of them left.
	var left atomic.Int64
	if err := parallel(n, 16, func(i int) error {
		_, err := rig.s3.Blob.Head(ctx, rig.s3.Object(benchBucket, fmt.Sprintf("bench/x/%05d.bin", i)))
		switch {
		case errors.Is(err, blob.ErrNotFound):
			return nil
		case err == nil:
			left.Add(1)
			return nil
		}
		return err
	}); err != nil {
		return err
	}
	fmt.Printf("blobs left in versitygw: %d of %d\n", left.Load(), n)
	if left.Load() > 0 {
		return fmt.Errorf("%d expired links' blobs are still stored", left.Load())
	}
	return nil
}

// waitFor polls ok every 50 ms until it holds or limit passes.
func waitFor(ctx context.Context, limit time.Duration, ok func() bool) error {
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not after %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
