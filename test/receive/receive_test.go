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

// Package receive_test runs ReceiveLink end to end on a real API server
// (seed 003, issue 9): the controller in a manager, the webhook's resolve
// and Discord sign-in routes on a cache of their own, a real S3 server
// (versitygw) and the sandbox's Discord. The manager and the webhook run
// as the chart's ServiceAccounts with exactly the RBAC `helm template`
// renders (issue 17): the webhook, which faces the internet, may touch
// Secrets only in its own namespace, which is also the link namespace
// here, and the run fails if the API server refused either anything.
package receive_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/contract/session"
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

var (
	env       *testenv.Env
	s3        *testenv.S3
	discordEm = sandbox.NewDiscord()
	hookURL   string
	// hookNow is the webhook's clock: the real one until a test sets it.
	hookNow atomic.Pointer[clocktesting.FakeClock]
	opns    = "switchboard-system"
	// logs holds every line the manager, the webhook server and its
	// auditor log; metrics gathers the webhook's and the sweep's metrics
	// (the controllers' are in controller-runtime's registry): the token
	// scan reads them.
	logs    = &testenv.Logs{}
	metrics = prometheus.NewRegistry()
	// hookCache and hookReader are the webhook's cache and API reader, as
	// the chart's webhook ServiceAccount.
	hookCache  client.Reader
	hookReader client.Reader
	rbac       *testenv.ChartRBAC
	// outside records every request the webhook made for Secrets outside
	// webhookNamespaces.
	outside = &secretSpy{}
)

// webhookNamespaces are those whose Secrets the webhook may read: its own,
// which is the state and the link namespace.
var webhookNamespaces = map[string]bool{"switchboard-system": true}

const bucket = "user-prize"

// linkKeys is the default key Secret, in opns.
const linkKeys = "link-keys"

var (
	// sandboxURL is the sandbox's (every upstream but S3).
	sandboxURL string
	// logger is the manager's and the webhook's.
	logger logr.Logger
	// stopMgr stops the manager running now.
	stopMgr func()
)

// webhookClock reads hookNow.
type webhookClock struct{}

func (webhookClock) Now() time.Time {
	if c := hookNow.Load(); c != nil {
		return c.Now()
	}
	return time.Now()
}

func (c webhookClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func TestMain(m *testing.M) {
	testenv.Main(m, &env, testenv.WithS3(&s3), testenv.WithChartRBAC(&rbac, opns), func(e *testenv.Env) (func(), error) {
		ctx := context.Background()
		if err := s3.CreateBucket(ctx, bucket); err != nil {
			return nil, err
		}
		discordEm.AddClient("rcv-client", "rcv-secret")
		if err := e.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: opns, Name: "discord-client"},
			StringData: map[string]string{oauth.KeyClientID: "rcv-client", oauth.KeyClientSecret: "rcv-secret"}}); err != nil {
			return nil, err
		}
		box := sandbox.New(discordEm)
		srv := httptest.NewServer(box)
		sandboxURL = srv.URL
		set := sandbox.Upstreams(srv.URL)
		if err := set.Set("s3=" + s3.Endpoint); err != nil {
			return nil, err
		}
		out, err := outbound.New(set, outbound.Options{Timeout: 5 * time.Second})
		if err != nil {
			return nil, err
		}
		// The binaries' own filter (setup.Redact) over a logger that keeps
		// verbosity 10, where client-go logs every request and response
		// body: the token scan reads every line, client-go's included.
		logger = setup.Redact(logs.Logger())
		// The webhook as it runs in a cluster: the chart's ServiceAccount,
		// and a cache of the managed-by Secrets of its own namespace only.
		hookCfg := rest.CopyConfig(rbac.Webhook)
		hookCfg.Wrap(outside.wrap)
		hookMgr, err := testenv.WebhookCluster(hookCfg, []string{opns}, func(o *cluster.Options) { o.Logger = logger })
		if err != nil {
			return nil, err
		}
		hookCache, hookReader = hookMgr.GetCache(), hookMgr.GetAPIReader()
		bc, err := blob.New(blob.Options{Endpoint: s3.Endpoint, HTTPClient: out.HTTPClient()})
		if err != nil {
			return nil, err
		}
		hook := testenv.NewWebhook()
		hook.StateNamespace = opns
		hookURL = hook.URL
		keys := types.NamespacedName{Namespace: opns, Name: linkKeys}
		audit := &webhook.Auditor{Client: hookMgr.GetClient(), Reader: hookMgr.GetAPIReader(),
			Recorder: hookMgr.GetEventRecorder("switchboard-webhook"), Interval: 50 * time.Millisecond, Log: logger}
		hook.Links = &webhook.Links{Namespace: opns, Cache: hookMgr.GetCache(), Blobs: bc,
			DefaultKeys: keys, Audit: audit, Clock: webhookClock{}}
		hook.SignIn = &webhook.SignIn{Sessions: &session.Store{Reader: hookMgr.GetAPIReader(), Writer: hookMgr.GetClient(), Namespace: opns,
			Engine:    setup.Engine(hookMgr, out),
			ClientKey: types.NamespacedName{Namespace: opns, Name: "discord-client"}}}
		hook.Registerer = metrics
		if err := hook.Serve(hookMgr, set, out, logger); err != nil {
			return nil, err
		}
		stopHook := testenv.StartManager(hookMgr)

		if err := startManager(e, s3.Endpoint); err != nil {
			return nil, err
		}
		auditCtx, stopAudit := context.WithCancel(ctx)
		go func() { _ = audit.Start(auditCtx) }()
		return func() { stopMgr(); stopAudit(); stopHook(); hook.Close(); srv.Close() }, nil
	})
}

