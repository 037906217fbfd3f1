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

package binaries_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/setup/setuptest"
	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// TestNoSecretReachesTheLogsAtTheHighestVerbosity runs both binaries at
// --zap-log-level=10, where client-go logs every API request and response
// body, makes each read and write Secrets holding known values, and scans
// everything they printed (zap's output and klog's, which InitLogging
// routes to it) for those values and for every token the operator wrote.
func TestNoSecretReachesTheLogsAtTheHighestVerbosity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns, err := env.Namespace("leaks")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]string{
		"client secret": "leak-client-secret-7Hq2Lx9Pz4Nw",
		"access token":  "leak-access-token-3Fv8Tb1Kc6Ym",
		"refresh token": "leak-refresh-token-5Rj0Gd2Ws7Ue",
		"webhook token": "leak-webhook-token-9Ea4Qn6Vi1Oh",
	}
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "notion-client"},
			StringData: map[string]string{"client_id": "leak-client-id", "client_secret": known["client secret"]}},
		// As the operator writes it after a callback: labelled, so the
		// manager's informer lists it too.
		{ObjectMeta: metav1.ObjectMeta{Name: "notion-token", Labels: map[string]string{setup.ManagedByLabel: setup.ManagedByValue}},
			StringData: map[string]string{"access_token": known["access token"], "refresh_token": known["refresh token"]}},
		{ObjectMeta: metav1.ObjectMeta{Name: "notion-webhook"}, StringData: map[string]string{"token": known["webhook token"]}},
	} {
		s.Namespace = ns
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	ni := &v1alpha1.NotionIntegration{ObjectMeta: metav1.ObjectMeta{Name: "research", Namespace: ns}}
	ni.Spec.OAuth.ClientSecretRef.Name, ni.Spec.OAuth.TokenSecretRef.Name = "notion-client", "notion-token"
	ni.Spec.WebhookSecretRef.Name = "notion-webhook"
	if err := env.Client.Create(ctx, ni); err != nil {
		t.Fatal(err)
	}
	// A second integration, not connected yet: the manager publishes its
	// connect link, and the webhook's connect route starts a flow with it
	// (writing a state with its PKCE verifier).
	unconnected := &v1alpha1.NotionIntegration{ObjectMeta: metav1.ObjectMeta{Name: "unconnected", Namespace: ns}}
	unconnected.Spec.OAuth.ClientSecretRef.Name, unconnected.Spec.OAuth.TokenSecretRef.Name = "notion-client", "unconnected-token"
	unconnected.Spec.WebhookSecretRef.Name = "notion-webhook"
	if err := env.Client.Create(ctx, unconnected); err != nil {
		t.Fatal(err)
	}

	kc := kubeconfig(t)
	addrs := freeAddrs(t, 6)
	// Every upstream points at a port nothing listens on: the test is about
	// the Kubernetes client, and no outside call may succeed.
	var ups []string
	for _, n := range upstream.Names() {
		ups = append(ups, "--upstream", string(n)+"=http://"+addrs[5])
	}
	publicURL := "http://" + addrs[0]
	mgr := start(t, "manager", append([]string{"--kubeconfig", kc, "--zap-log-level=10",
		"--metrics-bind-address", addrs[3], "--health-probe-bind-address", addrs[4],
		"--public-url", publicURL, "--state-namespace", ns,
		"--leader-elect", "--leader-election-namespace", ns,
		"--leader-election-renew-deadline=8s", "--leader-election-retry-period=1s"}, ups...)...)
	hook := start(t, "webhook", append([]string{"--kubeconfig", kc, "--zap-log-level=10",
		"--bind-address", addrs[0], "--metrics-bind-address", addrs[1], "--health-probe-bind-address", addrs[2],
		"--public-url", publicURL, "--state-namespace", ns}, ups...)...)

	waitFor(t, "both binaries ready", time.Minute, func() bool {
		return ok("http://"+addrs[4]+"/readyz") && ok("http://"+addrs[2]+"/readyz")
	}, mgr, hook)
	// The manager reconciles the integration: it reads its Secrets with the
	// reconcile's logger in the context, which logs bodies at V(8) and up.
	waitFor(t, "the manager to log a reconcile's API bodies", time.Minute, func() bool {
		return linesWith(mgr.output(t), `"Response Body"`, `"reconcileID"`, `"research"`) > 0
	}, mgr, hook)

	// The webhook's connect route reads the integration's Secrets with the
	// request's logger in the context: once with a wrong token, and with the
	// right one when the manager has published the connect link.
	connect := func(id, link string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Request-Id", id)
		resp, err := http.DefaultTransport.RoundTrip(req) // not following the redirect to the (dead) provider
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	connect("leakcheck-wrong-token", publicURL+"/oauth/notion/connect?"+url.Values{
		"namespace": {ns}, "name": {"research"}, "token": {"not-the-connect-token"}}.Encode())
	link := connectLink(ctx, t, ns, unconnected.Name)
	connect("leakcheck-right-token", link)
	waitFor(t, "the webhook to log both connect requests' API bodies", 30*time.Second, func() bool {
		out := hook.output(t)
		return linesWith(out, `"Response Body"`, `"leakcheck-wrong-token"`) > 0 &&
			linesWith(out, `"Response Body"`, `"leakcheck-right-token"`) > 0
	}, mgr, hook)

	// A histogram shows only once observed: on a loaded machine the
	// manager may not have finished a reconcile by now (seen once in a
	// full run), so its reconcile times are waited for.
	waitFor(t, "the manager's first reconcile time", time.Minute, func() bool {
		return strings.Contains(scrapeText(t, "http://"+addrs[3]+"/metrics"), "controller_runtime_reconcile_time_seconds_bucket")
	}, mgr, hook)

	// What Prometheus would scrape of both, read before they stop: no
	// secret may be in it, and it must name every metric the chart's
	// dashboard and alerts query.
	pages := map[string]string{
		"manager /metrics":           scrapeText(t, "http://"+addrs[3]+"/metrics"),
		"manager /metrics/resources": scrapeText(t, "http://"+addrs[3]+"/metrics/resources"),
		"webhook /metrics":           scrapeText(t, "http://"+addrs[1]+"/metrics"),
	}
	checkDashboardAndAlertsQueryServedMetrics(t, pages)
	// Both binaries set up the audit record (docs/audit.md): its counter
	// is served with every fact at zero from the start.
	for _, page := range []string{"manager /metrics", "webhook /metrics"} {
		if !strings.Contains(pages[page], `switchboard_audit_facts_total{fact="calendar.appointment_deleted"} 0`) {
			t.Errorf("%s does not serve switchboard_audit_facts_total", page)
		}
	}

	// Stop both so that every line is written.
	mgr.stop()
	hook.stop()
	logs := map[string]string{"manager": mgr.output(t), "webhook": hook.output(t)}

	secrets := secretValues(ctx, t, ns)
	for k, v := range known {
		secrets[k] = v
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	secrets["connect token"] = u.Query().Get("token")
	var got v1alpha1.NotionIntegration
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ni), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.WebhookPath != "" {
		// The path is a capability: shown in the status, never logged.
		secrets["webhook path"] = got.Status.WebhookPath
	}
	t.Logf("scanning %d bytes of manager log and %d of webhook log for %d secret values",
		len(logs["manager"]), len(logs["webhook"]), len(secrets))

	for name, page := range pages {
		if found := setuptest.Find(page, secrets); len(found) > 0 {
			t.Errorf("%s holds %v", name, found)
		}
	}
	for name, log := range logs {
		if found := setuptest.Find(log, secrets); len(found) > 0 {
			t.Errorf("%s log holds %v", name, found)
		}
		// The filter withheld bodies; it did not silence the lines.
		if n := linesWith(log, `"Response Body"`, setup.Redacted); n == 0 {
			t.Errorf("%s log has no redacted body line: the test did not reach client-go's dumps", name)
		}
	}

	// Neither do statuses, specs or Events hold a token (the webhook path
	// belongs in the integration's status).
	events := &corev1.EventList{}
	if err := env.Client.List(ctx, events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	objs := &unstructured.UnstructuredList{}
	objs.SetAPIVersion(v1alpha1.GroupVersion.String())
	objs.SetKind("NotionIntegrationList")
	if err := env.Client.List(ctx, objs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	withoutPath := map[string]string{}
	for k, v := range secrets {
		if k != "webhook path" {
			withoutPath[k] = v
		}
	}
	for what, v := range map[string]any{"Events": events, "NotionIntegrations": objs} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if found := setuptest.Find(string(b), withoutPath); len(found) > 0 {
			t.Errorf("%s hold %v", what, found)
		}
	}
}

// connectLink is the connect URL the manager keeps in the Secret the
// integration's status names. The integration has no grant, so the manager
// must publish one: the test fails when it does not (before, it went on
// without the right-token request, and nobody noticed it never made one).
func connectLink(ctx context.Context, t *testing.T, ns, name string) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("NotionIntegration")
	var link string
	waitFor(t, "the manager to publish the integration's connect link", time.Minute, func() bool {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			t.Fatal(err)
		}
		secretName, _, _ := unstructured.NestedString(u.Object, "status", "connectSecretName")
		if secretName == "" {
			return false
		}
		var s corev1.Secret
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: secretName}, &s); err != nil {
			return false
		}
		link = string(s.Data["url"])
		return link != ""
	})
	return link
}

// secretValues are the values of every Secret key in ns that names a
// credential: tokens, client secrets, PKCE verifiers, connect links.
func secretValues(ctx context.Context, t *testing.T, ns string) map[string]string {
	t.Helper()
	var list corev1.SecretList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		for k, v := range s.Data {
			lk := strings.ToLower(k)
			// A SHA-256 of a 32-byte random token is no credential: the
			// connect token's is in the integration's status by design
			// (the webhook compares with it without reading Secrets).
			if strings.Contains(lk, "hash") || strings.Contains(lk, "sha256") {
				continue
			}
			if strings.Contains(lk, "token") || strings.Contains(lk, "secret") || strings.Contains(lk, "verifier") || lk == "url" {
				out[s.Name+"/"+k] = string(v)
			}
		}
	}
	return out
}
