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

// Package receive is the ReceiveLink benchmark (-suite receive): the
// share-link resolve route against a bare cached Get, and links expiring
// together on versitygw (Suite, in rig.go, says what it measures).
package receive

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/controller/receivelink"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// benchReceive runs the ReceiveLink benchmark (Suite says what it
// measures).
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
	c, err := client.New(cfg, client.Options{Scheme: setup.Scheme()})
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

// benchResolve measures the resolve route against a bare cached Get of
// the same short-token object, at 1, 16 and 64 clients.
func benchResolve(ctx context.Context, c client.Client, rig *receiveRig, o receiveOptions) error {
	shorts, err := resolveLinks(ctx, c, rig, o.links)
	if err != nil {
		return err
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
		if err := poll.Until(ctx, "", 50*time.Millisecond, time.Minute, func() (bool, error) { ok, _ := resolve(i); return ok, nil }); err != nil {
			return fmt.Errorf("link %d never resolved: %w", i, err)
		}
	}
	if err := resolveTable(o, bare, resolve); err != nil {
		return err
	}
	auditCount(ctx, c, int64(3*o.resolves+len(shorts)))
	return nil
}

// resolveLinks creates n links expiring in an hour, waits until they are
// Ready, and returns their short tokens.
func resolveLinks(ctx context.Context, c client.Client, rig *receiveRig, n int) ([]string, error) {
	expires := time.Now().Add(time.Hour)
	if err := createLinks(ctx, c, rig.s3, "r", n, func(int) time.Time { return expires }); err != nil {
		return nil, err
	}
	links, err := waitLinks(ctx, c, "r", n, 2*time.Minute, ready)
	if err != nil {
		return nil, err
	}
	shorts := make([]string, len(links))
	for i, l := range links {
		var share corev1.Secret
		if err := c.Get(ctx, types.NamespacedName{Namespace: benchLinkNS, Name: l.Status.ShareSecretName}, &share); err != nil {
			return nil, err
		}
		shorts[i] = string(share.Data[linktoken.ShareShortToken])
	}
	return shorts, nil
}

// resolveTable drives bare and resolve at each client count and prints
// the table.
func resolveTable(o receiveOptions, bare, resolve func(int) (bool, error)) error {
	fmt.Printf("\n1. resolve route: %d resolves per client count across %d links (302 to a presigned versitygw URL; each one audited: an Event and a counted resolve);\n"+
		"   baseline: a bare Get of the same short-token object from the webhook's informer cache, as many, at the same concurrency\n", o.resolves, o.links)
	fmt.Printf("%-8s %14s %10s %10s %14s %10s %10s %12s %10s\n", "clients", "bare Get/s", "p50", "p99", "resolves/s", "p50", "p99", "ratio rate", "ratio p99")
	for _, clients := range []int{1, 16, 64} {
		baseRate, baseLat, _, err := bench.Drive(clients, o.resolves, bare)
		if err != nil {
			return err
		}
		rate, lat, refused, err := bench.Drive(clients, o.resolves, resolve)
		if err != nil {
			return err
		}
		fmt.Printf("%-8d %14.0f %10s %10s %14.0f %10s %10s %12.4f %10.1f", clients, baseRate, bench.PctMs(baseLat, 50), bench.PctMs(baseLat, 99),
			rate, bench.PctMs(lat, 50), bench.PctMs(lat, 99), rate/baseRate, bench.Ratio(bench.PctD(lat, 99), bench.PctD(baseLat, 99)))
		if refused > 0 {
			fmt.Printf("   (%d not 302)", refused)
		}
		fmt.Println()
	}
	return nil
}

// auditCount waits, for a minute, until the links' status.resolveCount
// sums to want (the audit lands: every resolve counted), and prints the
// sum.
func auditCount(ctx context.Context, c client.Client, want int64) {
	var counted int64
	err := poll.Until(ctx, "", 50*time.Millisecond, time.Minute, func() (bool, error) {
		var list v1alpha1.ReceiveLinkList
		if c.List(ctx, &list, client.InNamespace(benchLinkNS)) != nil {
			return false, nil
		}
		counted = 0
		for _, l := range list.Items {
			counted += l.Status.ResolveCount
		}
		return counted >= want, nil
	})
	fmt.Printf("status.resolveCount summed over the links: %d of %d resolves (%v)\n", counted, want, err)
}

// benchExpiry measures o.expiries links expiring within o.window: how
// late each blob is deleted, and the S3 deletes per second.
func benchExpiry(ctx context.Context, c client.Client, rig *receiveRig, o receiveOptions) error {
	n := o.expiries
	first := time.Now().Add(o.budget).Truncate(time.Second)
	expires := func(i int) time.Time { return first.Add(time.Duration(i) * o.window / time.Duration(n)) }
	last := expires(n - 1)
	fmt.Printf("\n2. %d links expiring within %s (from %s, %s from now); the manager deletes at most %d blobs per second\n",
		n, o.window, first.Format(time.TimeOnly), o.budget, receivelink.DefaultDeleteRate)
	if err := mintExpiring(ctx, c, rig, n, first, expires); err != nil {
		return err
	}
	expired, err := waitLinks(ctx, c, "x", n, time.Until(last)+o.window+time.Duration(n)*100*time.Millisecond,
		func(l *v1alpha1.ReceiveLink) bool {
			return l.Status.Phase == v1alpha1.LinkExpired && l.Status.BlobDeletedAt != nil
		})
	allExpired := time.Now()
	if err != nil {
		return err
	}
	fmt.Printf("every link Expired with its blob deleted %s after the last expiry\n", allExpired.Sub(last).Round(100*time.Millisecond))
	deletionReport(expired)
	return blobsLeft(ctx, rig, n)
}

// mintExpiring uploads and creates n links expiring at expires(i), and
// waits until every one is Ready, which must be before first expires.
func mintExpiring(ctx context.Context, c client.Client, rig *receiveRig, n int, first time.Time, expires func(int) time.Time) error {
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
	return nil
}

// deletionReport prints how late each expired link's blob was deleted
// (status times are whole seconds) and the deletes in each second.
func deletionReport(expired []v1alpha1.ReceiveLink) {
	n := len(expired)
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
	bench.SortDurations(late)
	peak := 0
	for _, v := range perSecond {
		peak = max(peak, v)
	}
	span := lastDel.Sub(firstDel) + time.Second
	fmt.Printf("blob deleted after expiry (status, whole seconds): p50 %s, p99 %s, max %s\n", bench.PctD(late, 50), bench.PctD(late, 99), bench.PctD(late, 100))
	fmt.Printf("S3 deletes: %d in %s = %.0f/s on average, at most %d in any one second (bound: %d/s, burst %d)\n",
		n, span, float64(n)/span.Seconds(), peak, receivelink.DefaultDeleteRate, receivelink.DefaultDeleteRate/5)
}

// blobsLeft checks that versitygw has none of the n expired links' blobs
// left.
func blobsLeft(ctx context.Context, rig *receiveRig, n int) error {
	var left atomic.Int64
	if err := bench.Parallel(n, 16, func(i int) error {
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