// startManager starts a new manager running the ReceiveLink controller as
// the manager binary does, as the chart's ServiceAccount, reaching S3 at
// s3URL and the other upstreams at the sandbox, and sets stopMgr. The
// restore tests stop the manager and start another.
func startManager(e *testenv.Env, s3URL string) error {
	set := sandbox.Upstreams(sandboxURL)
	if err := set.Set("s3=" + s3URL); err != nil {
		return err
	}
	// Rotations reach the copies in the link namespace within a
	// refresh: a short one here.
	links := &receivelink.Controller{Namespace: opns, KeySecret: linkKeys, MirrorInterval: 100 * time.Millisecond}
	_, stop, err := testenv.StartOperator(rbac.Manager, wire.Operator{Kinds: []wire.Kind{links},
		Upstreams: set, OutboundOptions: outbound.Options{Timeout: 5 * time.Second},
		Deps:    wire.Deps{PublicURL: hookURL, StateNamespace: opns, Registerer: reregisterer{metrics}},
		Options: func(o *ctrl.Options) { o.Logger = logger }})
	if err != nil {
		return err
	}
	stopMgr = stop
	return nil
}

// reregisterer registers collectors in a registry, each in place of one
// registered before under the same descriptors: a restarted manager's
// sweep counts in metrics as the stopped one's did.
type reregisterer struct{ reg *prometheus.Registry }

func (r reregisterer) Register(c prometheus.Collector) error {
	err := r.reg.Register(c)
	var dup prometheus.AlreadyRegisteredError
	if errors.As(err, &dup) {
		r.reg.Unregister(dup.ExistingCollector)
		return r.reg.Register(c)
	}
	return err
}

func (r reregisterer) Unregister(c prometheus.Collector) bool { return r.reg.Unregister(c) }

