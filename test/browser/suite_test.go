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

// Package browser_test drives the pages a person's browser sees — the
// OAuth connect walk (connect → the provider's consent page → callback)
// and a share link's Discord sign-in — in a real headless Chromium
// (chromedp), against a real API server, the manager's controllers and
// grant receiver, the webhook server (as the chart's ServiceAccounts), the
// sandbox's consent pages (asking: the tests click their buttons) and a
// real S3 server. Each page is checked as the browser has it: its text,
// its status and headers, the cookies it set, no secret in its HTML or
// URL, no Referer sent from it; and each is saved as a full-page PNG under
// _output/browser/<test>/ (docs/development.md).
package browser_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/contract/session"
	"github.com/switchboard-dev/switchboard/internal/controller/calendarwatch"
	"github.com/switchboard-dev/switchboard/internal/controller/notionintegration"
	"github.com/switchboard-dev/switchboard/internal/controller/notionsignup"
	"github.com/switchboard-dev/switchboard/internal/controller/receivelink"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// opns is the operator's namespace: the webhook's own (OAuth states,
// sessions) and the link namespace, as a chart install has it.
const opns = "switchboard-system"

// bucket holds the shared files.
const bucket = "user-prize"

// The OAuth clients the sandbox knows and the client Secrets hold.
const (
	notionClientID, notionClientSecret   = "notion-client", "notion-secret"
	discordClientID, discordClientSecret = "rcv-client", "rcv-secret"
	// testenv.CalendarWatch's Google client.
	googleClientSecret = "cal-secret"
)

var (
	env       *testenv.Env
	s3        *testenv.S3
	rbac      *testenv.ChartRBAC
	notionEm  = sandbox.NewNotion()
	googleEm  = sandbox.NewGoogleOAuth()
	calEm     = sandbox.NewGoogleCalendar(googleEm)
	discordEm = sandbox.NewDiscord()
	// hookURL is the webhook server's base (and public) URL, sandboxURL
	// the sandbox's: two loopback origins.
	hookURL, sandboxURL string
	// impatientURL is a webhook replica that waits no time for the
	// manager's answer to a callback.
	impatientURL string
	// hookView reads what the webhook's cache holds: a test that opens a
	// page about an object it just saw on the API server waits here first.
	hookView client.Reader
	// browserCtx is the one Chromium of the package; each test opens a
	// tab in a browser context of its own (no cookie carries over).
	browserCtx context.Context
)

func TestMain(m *testing.M) {
	testenv.Main(m, &env, testenv.WithS3(&s3), testenv.WithChartRBAC(&rbac, opns), startOperator, startBrowser)
}

