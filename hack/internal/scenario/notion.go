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
	"html"
	"net/http"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
)

// SignUp signs a researcher up as seed 000 has it, with no kubectl
// and no connect link: the NotionSignup sample publishes its public URL,
// the researcher opens it, allows access on the sandbox's consent page,
// and reads the page (shown here, in Japanese, as the seed's researcher
// asks for it). Signing up again, in English, finds the same integration.
func (d *Demo) SignUp(ctx context.Context) error {
	Step("a researcher signs up through the NotionSignup's public URL: no kubectl, no connect link")
	su, err := waitObject(ctx, d.C, client.ObjectKey{Namespace: Namespace, Name: NotionSignupName}, 60*time.Second,
		func(su *v1alpha1.NotionSignup) bool {
			return su.Status.URL != "" && meta.IsStatusConditionTrue(su.Status.Conditions, v1alpha1.ReadyCondition)
		})
	if err != nil {
		return fmt.Errorf("the NotionSignup sample's start URL: %w (status %+v)", err, su.Status)
	}
	fmt.Printf("    the platform team hands out %s (status.url of notionsignup/%s)\n", su.Status.URL, NotionSignupName)
	for i, lang := range []string{"ja", "en"} {
		code, body, reached, err := follow(su.Status.URL, false, lang)
		switch {
		case err != nil:
			return err
		case !reached:
			return errors.New("the sign-up did not reach the callback in 3 hops")
		case code != http.StatusOK || !bytes.Contains(body, []byte("Demo Lab")):
			return fmt.Errorf("the sign-up's callback answered %d: %s", code, pageText(body))
		}
		if i == 0 {
			fmt.Printf("    the researcher allowed access on Notion's consent page; the page reads (Accept-Language: %s):\n", lang)
			for _, line := range strings.Split(pageText(body), "\n") {
				fmt.Printf("      | %s\n", line)
			}
			continue
		}
		fmt.Printf("    signing up again (Accept-Language: %s): %d, %q\n", lang, code, firstLine(pageText(body)))
	}
	var list v1alpha1.NotionIntegrationList
	if err := d.C.List(ctx, &list, client.InNamespace(Namespace), client.MatchingLabels{v1alpha1.SignUpLabel: NotionSignupName}); err != nil {
		return err
	}
	if len(list.Items) != 1 || list.Items[0].Name != NotionIntegrationName {
		return fmt.Errorf("the sign-up made %d integrations, want one named %s", len(list.Items), NotionIntegrationName)
	}
	ni, err := d.waitIntegration(ctx, NotionIntegrationName)
	if err != nil {
		return err
	}
	fmt.Printf("    one NotionIntegration for the workspace, made by the manager: %s, Ready, database %s\n    Automation URL %s%s\n    connection webhook URL %s%s\n",
		ni.Name, ni.Status.DatabaseURL, d.WebhookURL, ni.Status.WebhookPath, d.WebhookURL, ni.Status.EventsPath)
	return nil
}

var (
	pageHidden = regexp.MustCompile(`(?s)<(head|style|script|details)[^>]*>.*?</(head|style|script|details)>`)
	pageBlocks = regexp.MustCompile(`</?(h1|h2|h3|p|li|ol|ul|div|section|main|header|footer|pre|nav)\b[^>]*>`)
	pageTags   = regexp.MustCompile(`<[^>]+>`)
	pageBlanks = regexp.MustCompile(`[ \t]*\n\s*`)
)

// pageText is the text a person reads on a page, one line a block: its
// head, styles, scripts and the platform team's folded details removed.
func pageText(body []byte) string {
	text := pageHidden.ReplaceAllString(string(body), "")
	text = pageTags.ReplaceAllString(pageBlocks.ReplaceAllString(text, "\n"), "")
	return strings.TrimSpace(pageBlanks.ReplaceAllString(html.UnescapeString(text), "\n"))
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// waitIntegration waits for the NotionIntegration name to be Ready with its database, for 60 s.
func (d *Demo) waitIntegration(ctx context.Context, name string) (*v1alpha1.NotionIntegration, error) {
	var ni *v1alpha1.NotionIntegration
	err := poll.Until(ctx, "NotionIntegration "+name+" Ready", 200*time.Millisecond, 60*time.Second, func() (bool, error) {
		ni = &v1alpha1.NotionIntegration{}
		if err := d.C.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, ni); err != nil {
			return false, poll.Stop(err)
		}
		ready := ni.Status.ObservedGeneration == ni.Generation && ni.Status.DatabaseID != "" && meta.IsStatusConditionTrue(ni.Status.Conditions, v1alpha1.ReadyCondition)
		return ready, fmt.Errorf("conditions %+v", ni.Status.Conditions)
	})
	return ni, err
}

