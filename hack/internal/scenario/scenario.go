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

// Package scenario is the walk through every kind that `make demo` and
// `make e2e` both take, as a person would: a Google grant through the
// sandbox's consent, the samples applied, slides stocked, Notion connected
// and an Automation's page filled, the webhook's guards, Calendar connect,
// cancel and renewal, Sheets connect and ingest, and a share link
// resolved, downloaded and expired. Only where Switchboard runs differs:
// local processes (hack/demo) or Pods behind a Service (hack/e2e).
package scenario

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/blob"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

const (
	// Namespace holds the samples and everything the walk creates.
	Namespace = "demo"
	// NotionIntegrationName is the sample integration the walk connects;
	// ArxivLink the paper its Automation posts.
	NotionIntegrationName = "research"
	ArxivLink             = "https://arxiv.org/abs/2301.12345v2"
)

// Demo is one walk. C is an administrator's client; SandboxURL the
// sandbox the binaries' upstreams point at, started with SandboxSeed and
// SandboxArgs; WebhookURL the webhook's public URL (the binaries'
// --public-url), as a browser or an upstream reaches it; S3 the versitygw
// the binaries' s3 upstream points at.
type Demo struct {
	C                      client.Client
	SandboxURL, WebhookURL string
	S3                     *testenv.S3
	// paperSample is the PaperSync sample, applied by notionAutomation.
	paperSample *unstructured.Unstructured
}

// Step prints the heading of one step of a walk.
func Step(format string, args ...any) { fmt.Printf("==> "+format+"\n", args...) }

// SandboxSeed is the sandbox's seed file for the walk: the OAuth clients
// the samples' Secrets name, the Notion workspace, and the spreadsheet.
func SandboxSeed() []byte {
	return []byte(`{"googleOAuth":{"clients":{"demo-client":"demo-secret"}},
 "notion":{"clients":{"demo-notion-client":"demo-notion-secret"},
           "workspace":{"ID":"5d1f0a52-9a7e-4c1e-9b8e-2f6a1c3d4e5f","Name":"Demo Lab","BotID":"b07b07b0-0000-4000-8000-000000000001"},
           "pages":["Reading list"]},
 "googleSheets":` + sheetsSeed + `}`)
}

// SandboxArgs are the sandbox's flags for the walk besides --addr and
// --seed.
func SandboxArgs() []string {
	return []string{"--calendar-max-channel-ttl", calendarChannelTTL.String()}
}

// Prepare creates what must exist before the samples are applied: the
// namespace, the bucket and the sample's file (as the application that
// stores prizes would).
func (d *Demo) Prepare(ctx context.Context) error {
	if err := d.C.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	return d.uploadBlobs(ctx)
}

// Run walks every kind, after Prepare, with the manager and the webhook
// running; extraStaged names objects besides the walk's own that are not
// Ready on purpose ("Kind/namespace/name" → why), for the final check.
func (d *Demo) Run(ctx context.Context, extraStaged map[string]string) error {
	Step("connecting a Google account through the sandbox's OAuth consent")
	refreshToken, err := googleConsent(d.SandboxURL, d.WebhookURL)
	if err != nil {
		return err
	}

	Step("creating the Secrets the samples refer to, in namespace %q", Namespace)
	if err := d.secrets(ctx, refreshToken); err != nil {
		return err
	}

	Step("applying config/samples")
	if err := d.applySamples(ctx); err != nil {
		return err
	}

	Step("stocking slides from all three providers, and one that does not exist")
	if err := d.slides(ctx); err != nil {
		return err
	}

	Step("connecting the Notion workspace through the OAuth routes, as a browser would")
	if err := d.connectNotion(ctx, d.WebhookURL); err != nil {
		return err
	}

	Step("a Notion Automation posts a page's arXiv link to the webhook")
	if err := d.notionAutomation(ctx, d.SandboxURL, d.WebhookURL); err != nil {
		return err
	}

	Step("checking the webhook server's guards")
	if err := checkWebhook(d.WebhookURL); err != nil {
		return err
	}

	if err := d.calendar(ctx, d.SandboxURL, d.WebhookURL); err != nil {
		return err
	}

	if err := d.sheets(ctx, d.SandboxURL, d.WebhookURL); err != nil {
		return err
	}

	if err := d.receive(ctx); err != nil {
		return err
	}

	Step("every Switchboard object is Ready but the staged ones")
	return d.CheckTable(ctx, extraStaged)
}