// startOperator starts the sandbox (its consent pages asking), the
// manager (the controllers of the kinds connected here, and the OAuth
// grant receiver) and the webhook server with share links and the Discord
// sign-in, each as the chart's ServiceAccount.
func startOperator(e *testenv.Env) (func(), error) {
	ctx := context.Background()
	ctrl.SetLogger(logr.Discard())
	if err := s3.CreateBucket(ctx, bucket); err != nil {
		return nil, err
	}
	notionEm.AddClient(notionClientID, notionClientSecret)
	googleEm.AddClient("cal-client", googleClientSecret)
	discordEm.AddClient(discordClientID, discordClientSecret)
	for _, p := range []interface{ SetConsentPrompt(bool) }{notionEm, googleEm, discordEm} {
		p.SetConsentPrompt(true)
	}
	if err := e.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: opns, Name: "discord-client"},
		StringData: map[string]string{oauth.KeyClientID: discordClientID, oauth.KeyClientSecret: discordClientSecret}}); err != nil {
		return nil, err
	}
	srv := httptest.NewServer(sandbox.New(notionEm, googleEm, calEm, discordEm))
	sandboxURL = srv.URL
	ups := sandbox.Upstreams(srv.URL)
	if err := ups.Set("s3=" + s3.Endpoint); err != nil {
		return nil, err
	}
	out, err := outbound.New(ups, outbound.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}

	hookMgr, err := testenv.WebhookCluster(rbac.Webhook, []string{opns})
	if err != nil {
		return nil, err
	}
	bc, err := blob.New(blob.Options{Endpoint: s3.Endpoint, HTTPClient: out.HTTPClient()})
	if err != nil {
		return nil, err
	}
	hookView = hookMgr.GetClient()
	hook := testenv.NewWebhook()
	hook.StateNamespace = opns
	// Few sign-ups in progress at once, so that a page can show the wait
	// (signup_test.go); each test signs up through a sign-up of its own.
	hook.SignUp = webhook.SignUpLimits{Pending: pendingSignUps}
	hookURL = hook.URL
	audit := &webhook.Auditor{Client: hookMgr.GetClient(), Reader: hookMgr.GetAPIReader(),
		Recorder: hookMgr.GetEventRecorder("switchboard-webhook"), Interval: 100 * time.Millisecond, Log: logr.Discard()}
	hook.Links = &webhook.Links{Namespace: opns, Cache: hookMgr.GetCache(), Blobs: bc,
		DefaultKeys: types.NamespacedName{Namespace: opns, Name: receivelink.DefaultKeySecret}, Audit: audit}
	hook.SignIn = &webhook.SignIn{Sessions: &session.Store{Reader: hookMgr.GetAPIReader(), Writer: hookMgr.GetClient(), Namespace: opns,
		Engine:    setup.Engine(hookMgr, out),
		ClientKey: types.NamespacedName{Namespace: opns, Name: "discord-client"}}}
	if err := hook.Serve(hookMgr, ups, out, logr.Discard()); err != nil {
		return nil, err
	}
	// A second replica that answers a callback before the manager can
	// (the "Almost done" page): it shares the first's namespace and cache.
	impatient := testenv.NewWebhook()
	impatient.StateNamespace, impatient.HandoverWait = opns, time.Nanosecond
	impatientURL = impatient.URL
	if err := impatient.Serve(hookMgr, ups, out, logr.Discard()); err != nil {
		return nil, err
	}
	stopHook := testenv.StartManager(hookMgr)

	// The manager as cmd/manager builds it, with the controllers of the
	// kinds these tests connect or share.
	_, stopMgr, err := testenv.StartOperator(rbac.Manager, wire.Operator{
		Kinds: []wire.Kind{&notionintegration.Controller{}, &notionsignup.Controller{}, &calendarwatch.Controller{}, &receivelink.Controller{Namespace: opns}},
		Deps:  wire.Deps{Outbound: out, PublicURL: hookURL, StateNamespace: opns}})
	if err != nil {
		return nil, err
	}
	auditCtx, stopAudit := context.WithCancel(ctx)
	go func() { _ = audit.Start(auditCtx) }()
	return func() {
		stopMgr()
		stopAudit()
		stopHook()
		hook.Close()
		impatient.Close()
		calEm.Close()
		srv.Close()
	}, nil
}

// startBrowser starts the package's Chromium: headless, as root (no
// sandbox), in a fresh profile, with everything that would call out
// (background networking, component updates, sync, QUIC) off, and every
// host name unresolvable, so that the browser reaches loopback addresses
// only — a link to a real provider fails here instead of leaving the
// machine.
func startBrowser(*testenv.Env) (func(), error) {
	bin, err := testenv.Chromium()
	if err != nil {
		return nil, err
	}
	profile, err := os.MkdirTemp("", "chromium-profile-")
	if err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(profile),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(1024, 768),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	began := time.Now()
	// The first action starts the browser (on the browser's own context:
	// the browser lives as long as the context of its first action).
	if _, err := chromedp.Run(ctx, chromedp.Title()); err != nil {
		cancelBrowser()
		cancelAlloc()
		_ = os.RemoveAll(profile)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	fmt.Fprintf(os.Stderr, "browser: %s started in %s\n", bin, time.Since(began).Round(10*time.Millisecond))
	browserCtx = ctx
	return func() { cancelBrowser(); cancelAlloc(); _ = os.RemoveAll(profile) }, nil
}