func (r reregisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// noRedirects is a client that shows each redirect, with a cookie jar.
func noRedirects(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// share creates a ReceiveLink for a fresh blob holding body and waits
// until it is Ready; it returns the link and its short token.
func share(t *testing.T, ns, name, body string, change func(*v1alpha1.ReceiveLink)) (*v1alpha1.ReceiveLink, string) {
	t.Helper()
	return shareWith(t, ns, name, body, s3.Credentials, change)
}

// shareWith is share with the credentials in the link's Secret
// (name-s3, in ns) given.
func shareWith(t *testing.T, ns, name, body string, creds blob.Credentials, change func(*v1alpha1.ReceiveLink)) (*v1alpha1.ReceiveLink, string) {
	t.Helper()
	l, data := testenv.ShareLink(t, env.Client, s3, bucket, ns, name, body, creds, change)
	short := string(data[linktoken.ShareShortToken])
	if got := string(data[linktoken.ShareURL]); got != hookURL+"/r/"+short {
		t.Fatalf("share URL %q", got)
	}
	return l, short
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// resolveWhenCached resolves until the webhook's cache has the new link:
// its short-token object (404 before) and its Ready status (503 with
// Retry-After before: the link is not serving yet, as the cache shows it).
func resolveWhenCached(t *testing.T, c *http.Client, short string) *http.Response {
	t.Helper()
	var resp *http.Response
	testenv.Eventually(t, "the webhook resolves the new link", func() bool {
		resp, _ = get(t, c, hookURL+"/r/"+short)
		return resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusServiceUnavailable
	})
	return resp
}

func TestAShortLinkRedirectsToItsBytesAndEveryResolveIsAudited(t *testing.T) {
	ns, _ := env.Namespace("rcv")
	l, short := share(t, ns, "prize", "the prize bytes", nil)
	c := noRedirects(t)
	resp := resolveWhenCached(t, c, short)
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("resolve = %d %v", resp.StatusCode, resp.Header)
	}
	loc := resp.Header.Get("Location")
	dl, body := get(t, http.DefaultClient, loc)
	if dl.StatusCode != http.StatusOK || body != "the prize bytes" {
		t.Fatalf("download = %d %q", dl.StatusCode, body)
	}
	if cd := dl.Header.Get("Content-Disposition"); !strings.Contains(cd, "prize") || !strings.Contains(cd, "UTF-8''") {
		t.Errorf("Content-Disposition %q does not keep the file's name", cd)
	}
	u, _ := url.Parse(loc)
	if exp := u.Query().Get("X-Amz-Expires"); exp != "300" {
		t.Errorf("the download URL lives %ss, want 300", exp)
	}
	// Tampered with, the signed URL is refused by the real S3 server.
	q := u.Query()
	q.Set("X-Amz-Expires", "3600")
	u.RawQuery = q.Encode()
	if bad, _ := get(t, http.DefaultClient, u.String()); bad.StatusCode != http.StatusForbidden {
		t.Errorf("a lengthened URL = %d, want 403", bad.StatusCode)
	}

	get(t, c, hookURL+"/r/"+short)
	testenv.Eventually(t, "two resolves counted in status and audited by Events", func() bool {
		var now v1alpha1.ReceiveLink
		if env.Client.Get(context.Background(), client.ObjectKeyFromObject(l), &now) != nil || now.Status.ResolveCount != 2 || now.Status.LastResolvedAt == nil {
			return false
		}
		var evs eventsv1.EventList
		if env.Client.List(context.Background(), &evs, client.InNamespace(ns)) != nil {
			return false
		}
		n := 0
		for _, e := range evs.Items {
			if e.Reason == "Resolved" && e.Regarding.Name == "prize" {
				if strings.Contains(e.Note, short) {
					t.Fatal("a short token is in an Event")
				}
				n++
				if e.Series != nil {
					n += int(e.Series.Count) - 1
				}
			}
		}
		return n >= 1
	})
}

func TestUnknownTamperedAndExpiredLinks(t *testing.T) {
	ns, _ := env.Namespace("rcv")
	l, short := share(t, ns, "prize", "bytes", nil)
	c := noRedirects(t)
	resolveWhenCached(t, c, short)
	for _, s := range []string{"AAAAAAAAAA", "short", "../../etc/passwd"} {
		if resp, body := get(t, c, hookURL+"/r/"+url.PathEscape(s)); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "NOT_FOUND") {
			t.Errorf("%q = %d %s", s, resp.StatusCode, body)
		}
	}

	// On the expiry second the link is gone, before the controller runs
	// (its timer is an hour away on the real clock).
	exp := l.Status.ExpiresAt.Time
	clk := clocktesting.NewFakeClock(exp.Add(-time.Millisecond))
	hookNow.Store(clk)
	defer hookNow.Store(nil)
	if resp, _ := get(t, c, hookURL+"/r/"+short); resp.StatusCode != http.StatusFound {
		t.Fatalf("a millisecond before expiry = %d", resp.StatusCode)
	}
	clk.SetTime(exp)
	if resp, body := get(t, c, hookURL+"/r/"+short); resp.StatusCode != http.StatusGone || !strings.Contains(body, "GONE") {
		t.Fatalf("at expiry = %d %s", resp.StatusCode, body)
	}
	hookNow.Store(nil)

	// An edited long token opens with no key: 404, like an unknown token.
	var obj corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: opns, Name: linktoken.ObjectName(short)}, &obj); err != nil {
		t.Fatal(err)
	}
	long := string(obj.Data[linktoken.DataLongToken])
	obj.Data[linktoken.DataLongToken] = []byte(long[:len(long)-2] + "AA")
	if err := env.Client.Update(context.Background(), &obj); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the edited token answers 404", func() bool {
		resp, _ := get(t, c, hookURL+"/r/"+short)
		return resp.StatusCode == http.StatusNotFound
	})
}

