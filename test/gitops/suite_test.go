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

// Package gitops_test proves what GitOps tools read from Switchboard
// objects (issue 11, item 4): on a real API server, with every controller
// running against the sandbox and a real S3 server, the samples in
// config/samples become kstatus Current; a spec a person must fix becomes
// Failed; work in progress is InProgress; status.observedGeneration follows
// every spec change; and the Argo CD health check shown in docs/gitops.md
// answers Healthy, Degraded, Progressing and Suspended for the same
// objects.
package gitops_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/internal/controller"
	"github.com/switchboard-dev/switchboard/internal/controller/papersync"
	"github.com/switchboard-dev/switchboard/internal/controller/receivelink"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetsync"
	"github.com/switchboard-dev/switchboard/internal/controller/slidestock"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

var (
	env      *testenv.Env
	s3       *testenv.S3
	box      *sandbox.Server
	notionEm = sandbox.NewNotion()
	googleEm = sandbox.NewGoogleOAuth()
	calEm    = sandbox.NewGoogleCalendar(googleEm)
	sheetsEm = sandbox.NewGoogleSheets(googleEm)
)

// The names the samples use outside their own objects.
const (
	// sampleBucket is the ReceiveLink sample's bucket.
	sampleBucket = "user-prize"
	// linkNamespace holds the manager's default link key Secret.
	linkNamespace = "switchboard-system"
	// googleClientID / googleClientSecret are the sandbox's Google OAuth
	// client, the one the google-client Secret holds.
	googleClientID, googleClientSecret = "gitops-google-client", "gitops-google-secret"
	// notionClientID / notionClientSecret are the sandbox's Notion client.
	notionClientID, notionClientSecret = "gitops-notion-client", "gitops-notion-secret"
)

// fastRetries keeps the retry schedules of the syncs short, as the other
// end-to-end suites do.
var fastRetries = outbound.Schedule{Base: 20 * time.Millisecond, Retries: 3, Max: time.Second}

func TestMain(m *testing.M) {
	testenv.Main(m, &env, testenv.WithS3(&s3), func(e *testenv.Env) (func(), error) {
		ctx := context.Background()
		if err := s3.CreateBucket(ctx, sampleBucket); err != nil {
			return nil, err
		}
		if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: linkNamespace}}); err != nil {
			return nil, err
		}
		notionEm.AddClient(notionClientID, notionClientSecret)
		googleEm.AddClient(googleClientID, googleClientSecret)
		calEm.PushRetryBase = 20 * time.Millisecond
		// Every emulator that needs no seed is served as it is built, and
		// each kind's kit brings its own (kits.go).
		box = sandbox.New(sandbox.WithUnseeded(append([]sandbox.Emulator{notionEm, googleEm, calEm, sheetsEm}, kitEmulators()...)...)...)
		srv := httptest.NewServer(box)
		ups := sandbox.Upstreams(srv.URL)
		if err := ups.Set("s3=" + s3.Endpoint); err != nil {
			return nil, err
		}
		hook := testenv.NewWebhook()
		// Every kind's controller, as cmd/manager lists them, with the
		// retry schedules shortened.
		all := controller.All(linkNamespace)
		for _, k := range all {
			switch c := k.(type) {
			case *slidestock.Controller:
				c.Retries = fastRetries
			case *papersync.Controller:
				c.Retries = fastRetries
			case *sheetsync.Controller:
				c.Retries = fastRetries
			case *receivelink.Controller:
				c.KeySecret = "link-keys"
			}
		}
		// The webhook's routes read the manager's cache: its indexes too.
		built, err := testenv.Operator(wire.Operator{Kinds: all, Upstreams: ups, OutboundOptions: outbound.Options{Timeout: 5 * time.Second},
			Deps: wire.Deps{PublicURL: hook.URL, StateNamespace: linkNamespace}, Indexes: index.Both}).Build(ctx, e.Config)
		if err != nil {
			return nil, err
		}
		if err := hook.Serve(built.Manager, ups, built.Deps.Outbound, logr.Discard()); err != nil {
			return nil, err
		}
		stop := testenv.StartManager(built.Manager)
		return func() { stop(); calEm.Close(); hook.Close(); srv.Close() }, nil
	})
}
