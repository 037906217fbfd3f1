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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/controller/notionsignup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

const (
	// Namespace holds the samples and everything the walk creates.
	Namespace = "demo"
	// NotionSignupName is the sample sign-up the walk's researcher signs
	// up through; ArxivLink the paper its integration's pages get.
	NotionSignupName = "researchers"
	ArxivLink        = "https://arxiv.org/abs/2301.12345v2"
	// demoWorkspaceID is the sandbox seed's Notion workspace.
	demoWorkspaceID = "5d1f0a52-9a7e-4c1e-9b8e-2f6a1c3d4e5f"
	// pollEvery is how often the walk checks what it waits for, unless a
	// step says otherwise.
	pollEvery = 100 * time.Millisecond
)

// NotionIntegrationName is the integration the researcher's sign-up
// makes for the seed's workspace.
var NotionIntegrationName = notionsignup.IntegrationName(NotionSignupName, demoWorkspaceID)

// Demo is one walk. C is an administrator's client; SandboxURL the
// sandbox the binaries' upstreams point at, started with SandboxSeed and
// SandboxArgs; WebhookURL the webhook's public URL (the binaries'
// --public-url), as a browser or an upstream reaches it; S3 the versitygw
// the binaries' s3 upstream points at.
type Demo struct {
	C                      client.Client
	SandboxURL, WebhookURL string
	S3                     *testenv.S3
	// Previous says the release walked is one from before NotionSignup
	// (make e2e's previous release): the walk applies the
	// NotionIntegration sample and connects it through its connect link,
	// as a platform team did then, leaves out the NotionSignup sample and
	// lists only the kinds the cluster serves.
	Previous bool
	// paperSample is the PaperSync sample, applied by notionAutomation.
	paperSample *unstructured.Unstructured
}

// SampleIntegrationName is the NotionIntegration sample's name: the
// integration a Previous walk connects.
const SampleIntegrationName = "research"

// Integration is the NotionIntegration the walk's Notion steps use: the
// sample a Previous walk connects by its link, else the one the
// researcher's sign-up makes.
func (d *Demo) Integration() string {
	if d.Previous {
		return SampleIntegrationName
	}
	return NotionIntegrationName
}

// Step prints the heading of one step of a walk.
func Step(format string, args ...any) { fmt.Printf("==> "+format+"\n", args...) }

// SandboxSeed is the sandbox's seed file for the walk: the OAuth clients
// the samples' Secrets name, the Notion workspace, and the spreadsheet.
func SandboxSeed() []byte {
	return []byte(`{"googleOAuth":{"clients":{"demo-client":"demo-secret"}},
 "notion":{"clients":{"demo-notion-client":"demo-notion-secret"},
           "workspace":{"ID":"` + demoWorkspaceID + `","Name":"Demo Lab","BotID":"b07b07b0-0000-4000-8000-000000000001"},
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
	web := func(f func(context.Context, string, string) error) func(context.Context) error {
		return func(ctx context.Context) error { return f(ctx, d.SandboxURL, d.WebhookURL) }
	}
	// Each step with its heading; a step with none prints its own.
	steps := []struct {
		heading string
		run     func(context.Context) error
	}{
		{fmt.Sprintf("creating the Secrets the samples refer to, in namespace %q", Namespace),
			func(ctx context.Context) error { return d.secrets(ctx, refreshToken) }},
		{"applying config/samples", d.applySamples},
		{"stocking slides from all three providers, and one that does not exist", d.slides},
		{"", d.connectNotion},
		{"Notion's connection webhook, with no Automation: subscribe, verify, paste a link", web(d.notionEvents)},
		{"a Notion database automation's \"Send webhook\" posts the page with its Link", web(d.notionAutomation)},
		{"checking the webhook server's guards", func(context.Context) error { return checkWebhook(d.WebhookURL) }},
		{"", web(d.calendar)},
		{"", web(d.sheets)},
		{"", d.receive},
	}
	for _, s := range steps {
		if s.heading != "" {
			Step("%s", s.heading)
		}
		if err := s.run(ctx); err != nil {
			return err
		}
	}
	Step("every Switchboard object is Ready but the staged ones")
	return d.CheckTable(ctx, extraStaged)
}

// connectNotion connects the walk's Notion workspace: the researcher
// signs up, or, on a Previous release, the NotionIntegration sample is
// connected through its connect link as platform teams did then.
func (d *Demo) connectNotion(ctx context.Context) error {
	if !d.Previous {
		return d.SignUp(ctx)
	}
	Step("connecting the NotionIntegration sample through its connect link, as before NotionSignup")
	return d.browse(ctx, d.WebhookURL, "notion", SampleIntegrationName, "notion-token")
}

// waitObject reads the object at key until ok says yes; an object not
// there yet is waited for, any other error ends the wait. The last object
// read is returned with an error too, for its status.
func waitObject[T any, PT interface {
	*T
	client.Object
}](ctx context.Context, c client.Client, key client.ObjectKey, timeout time.Duration, ok func(PT) bool) (PT, error) {
	obj := PT(new(T))
	err := poll.Until(ctx, "", pollEvery, timeout, func() (bool, error) {
		if err := c.Get(ctx, key, obj); err != nil {
			return false, poll.Stop(client.IgnoreNotFound(err))
		}
		return ok(obj), nil
	})
	return obj, err
}

// postJSON posts in as JSON to u and decodes a 2xx answer into out (nil:
// an answer without a body, such as 204).
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
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// getJSON decodes a 2xx answer to GET u into out.
func getJSON(u string, out any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