func TestADiscordRestrictedLinkNeedsThatUserSignedIn(t *testing.T) {
	ns, _ := env.Namespace("rcv")
	const alice, mallory = "123456789012345678", "987654321098765432"
	_, short := share(t, ns, "for-alice", "alice's prize", func(l *v1alpha1.ReceiveLink) { l.Spec.Receiver.DiscordUserID = alice })

	// Mallory signs in: the link refuses her.
	discordEm.SetConsentUser(sandbox.DiscordUser{ID: mallory, Username: "mallory"})
	c := noRedirects(t)
	resp := resolveWhenCached(t, c, short)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("without a session = %d", resp.StatusCode)
	}
	authz, _ := url.Parse(resp.Header.Get("Location"))
	q := authz.Query()
	if !strings.HasSuffix(authz.Path, "/oauth2/authorize") || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" {
		t.Fatalf("sign-in redirect %s", authz)
	}
	follow := func(u string) *http.Response {
		t.Helper()
		r, _ := get(t, c, u)
		return r
	}
	cb := follow(authz.String())              // consent → our callback
	back := follow(cb.Header.Get("Location")) // callback → /r/{short}
	if !strings.HasSuffix(back.Header.Get("Location"), "/r/"+short) {
		t.Fatalf("callback answered %d → %q", back.StatusCode, back.Header.Get("Location"))
	}
	if r := follow(hookURL + "/r/" + short); r.StatusCode != http.StatusForbidden {
		t.Fatalf("mallory = %d, want 403", r.StatusCode)
	}
	// The state worked once.
	if again := follow(cb.Header.Get("Location")); again.StatusCode < 400 {
		t.Errorf("a second callback with the same state = %d", again.StatusCode)
	}

	// Alice, in her own browser.
	discordEm.SetConsentUser(sandbox.DiscordUser{ID: alice, Username: "alice"})
	c = noRedirects(t)
	first := follow(hookURL + "/r/" + short)
	cb = follow(first.Header.Get("Location"))
	follow(cb.Header.Get("Location"))
	final := follow(hookURL + "/r/" + short)
	if final.StatusCode != http.StatusFound {
		t.Fatalf("alice = %d", final.StatusCode)
	}
	if _, body := get(t, http.DefaultClient, final.Header.Get("Location")); body != "alice's prize" {
		t.Fatalf("alice downloaded %q", body)
	}
}