// notionEvents sets Notion up as a person now would, with no Automation:
// a webhook subscription of the public integration on its events URL,
// verified with the token the webhook kept (read as a platform engineer
// reads a Secret), then a page whose Link a person pastes, filled.
func (d *Demo) notionEvents(ctx context.Context, sandboxURL, webhookURL string) error {
	ni, err := d.waitIntegration(ctx, d.Integration())
	if err != nil {
		return err
	}
	var sub struct {
		ID string `json:"id"`
	}
	if err := postJSON(sandboxURL+"/_sandbox/notion/subscriptions", map[string]string{"client_id": "demo-notion-client", "url": webhookURL + ni.Status.EventsPath}, &sub); err != nil {
		return fmt.Errorf("create the webhook subscription: %w", err)
	}
	token, where, err := d.verificationToken(ctx, ni.Status.EventsPath)
	if err != nil {
		return err
	}
	// Notion's Verify dialog takes the token once its request was answered.
	if err := poll.Until(ctx, "Notion to see its verification request answered", pollEvery, 30*time.Second, func() (bool, error) {
		var st struct {
			Sent bool `json:"verification_token_sent"`
		}
		return getJSON(sandboxURL+"/_sandbox/notion/subscriptions/"+sub.ID, &st) == nil && st.Sent, nil
	}); err != nil {
		return err
	}
	if err := postJSON(sandboxURL+"/_sandbox/notion/subscriptions/"+sub.ID+"/verify", map[string]string{"verification_token": token}, nil); err != nil {
		return fmt.Errorf("verify the subscription: %w", err)
	}
	fmt.Printf("    subscription verified with the token the webhook kept in Secret %s\n", where)
	page, err := AddPage(sandboxURL, ni.Status.DatabaseID, "")
	if err != nil {
		return err
	}
	if err := editPage(sandboxURL, page, ArxivLink); err != nil {
		return err
	}
	fmt.Printf("    a person pasted %s into page %s's Link\n", ArxivLink, page)
	return waitFilled(ctx, sandboxURL, page)
}

// verificationToken waits for the Secret in which the webhook keeps the
// token of Notion's verification request, wherever its namespace is.
func (d *Demo) verificationToken(ctx context.Context, eventsPath string) (token, where string, err error) {
	name := papers.VerificationSecretName(eventsPath)
	err = poll.Until(ctx, "the verification token kept by the webhook", pollEvery, 30*time.Second, func() (bool, error) {
		var list corev1.SecretList
		if err := d.C.List(ctx, &list, client.MatchingFields{"metadata.name": name}); err != nil {
			return false, poll.Stop(err)
		}
		for _, s := range list.Items {
			token, where = string(s.Data[papers.VerificationTokenKey]), s.Namespace+"/"+s.Name
		}
		return token != "", nil
	})
	return token, where, err
}

