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

package receive

import (
	"context"
	"flag"
	"fmt"
	"net"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/controller/receivelink"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// Suite is the ReceiveLink benchmark (-suite receive), on a real S3 server
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
type Suite struct{ o receiveOptions }

// Name is the suite's -suite name.
func (*Suite) Name() string { return "receive" }

// BindFlags registers the -link flags.
func (s *Suite) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.o.resolves, "link-resolves", 2000, "Share-link resolves per client count (and as many baseline cached Gets).")
	fs.IntVar(&s.o.links, "links", 100, "ReceiveLinks the resolves are spread over.")
	fs.IntVar(&s.o.expiries, "link-expiries", 10000, "ReceiveLinks expiring within -link-window, their blobs on versitygw.")
	fs.DurationVar(&s.o.window, "link-window", time.Minute, "The window the -link-expiries links expire in.")
	fs.DurationVar(&s.o.budget, "link-budget", 0, "Time the manager gets to mint every expiring link before the first expires (0: 60 s + 20 ms per link).")
	fs.IntVar(&s.o.workers, "link-workers", 0, "The manager's --receivelink-workers (0: its default).")
}

// Run runs the benchmark.
func (s *Suite) Run(e bench.Env) error {
	o := s.o
	if o.budget <= 0 {
		o.budget = time.Minute + time.Duration(o.expiries)*20*time.Millisecond
	}
	return benchReceive(e.Config, o)
}

// receiveOptions size the ReceiveLink benchmark.
type receiveOptions struct {
	resolves int // per client count
	links    int // resolved in part 1
	expiries int // expiring together in part 2
	// budget is the time the manager gets to mint every expiring link
	// before the first expires.
	budget time.Duration
	window time.Duration
	// workers is the manager's --receivelink-workers (0: the default).
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
	hook    cluster.Cluster
	hookURL string
}

func startReceiveRig(ctx context.Context, cfg *rest.Config, s3 *testenv.S3, workers int) (*receiveRig, error) {
	r := &receiveRig{s3: s3}
	ups := upstream.NewSet()
	if err := ups.Set(string(upstream.S3) + "=" + s3.Endpoint); err != nil {
		return nil, err
	}
	ln, hookURL, err := bench.ListenLoopback()
	if err != nil {
		return nil, err
	}
	r.hookURL = hookURL
	// The manager binary's, running the ReceiveLink controller alone.
	links := &receivelink.Controller{Namespace: benchOperatorNS, KeySecret: "link-keys", Workers: wire.Workers{N: workers}}
	built, err := testenv.Operator(wire.Operator{Kinds: []wire.Kind{links}, Upstreams: ups, Deps: wire.Deps{PublicURL: r.hookURL}}).Build(ctx, cfg)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	r.mgr = built.Manager
	out := built.Deps.Outbound
	// The webhook binary's client and cache: Secrets only in its own
	// namespace, where the links' key Secret is.
	if r.hook, err = testenv.WebhookCluster(cfg, []string{benchOperatorNS}); err != nil {
		_ = ln.Close()
		return nil, err
	}
	if err := r.serve(ctx, ln, ups, out, links.KeySecret); err != nil {
		return nil, err
	}
	go func() { _ = r.mgr.Start(ctx) }()
	go func() { _ = r.hook.Start(ctx) }()
	return r, nil
}

// serve serves the webhook's routes on ln, the share links' among them
// (signed with the keys of the Secret keySecret), and starts the audit of
// resolves.
func (r *receiveRig) serve(ctx context.Context, ln net.Listener, ups *upstream.Set, out *outbound.Client, keySecret string) error {
	bc, err := blob.New(blob.Options{Endpoint: r.s3.Endpoint, HTTPClient: out.HTTPClient()})
	if err != nil {
		_ = ln.Close()
		return err
	}
	audit := &webhook.Auditor{Client: r.hook.GetClient(), Reader: r.hook.GetAPIReader(),
		Recorder: r.hook.GetEventRecorder("switchboard-webhook"), Log: logr.Discard()}
	// RateLimit is zero: the per-client limit is off, since every
	// benchmark client shares 127.0.0.1.
	srv, err := webhook.NewServer(webhook.Options{Log: logr.Discard()},
		webhook.Deps{Client: r.hook.GetClient(), APIReader: r.hook.GetAPIReader(), Upstreams: ups, Outbound: out, Log: logr.Discard(),
			PublicURL: r.hookURL, StateNamespace: benchOperatorNS,
			Links: &webhook.Links{Namespace: benchOperatorNS, Cache: r.hook.GetCache(), Blobs: bc,
				DefaultKeys: types.NamespacedName{Namespace: benchOperatorNS, Name: keySecret}, Audit: audit}},
		webhook.Families()...)
	if err != nil {
		_ = ln.Close()
		return err
	}
	go func() { _ = srv.Serve(ctx, ln) }()
	go func() { _ = audit.Start(ctx) }()
	return nil
}

// createLinks uploads one small blob per link and creates the links (16
// clients each); expires gives link i's spec.expiresAt.
func createLinks(ctx context.Context, c client.Client, s3 *testenv.S3, prefix string, n int, expires func(i int) time.Time) error {
	return bench.Parallel(n, 16, func(i int) error {
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
// server until done says every one is there, for limit: every 250 ms, or
// less often the more links there are.
func waitLinks(ctx context.Context, c client.Client, prefix string, n int, limit time.Duration, done func(*v1alpha1.ReceiveLink) bool) ([]v1alpha1.ReceiveLink, error) {
	var got []v1alpha1.ReceiveLink
	// Listing thousands of links is itself load on the API server the
	// manager writes to: list less often the more there are.
	every := max(250*time.Millisecond, time.Duration(n)*250*time.Microsecond)
	err := poll.Until(ctx, "", every, limit, func() (bool, error) {
		var list v1alpha1.ReceiveLinkList
		if err := c.List(ctx, &list, client.InNamespace(benchLinkNS)); err != nil {
			return false, poll.Stop(err)
		}
		got = got[:0]
		for _, l := range list.Items {
			if len(l.Name) > len(prefix) && l.Name[:len(prefix)+1] == prefix+"-" && done(&l) {
				got = append(got, l)
			}
		}
		return len(got) == n, fmt.Errorf("%d of %d links", len(got), n)
	})
	return got, err
}

func ready(l *v1alpha1.ReceiveLink) bool {
	return meta.IsStatusConditionTrue(l.Status.Conditions, v1alpha1.ReadyCondition)
}