// TestNoTokenInStatusEventsLogsOrMetrics resolves a link, lets a tampered
// one be logged, and then looks for every secret of the link — the short
// token, the long token, the share URL, the download URL's signature, the
// storage key — in its status, every Event, every log line and every
// metric of the manager and the webhook.
func TestNoTokenInStatusEventsLogsOrMetrics(t *testing.T) {
	ns, _ := env.Namespace("rcv")
	ctx := context.Background()
	// The link names its own keys: they are mirrored into the link
	// namespace, and its credentials copied beside its long token.
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scan-keys"}, Data: linktoken.NewKeyData("k1")}); err != nil {
		t.Fatal(err)
	}
	l, short := share(t, ns, "scan", "scanned bytes", withKeys("scan-keys"))
	c := noRedirects(t)
	resp := resolveWhenCached(t, c, short)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	var obj, shareSec, creds, mirror corev1.Secret
	for key, into := range map[types.NamespacedName]*corev1.Secret{
		{Namespace: opns, Name: linktoken.ObjectName(short)}:               &obj,
		{Namespace: ns, Name: l.Status.ShareSecretName}:                    &shareSec,
		{Namespace: ns, Name: l.Spec.Blob.CredentialsSecretRef.Name}:       &creds,
		{Namespace: opns, Name: linktoken.KeysMirrorName(ns, "scan-keys")}: &mirror,
	} {
		if err := env.Client.Get(ctx, key, into); err != nil {
			t.Fatal(err)
		}
	}
	secrets := map[string]string{
		"short token":             short,
		"long token":              string(obj.Data[linktoken.DataLongToken]),
		"share URL":               string(shareSec.Data[linktoken.ShareURL]),
		"download signature":      loc.Query().Get("X-Amz-Signature"),
		"storage secret key":      string(creds.Data[blob.KeySecretAccessKey]),
		"copied storage key":      string(obj.Data[linktoken.DataSecretAccessKey]),
		"mirrored encryption key": string(mirror.Data["k1"]),
	}
	for what, v := range secrets {
		if len(v) < 10 {
			t.Fatalf("the %s is %q: the scan would prove nothing", what, v)
		}
	}
	// A link whose long token does not open is logged (without it).
	_, badShort := share(t, ns, "scan-tampered", "bytes", nil)
	resolveWhenCached(t, c, badShort)
	var bad corev1.Secret
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: opns, Name: linktoken.ObjectName(badShort)}, &bad); err != nil {
		t.Fatal(err)
	}
	secrets["tampered long token"] = string(bad.Data[linktoken.DataLongToken]) + "x"
	var defaultKeys corev1.Secret
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: opns, Name: "link-keys"}, &defaultKeys); err != nil {
		t.Fatal(err)
	}
	secrets["default encryption key"] = string(defaultKeys.Data[string(defaultKeys.Data[linktoken.KeyCurrent])])
	bad.Data[linktoken.DataLongToken] = []byte(secrets["tampered long token"])
	if err := env.Client.Update(ctx, &bad); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the tampered link is logged and the resolve counted", func() bool {
		r, _ := get(t, c, hookURL+"/r/"+badShort)
		var now v1alpha1.ReceiveLink
		return r.StatusCode == http.StatusNotFound && strings.Contains(logs.Text(), "does not open") &&
			env.Client.Get(ctx, client.ObjectKeyFromObject(l), &now) == nil && now.Status.ResolveCount >= 1
	})

	var now v1alpha1.ReceiveLink
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(l), &now); err != nil {
		t.Fatal(err)
	}
	statusJSON, _ := json.Marshal(now.Status)
	var evs eventsv1.EventList
	if err := env.Client.List(ctx, &evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	eventsJSON, _ := json.Marshal(evs.Items)
	var exposition strings.Builder
	for _, g := range []prometheus.Gatherer{metrics, ctrlmetrics.Registry} {
		families, err := g.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range families {
			if _, err := expfmt.MetricFamilyToText(&exposition, mf); err != nil {
				t.Fatal(err)
			}
		}
	}
	places := map[string]string{"status": string(statusJSON), "Events": string(eventsJSON), "logs": logs.Text(), "metrics": exposition.String()}
	for where, text := range places {
		if len(text) < 100 {
			t.Fatalf("%s hold %d bytes: the scan would prove nothing", where, len(text))
		}
		for what, v := range secrets {
			if strings.Contains(text, v) {
				t.Errorf("the %s is in the %s", what, where)
			}
		}
	}
	// The scan covered client-go's body dumps, Secrets' included: they are
	// in the logs, with their bodies withheld.
	if !strings.Contains(logs.Text(), `"msg"="Response Body"`) || !strings.Contains(logs.Text(), setup.Redacted) {
		t.Errorf("the logs hold no redacted body dump: the scan did not reach verbosity 8")
	}
	if !strings.Contains(exposition.String(), `switchboard_webhook_requests_total{`) {
		t.Errorf("the webhook's metrics were not gathered")
	}
}

