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

package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
)

// connectNotion reads the integration's one-use connect link from the
// Secret the manager keeps it in (as a person would with kubectl), runs
// connect → consent → callback and waits for the integration to be Ready
// with its database.
func (d *Demo) connectNotion(ctx context.Context, webhookURL string) error {
	link, err := d.readLink(ctx, webhookURL, "notion", NotionIntegrationName)
	if err != nil {
		return err
	}
	code, body, reached, err := follow(link, false)
	switch {
	case err != nil:
		return err
	case !reached:
		return errors.New("the Notion OAuth flow did not reach the callback in 3 hops")
	case code != http.StatusOK || !bytes.Contains(body, []byte("Connected to Demo Lab")):
		return fmt.Errorf("OAuth callback answered %d", code)
	}
	fmt.Println("    callback answered 200: \"Connected to Demo Lab\" (the token Secret demo/notion-token now holds the grant)")
	// The link works once: the callback deleted its token. Until the
	// controller publishes the next token's hash the connect route still
	// knows the old one: it answers 409 (the grant works and is not
	// replaced), or starts a flow that the callback refuses (403); after,
	// the route refuses the link itself (403).
	code, body, reached, err = follow(link, false)
	switch {
	case err != nil:
		return err
	case !reached || code != http.StatusForbidden && code != http.StatusConflict:
		return fmt.Errorf("the used connect link answered %d, want 403 or 409: %s", code, body)
	}
	fmt.Printf("    the used link is refused (%d); the manager mints a new one in the Secret\n", code)
	ni, err := d.waitIntegration(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("    NotionIntegration Ready: workspace %q, database %s\n    webhook URL %s%s\n",
		ni.Status.WorkspaceName, ni.Status.DatabaseURL, webhookURL, ni.Status.WebhookPath)
	return nil
}

// waitIntegration waits for the sample NotionIntegration to be Ready with
// its database, for 60 s.
func (d *Demo) waitIntegration(ctx context.Context) (*v1alpha1.NotionIntegration, error) {
	var ni *v1alpha1.NotionIntegration
	err := poll.Until(ctx, "NotionIntegration "+NotionIntegrationName+" Ready", 200*time.Millisecond, 60*time.Second, func() (bool, error) {
		ni = &v1alpha1.NotionIntegration{}
		if err := d.C.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: NotionIntegrationName}, ni); err != nil {
			return false, poll.Stop(err)
		}
		ready := ni.Status.ObservedGeneration == ni.Generation && ni.Status.DatabaseID != "" && meta.IsStatusConditionTrue(ni.Status.Conditions, v1alpha1.ReadyCondition)
		return ready, fmt.Errorf("conditions %+v", ni.Status.Conditions)
	})
	return ni, err
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
	if err := poll.Until(ctx, "", pollEvery, 60*time.Second, func() (bool, error) {
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