// notionAutomation adds a database automation whose action is "Send
// webhook" with the Link ticked, as a person on a paid plan may instead;
// a page whose Link a person pastes is filled, and the automation is
// still active after every answer.
func (d *Demo) notionAutomation(ctx context.Context, sandboxURL, webhookURL string) error {
	ni := &v1alpha1.NotionIntegration{}
	if err := d.C.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: d.Integration()}, ni); err != nil {
		return err
	}
	var auto struct {
		ID string `json:"id"`
	}
	if err := postJSON(sandboxURL+"/_sandbox/notion/automations", map[string]any{"database_id": ni.Status.DatabaseID,
		"url": webhookURL + ni.Status.WebhookPath, "trigger": "property_edited", "properties": []string{"Link"}}, &auto); err != nil {
		return fmt.Errorf("add the automation: %w", err)
	}
	if err := d.applyPaperSample(ctx, sandboxURL, ni.Status.DatabaseID); err != nil {
		return err
	}
	empty, err := AddPage(sandboxURL, ni.Status.DatabaseID, "")
	if err != nil {
		return err
	}
	page, err := AddPage(sandboxURL, ni.Status.DatabaseID, "")
	if err != nil {
		return err
	}
	if err := editPage(sandboxURL, empty, ""); err != nil { // a fresh page's Link, still empty
		return err
	}
	if err := editPage(sandboxURL, page, ArxivLink); err != nil {
		return err
	}
	if err := waitFilled(ctx, sandboxURL, page); err != nil {
		return err
	}
	var state struct {
		Paused     bool `json:"paused"`
		Deliveries []struct {
			Status int    `json:"status"`
			Body   string `json:"body"`
		} `json:"deliveries"`
	}
	if err := getJSON(sandboxURL+"/_sandbox/notion/automations/"+auto.ID, &state); err != nil {
		return err
	}
	if state.Paused {
		return errors.New("the Notion automation was paused by an answer of the webhook")
	}
	for _, del := range state.Deliveries {
		fmt.Printf("    automation delivery answered %d: %s\n", del.Status, strings.TrimSpace(del.Body))
	}
	fmt.Println("    the automation is still active")
	return nil
}

// applyPaperSample applies the PaperSync sample as a person would by
// hand: its pageID names a new page of the integration's database
// (databaseID), its integrationRef the integration.
func (d *Demo) applyPaperSample(ctx context.Context, sandboxURL, databaseID string) error {
	samplePage, err := AddPage(sandboxURL, databaseID, ArxivLink)
	if err != nil {
		return err
	}
	if err := unstructured.SetNestedField(d.paperSample.Object, samplePage, "spec", "pageID"); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(d.paperSample.Object, d.Integration(), "spec", "integrationRef", "name"); err != nil {
		return err
	}
	if err := d.C.Create(ctx, d.paperSample); err != nil {
		return fmt.Errorf("apply the PaperSync sample: %w", err)
	}
	fmt.Printf("    papersync/%s created for page %s\n", d.paperSample.GetName(), samplePage)
	return nil
}

// editPage is a person typing link into a page's Link in Notion.
func editPage(sandboxURL, page, link string) error {
	b, _ := json.Marshal(map[string]any{"values": map[string]any{"Link": link}})
	req, _ := http.NewRequest(http.MethodPatch, sandboxURL+"/_sandbox/notion/pages/"+page, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("edit page %s in the sandbox: %w", page, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("edit page %s in the sandbox: %s", page, resp.Status)
	}
	return nil
}

// waitFilled waits for a page's metadata and shows it.
func waitFilled(ctx context.Context, sandboxURL, page string) error {
	var row map[string]any
	if err := poll.Until(ctx, "", pollEvery, 60*time.Second, func() (bool, error) {
		row = nil
		_ = getJSON(sandboxURL+"/_sandbox/notion/pages/"+page, &row)
		return row["Title"] != nil && row["Title"] != "", nil
	}); err != nil {
		return fmt.Errorf("the page was not filled: %w", err)
	}
	fmt.Printf("    page filled: Title %q, Authors %q, Publication Year %v\n", row["Title"], row["Authors"], row["Publication Year"])
	return nil
}

// AddPage adds a page with link (none when "") to a database of the
// sandbox's Notion, as a person would, and returns its id.
func AddPage(sandboxURL, databaseID, link string) (string, error) {
	var row struct {
		PageID string `json:"page_id"`
	}
	values := map[string]any{}
	if link != "" {
		values["Link"] = link
	}
	if err := postJSON(sandboxURL+"/_sandbox/notion/rows", map[string]any{"database_id": databaseID, "values": values}, &row); err != nil {
		return "", fmt.Errorf("add a page in the sandbox: %w", err)
	}
	if row.PageID == "" {
		return "", errors.New("add a page in the sandbox: no page_id in the answer")
	}
	return row.PageID, nil
}