// withKeys makes a link name its own key Secret.
func withKeys(name string) func(*v1alpha1.ReceiveLink) {
	return func(l *v1alpha1.ReceiveLink) { l.Spec.EncryptionKeySecretRef = &v1alpha1.SecretReference{Name: name} }
}

// download follows a resolve's redirect on the real S3 server and checks
// the bytes; it returns the presigned URL.
func download(t *testing.T, resp *http.Response, want string) *url.URL {
	t.Helper()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("resolve = %d, want 302", resp.StatusCode)
	}
	loc := resp.Header.Get("Location")
	if dl, body := get(t, http.DefaultClient, loc); dl.StatusCode != http.StatusOK || body != want {
		t.Fatalf("download = %d %q, want %q", dl.StatusCode, body, want)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// signedBy says whether a presigned URL is signed with the access key id.
func signedBy(u *url.URL, accessKeyID string) bool {
	return strings.HasPrefix(u.Query().Get("X-Amz-Credential"), accessKeyID+"/")
}

// noSecretReadOutside fails the test if the webhook has asked the API
// server for any Secret outside its namespaces (in this test or before).
func noSecretReadOutside(t *testing.T) {
	t.Helper()
	if seen := outside.requests(); len(seen) > 0 {
		t.Fatalf("the webhook asked for Secrets outside %v: %v", webhookNamespaces, seen)
	}
}

// TestTheWebhookResolvesWithoutReadingALinksNamespace: a link naming its
// own key Secret, its credentials in its own namespace, resolves to a
// download that works, though the webhook's identity cannot read either
// Secret: the manager published their copies in the link namespace.
func TestTheWebhookResolvesWithoutReadingALinksNamespace(t *testing.T) {
	ns, _ := env.Namespace("rcv")
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-keys"}, Data: linktoken.NewKeyData("k1")}); err != nil {
		t.Fatal(err)
	}
	l, short := share(t, ns, "walled", "bytes behind a wall", withKeys("team-keys"))

	// The restriction is real: the webhook's identity is refused both.
	as, err := client.New(rbac.Webhook, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"team-keys", l.Spec.Blob.CredentialsSecretRef.Name} {
		if err := as.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &corev1.Secret{}); !apierrors.IsForbidden(err) {
			t.Fatalf("the webhook's identity reading Secret %s/%s: %v, want Forbidden", ns, name, err)
		}
	}
	// Those two refusals are this test's own; nothing else was refused.
	if d := rbac.Drain(); len(d) != 2 || !strings.Contains(d[0], "/namespaces/"+ns+"/secrets/") || !strings.Contains(d[1], "/namespaces/"+ns+"/secrets/") {
		t.Fatalf("denials after the two forbidden reads: %v", d)
	}

	c := noRedirects(t)
	u := download(t, resolveWhenCached(t, c, short), "bytes behind a wall")
	if !signedBy(u, s3.Credentials.AccessKeyID) {
		t.Errorf("the download URL is not signed with the link's credentials")
	}
	// What the webhook read instead: copies in the link namespace, in its
	// cache.
	var mirror corev1.Secret
	if err := hookCache.Get(ctx, types.NamespacedName{Namespace: opns, Name: linktoken.KeysMirrorName(ns, "team-keys")}, &mirror); err != nil {
		t.Fatalf("the key mirror is not in the webhook's cache: %v", err)
	}
	noSecretReadOutside(t)
}