// googleConsent runs the authorization-code flow against the sandbox's
// Google OAuth emulator, as a person's browser would, and returns the
// refresh token.
func googleConsent(sandboxURL, webhookURL string) (string, error) {
	redirect := webhookURL + "/google/oauth/callback"
	q := url.Values{"client_id": {"demo-client"}, "redirect_uri": {redirect}, "response_type": {"code"},
		"scope":       {"https://www.googleapis.com/auth/calendar https://www.googleapis.com/auth/spreadsheets"},
		"access_type": {"offline"}, "state": {"demo"}}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(sandboxURL + "/googleaccounts/o/oauth2/v2/auth?" + q.Encode())
	if err != nil {
		return "", err
	}
	_ = resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		return "", fmt.Errorf("consent answered %d without a code", resp.StatusCode)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect}}
	req, _ := http.NewRequest("POST", sandboxURL+"/googleoauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("demo-client", "demo-secret")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var tok struct {
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil {
		return "", fmt.Errorf("token exchange answered %d: %w", resp.StatusCode, err)
	}
	if tok.RefreshToken == "" {
		return "", fmt.Errorf("token exchange answered %d without a refresh token", resp.StatusCode)
	}
	fmt.Println("    got a refresh token (kept in Secret demo/google-token, never printed)")
	return tok.RefreshToken, nil
}

func (d *Demo) secrets(ctx context.Context, googleRefresh string) error {
	secrets := map[string]map[string]string{
		"notion-client":    {"client_id": "demo-notion-client", "client_secret": "demo-notion-secret"},
		"notion-webhook":   {"token": "demo-webhook-token-0123456789abcdef"},
		"google-client":    {"client_id": "demo-client", "client_secret": "demo-secret"},
		"google-token":     {"refresh_token": googleRefresh},
		"blob-credentials": {blob.KeyAccessKeyID: d.S3.Credentials.AccessKeyID, blob.KeySecretAccessKey: d.S3.Credentials.SecretAccessKey},
		"sheet-ingest":     {"token": "demo-ingest-token-0123456789abcdef"},
	}
	names := make([]string, 0, len(secrets))
	for name := range secrets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace}, StringData: secrets[name]}
		if err := d.C.Create(ctx, s); err != nil {
			return fmt.Errorf("create Secret %s: %w", name, err)
		}
	}
	fmt.Printf("    %s\n", strings.Join(names, ", "))
	return nil
}

