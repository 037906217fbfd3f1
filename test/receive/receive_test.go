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
// (versitygw) and the sandbox's Discord.
package receive_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/blob"
	"github.com/switchboard-dev/switchboard/internal/controller"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/linktoken"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/session"
	"github.com/switchboard-dev/switchboard/internal/testenv"
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
)

const bucket = "user-prize"

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
	testenv.Main(m, &env, testenv.WithS3(&s3), func(e *testenv.Env) (func(), error) {
		ctx := context.Background()
		if err := s3.CreateBucket(ctx, bucket); err != nil {
			return nil, err
		}
		if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opns}}); err != nil {
			return nil, err
		}
		discordEm.AddClient("rcv-client", "rcv-secret")
		if err := e.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: opns, Name: "discord-client"},
			StringData: map[string]string{oauth.KeyClientID: "rcv-client", oauth.KeyClientSecret: "rcv-secret"}}); err != nil {
			return nil, err
		}
		box := sandbox.New(discordEm)
		srv := httptest.NewServer(box)
		set := sandbox.Upstreams(srv.URL)
		if err := set.Set("s3=" + s3.Endpoint); err != nil {
			return nil, err
		}
		out, err := outbound.New(set, outbound.Options{Timeout: 5 * time.Second})
		if err != nil {
			return nil, err
		}
		logger := logs.Logger()
		hookMgr, err := ctrl.NewManager(e.Config, ctrl.Options{Scheme: e.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: logger})
		if err != nil {
			return nil, err
		}
		if err := index.Register(ctx, hookMgr.GetFieldIndexer()); err != nil {
			return nil, err
		}
		bc, err := blob.New(blob.Options{Endpoint: s3.Endpoint, HTTPClient: out.HTTPClient()})
		if err != nil {
			return nil, err
		}
		hook := testenv.NewWebhook()
		hookURL = hook.URL
		keys := types.NamespacedName{Namespace: opns, Name: "link-keys"}
		audit := &webhook.Auditor{Client: hookMgr.GetClient(), Reader: hookMgr.GetAPIReader(),
			Recorder: hookMgr.GetEventRecorder("switchboard-webhook"), Interval: 50 * time.Millisecond, Log: logger}
		hook.Links = &webhook.Links{Namespace: opns, Cache: hookMgr.GetCache(), Blobs: bc, Secrets: hookMgr.GetAPIReader(),
			DefaultKeys: keys, Audit: audit, Clock: webhookClock{}}
		hook.SignIn = &webhook.SignIn{Sessions: &session.Store{Reader: hookMgr.GetAPIReader(), Writer: hookMgr.GetClient(), Namespace: opns,
			Engine:    &oauth.Engine{Store: &oauth.Store{Reader: hookMgr.GetAPIReader(), Writer: hookMgr.GetClient()}, Out: out},
			ClientKey: types.NamespacedName{Namespace: opns, Name: "discord-client"}}}
		hook.Registerer = metrics
		if err := hook.Serve(hookMgr, set, out, logger); err != nil {
			return nil, err
		}
		stopHook := testenv.StartManager(hookMgr)

		mgr, err := ctrl.NewManager(e.Config, ctrl.Options{Scheme: e.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: logger})
		if err != nil {
			return nil, err
		}
		if err := controller.SetupLinks(mgr, controller.LinksDeps{Out: out, Namespace: opns, DefaultKeys: keys, PublicURL: hookURL, Registerer: metrics}); err != nil {
			return nil, err
		}
		stopMgr := testenv.StartManager(mgr)
		auditCtx, stopAudit := context.WithCancel(ctx)
		go func() { _ = audit.Start(auditCtx) }()
		return func() { stopMgr(); stopAudit(); stopHook(); hook.Close(); srv.Close() }, nil
	})
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
	ctx := context.Background()
	key := "user_prize/" + ns + "/" + name + " 賞品.zip"
	if err := s3.Blob.Put(ctx, s3.Object(bucket, key), []byte(body), "application/zip"); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-s3"}, Data: s3.Credentials.SecretData()}
	if err := env.Client.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	l := &v1alpha1.ReceiveLink{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	l.Spec.Blob = v1alpha1.BlobLocation{Bucket: bucket, Key: key, CredentialsSecretRef: v1alpha1.SecretReference{Name: sec.Name}}
	l.Spec.TTL = &metav1.Duration{Duration: time.Hour}
	if change != nil {
		change(l)
	}
	if err := env.Client.Create(ctx, l); err != nil {
		t.Fatal(err)
	}
	var shareSec corev1.Secret
	testenv.Eventually(t, "the link is Ready with its share Secret", func() bool {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(l), l); err != nil {
			return false
		}
		ready := false
		for _, c := range l.Status.Conditions {
			ready = ready || c.Type == v1alpha1.ReadyCondition && c.Status == metav1.ConditionTrue
		}
		return ready && env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: l.Status.ShareSecretName}, &shareSec) == nil
	})
	short := string(shareSec.Data[linktoken.ShareShortToken])
	if got := string(shareSec.Data[linktoken.ShareURL]); got != hookURL+"/r/"+short {
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

// resolveWhenCached resolves until the webhook's cache has the new link.
func resolveWhenCached(t *testing.T, c *http.Client, short string) *http.Response {
	t.Helper()
	var resp *http.Response
	testenv.Eventually(t, "the webhook resolves the new link", func() bool {
		resp, _ = get(t, c, hookURL+"/r/"+short)
		return resp.StatusCode != http.StatusNotFound
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
	l, short := share(t, ns, "scan", "scanned bytes", nil)
	c := noRedirects(t)
	resp := resolveWhenCached(t, c, short)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	var obj, shareSec, creds corev1.Secret
	ctx := context.Background()
	for key, into := range map[types.NamespacedName]*corev1.Secret{
		{Namespace: opns, Name: linktoken.ObjectName(short)}:         &obj,
		{Namespace: ns, Name: l.Status.ShareSecretName}:              &shareSec,
		{Namespace: ns, Name: l.Spec.Blob.CredentialsSecretRef.Name}: &creds,
	} {
		if err := env.Client.Get(ctx, key, into); err != nil {
			t.Fatal(err)
		}
	}
	secrets := map[string]string{
		"short token":        short,
		"long token":         string(obj.Data[linktoken.DataLongToken]),
		"share URL":          string(shareSec.Data[linktoken.ShareURL]),
		"download signature": loc.Query().Get("X-Amz-Signature"),
		"storage secret key": string(creds.Data[blob.KeySecretAccessKey]),
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
	if !strings.Contains(exposition.String(), `switchboard_webhook_requests_total{`) {
		t.Errorf("the webhook's metrics were not gathered")
	}
}