// TestRotatedCredentialsAndKeysReachTheWebhook rotates a link's storage
// credentials to another S3 user's, and adds a key to its key Secret: the
// webhook presigns with the new credentials, and a link sealed with the
// new key resolves, while the old one still does.
func TestRotatedCredentialsAndKeysReachTheWebhook(t *testing.T) {
	ns, _ := env.Namespace("rcv")
	ctx := context.Background()
	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-keys"}, Data: linktoken.NewKeyData("k1")}
	if err := env.Client.Create(ctx, keys); err != nil {
		t.Fatal(err)
	}
	first := s3User(t)
	l, short := shareWith(t, ns, "rotating", "rotating bytes", first, withKeys("team-keys"))
	c := noRedirects(t)
	if u := download(t, resolveWhenCached(t, c, short), "rotating bytes"); !signedBy(u, first.AccessKeyID) {
		t.Fatalf("the first download URL is not signed by the first user")
	}

	// The credentials are rotated to a second user's.
	second := s3User(t)
	var creds corev1.Secret
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: l.Spec.Blob.CredentialsSecretRef.Name}, &creds); err != nil {
		t.Fatal(err)
	}
	creds.Data = second.SecretData()
	if err := env.Client.Update(ctx, &creds); err != nil {
		t.Fatal(err)
	}
	var resp *http.Response
	testenv.Eventually(t, "the webhook presigns with the rotated credentials", func() bool {
		resp, _ = get(t, c, hookURL+"/r/"+short)
		u, _ := url.Parse(resp.Header.Get("Location"))
		return resp.StatusCode == http.StatusFound && signedBy(u, second.AccessKeyID)
	})
	download(t, resp, "rotating bytes")

	// A second key becomes current; the first is kept.
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(keys), keys); err != nil {
		t.Fatal(err)
	}
	for k, v := range linktoken.NewKeyData("k2") {
		keys.Data[k] = v
	}
	if err := env.Client.Update(ctx, keys); err != nil {
		t.Fatal(err)
	}
	fresh, freshShort := share(t, ns, "sealed-k2", "sealed with k2", withKeys("team-keys"))
	if fresh.Status.KeyID != "k2" {
		t.Fatalf("the new link is sealed with %q, want k2", fresh.Status.KeyID)
	}
	download(t, resolveWhenCached(t, c, freshShort), "sealed with k2")
	resp, body := get(t, c, hookURL+"/r/"+short)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("the link sealed with k1 answered %d once k2 was current: %s", resp.StatusCode, body)
	}
	download(t, resp, "rotating bytes")
	noSecretReadOutside(t)
}

// s3User creates a user of the S3 server, with the admin role (it reads
// every bucket), through versitygw's admin API signed by the root
// account.
func s3User(t *testing.T) blob.Credentials {
	t.Helper()
	creds := blob.Credentials{AccessKeyID: "U" + capability.Base62(15), SecretAccessKey: capability.Random(30)}
	body := fmt.Sprintf("<Account><Access>%s</Access><Secret>%s</Secret><Role>admin</Role></Account>", creds.AccessKeyID, creds.SecretAccessKey)
	sum := sha256.Sum256([]byte(body))
	req, err := http.NewRequest(http.MethodPatch, s3.Endpoint+"/create-user", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	root := aws.Credentials{AccessKeyID: s3.Credentials.AccessKeyID, SecretAccessKey: s3.Credentials.SecretAccessKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), root, req, hex.EncodeToString(sum[:]), "s3", s3.Region, time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, b := getReq(t, req)
	if resp.StatusCode >= 300 {
		t.Fatalf("create an S3 user = %d %s", resp.StatusCode, b)
	}
	return creds
}

func getReq(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// secretSpy records the webhook's requests for Secrets outside
// webhookNamespaces (RBAC refuses them; this says that none was made).
type secretSpy struct {
	mu   sync.Mutex
	seen []string
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (s *secretSpy) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		// /api/v1/secrets (every namespace) or /api/v1/namespaces/NS/secrets[/NAME]
		p := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		cluster := len(p) >= 3 && p[0] == "api" && p[1] == "v1" && p[2] == "secrets"
		namespaced := len(p) >= 5 && p[0] == "api" && p[1] == "v1" && p[2] == "namespaces" && p[4] == "secrets"
		if cluster || namespaced && !webhookNamespaces[p[3]] {
			s.mu.Lock()
			s.seen = append(s.seen, r.Method+" "+r.URL.Path)
			s.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

func (s *secretSpy) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}