func (d *Demo) applySamples(ctx context.Context) error {
	files, err := filepath.Glob(filepath.Join("config", "samples", "switchboard_*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		u.SetNamespace(Namespace)
		if u.GetKind() == "PaperSync" {
			// Its pageID is a placeholder: it is applied once the
			// integration's database holds a page it can name.
			d.paperSample = u
			continue
		}
		if err := d.C.Create(ctx, u); err != nil {
			return fmt.Errorf("apply %s: %w", f, err)
		}
		fmt.Printf("    %s/%s created\n", strings.ToLower(u.GetKind()), u.GetName())
	}
	return nil
}

// DeckURL is a deck the sandbox knows (Docswell's).
const DeckURL = "https://www.docswell.com/s/takai/59VDWM-windows-server-2025"

// demoSlides are stocked beside the sample (SpeakerDeck's "atom"); the
// sandbox knows each of them except the last.
var demoSlides = []struct{ name, url string }{
	{"docswell-deck", DeckURL},
	{"google-deck", "https://docs.google.com/presentation/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit?usp=sharing"},
	{"missing-deck", "https://speakerdeck.com/jnunemaker/no-such-deck"},
}

// slides creates the demo's SlideStocks and waits until every stock in the
// namespace is Ready or Failed, as expected.
func (d *Demo) slides(ctx context.Context) error {
	for _, s := range demoSlides {
		obj := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: Namespace}}
		obj.Spec.URL = s.url
		if err := d.C.Create(ctx, obj); err != nil {
			return fmt.Errorf("create SlideStock %s: %w", s.name, err)
		}
	}
	want := map[string]v1alpha1.SlidePhase{"atom": v1alpha1.SlideReady, "docswell-deck": v1alpha1.SlideReady,
		"google-deck": v1alpha1.SlideReady, "missing-deck": v1alpha1.SlideFailed}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var list v1alpha1.SlideStockList
		if err := d.C.List(ctx, &list, client.InNamespace(Namespace)); err != nil {
			return err
		}
		done := 0
		for _, s := range list.Items {
			if s.Status.Phase == v1alpha1.SlideReady || s.Status.Phase == v1alpha1.SlideFailed {
				done++
			}
		}
		if done == len(want) && len(list.Items) == len(want) {
			for _, s := range list.Items {
				if s.Status.Phase != want[s.Name] {
					return fmt.Errorf("SlideStock %s is %s (%s), want %s", s.Name, s.Status.Phase, s.Status.LastError, want[s.Name])
				}
				fmt.Printf("    %-14s %-7s %-13s %-40q %s\n", s.Name, s.Status.Phase, s.Status.Provider, s.Status.Title, cmp.Or(s.Status.EmbedURL, s.Status.LastError))
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("SlideStocks not settled after 60s (%d of %d)", done, len(want))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// connectNotion reads the integration's one-use connect link from the
// Secret the manager keeps it in (as a person would with kubectl), runs
// connect → consent → callback and waits for the integration to be Ready
// with its database.
func (d *Demo) connectNotion(ctx context.Context, webhookURL string) error {
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	link, err := d.connectLink(ctx, webhookURL, "notion", NotionIntegrationName)
	if err != nil {
		return err
	}
	next := link
	fmt.Printf("    kubectl get secret -n %s research-oauth-connect -o jsonpath='{.data.url}' | base64 -d\n", Namespace)
	for hop := 0; hop < 3; hop++ {
		resp, err := browser.Get(next)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusFound {
			next = resp.Header.Get("Location")
			continue
		}
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("Connected to Demo Lab")) {
			return fmt.Errorf("OAuth callback answered %d", resp.StatusCode)
		}
		fmt.Println("    callback answered 200: \"Connected to Demo Lab\" (the token Secret demo/notion-token now holds the grant)")
		break
	}
	// The link works once: the callback rotated its token.
	resp, err := browser.Get(link)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		return fmt.Errorf("the used connect link answered %d, want 403", resp.StatusCode)
	}
	fmt.Println("    the used link now answers 403 (the manager mints a new one in the Secret)")
	deadline := time.Now().Add(60 * time.Second)
	for {
		ni := &v1alpha1.NotionIntegration{}
		if err := d.C.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: NotionIntegrationName}, ni); err != nil {
			return err
		}
		if ni.Status.ObservedGeneration == ni.Generation && ni.Status.DatabaseID != "" && meta.IsStatusConditionTrue(ni.Status.Conditions, v1alpha1.ReadyCondition) {
			fmt.Printf("    NotionIntegration Ready: workspace %q, database %s\n    webhook URL %s%s\n",
				ni.Status.WorkspaceName, ni.Status.DatabaseURL, webhookURL, ni.Status.WebhookPath)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("NotionIntegration not Ready after 60s: %+v", ni.Status.Conditions)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// notionAutomation adds a page with an arXiv link in the sandbox's Notion,
// posts the Automation's request, and shows the page filled in.
func (d *Demo) notionAutomation(ctx context.Context, sandboxURL, webhookURL string) error {
	ni := &v1alpha1.NotionIntegration{}
	if err := d.C.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: NotionIntegrationName}, ni); err != nil {
		return err
	}
	link := ArxivLink
	page, err := AddPage(sandboxURL, ni.Status.DatabaseID, link)
	if err != nil {
		return err
	}
	// The PaperSync sample, as a person would apply it by hand: its pageID
	// names a page of the integration's database.
	samplePage, err := AddPage(sandboxURL, ni.Status.DatabaseID, link)
	if err != nil {
		return err
	}
	if err := unstructured.SetNestedField(d.paperSample.Object, samplePage, "spec", "pageID"); err != nil {
		return err
	}
	if err := d.C.Create(ctx, d.paperSample); err != nil {
		return fmt.Errorf("apply the PaperSync sample: %w", err)
	}
	fmt.Printf("    papersync/%s created for page %s\n", d.paperSample.GetName(), samplePage)
	var accepted map[string]any
	if err := postJSON(webhookURL+ni.Status.WebhookPath, map[string]string{"workspace_id": ni.Status.WorkspaceID, "page_id": page, "link": link}, &accepted); err != nil {
		return fmt.Errorf("post the Automation's request: %w", err)
	}
	fmt.Printf("    webhook answered 202: PaperSync %v\n", accepted["paper_sync"])
	var row map[string]any
	if err := Poll(ctx, 60*time.Second, func() (bool, error) {
		row = nil
		resp, err := http.Get(sandboxURL + "/_sandbox/notion/pages/" + page)
		if err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&row)
			_ = resp.Body.Close()
		}
		return row["Title"] != nil && row["Title"] != "", nil
	}); err != nil {
		return fmt.Errorf("the page was not filled: %w", err)
	}
	fmt.Printf("    page filled: Title %q, Authors %q, Publication Year %v\n", row["Title"], row["Authors"], row["Publication Year"])
	return nil
}

// AddPage adds a page with link to a database of the sandbox's Notion, as
// a person would, and returns its id.
func AddPage(sandboxURL, databaseID, link string) (string, error) {
	var row struct {
		PageID string `json:"page_id"`
	}
	if err := postJSON(sandboxURL+"/_sandbox/notion/rows", map[string]any{"database_id": databaseID, "values": map[string]any{"Link": link}}, &row); err != nil {
		return "", fmt.Errorf("add a page in the sandbox: %w", err)
	}
	if row.PageID == "" {
		return "", errors.New("add a page in the sandbox: no page_id in the answer")
	}
	return row.PageID, nil
}

func postJSON(u string, in, out any) error {
	b, _ := json.Marshal(in)
	resp, err := http.Post(u, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s answered %d: %s", u, resp.StatusCode, body)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// checkWebhook shows that the webhook server refuses what it must, in the
// common error format.
func checkWebhook(base string) error {
	check := func(what string, resp *http.Response, err error, status int, code string) error {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != status || !bytes.Contains(body, []byte(`"code":"`+code+`"`)) {
			return fmt.Errorf("%s: got %d %s, want %d %s", what, resp.StatusCode, body, status, code)
		}
		fmt.Printf("    %-28s → %d %s\n", what, resp.StatusCode, strings.TrimSpace(string(body)))
		return nil
	}
	big := bytes.Repeat([]byte("x"), 2<<20)
	resp, err := http.Post(base+"/notion/webhook", "application/json", bytes.NewReader(big))
	if err := check("a 2 MiB body", resp, err, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE"); err != nil {
		return err
	}
	resp, err = http.Get(base + "/no/such/route")
	if err := check("an unknown path", resp, err, http.StatusNotFound, "NOT_FOUND"); err != nil {
		return err
	}
	// Metrics and probes have their own listeners, off the public port.
	resp, err = http.Get(base + "/metrics")
	if err := check("/metrics on the public port", resp, err, http.StatusNotFound, "NOT_FOUND"); err != nil {
		return err
	}
	return nil
}

// connectLink waits for the connect Secret the manager mints for the
// resource name (OAuth target target) and returns its link.
func (d *Demo) connectLink(ctx context.Context, webhookURL, target, name string) (string, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		var sec corev1.Secret
		err := d.C.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name + "-oauth-connect"}, &sec)
		if u := string(sec.Data["url"]); err == nil && strings.HasPrefix(u, webhookURL+"/oauth/"+target+"/connect?") {
			return u, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no connect link in Secret %s/%s-oauth-connect after 60s (last read: %w)", Namespace, name, err)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Poll calls f every 100ms until it answers true or fails, or timeout
// passes.
func Poll(ctx context.Context, timeout time.Duration, f func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		done, err := f()
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s", timeout)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// waitObject reads the object at key until ok says yes; an object not
// there yet is waited for. The last object read is returned with an error
// too, for its status.
func waitObject[T any, PT interface {
	*T
	client.Object
}](ctx context.Context, c client.Client, key client.ObjectKey, timeout time.Duration, ok func(PT) bool) (PT, error) {
	obj := PT(new(T))
	err := Poll(ctx, timeout, func() (bool, error) {
		if err := c.Get(ctx, key, obj); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ok(obj), nil
	})
	return obj, err
}
