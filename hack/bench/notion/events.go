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

package notion

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/upstream/notion"
)

// The connection-webhook side of the Notion bench: the signed events the
// routes table sends, the real subscription handshake, and the time from
// a person's edit to the page filled (eventFill).

// eventsHook is the connection-webhook route of the bench's OAuth client
// and the verification token that signs its events.
type eventsHook struct {
	url, token, workspace, database string
	httpc                           *http.Client
	// sub is the sandbox's subscription posting to url.
	sub string
}

// idType is an {"id", "type"} pair of an event.
type idType struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// event is a connection event of type typ for page, by a person.
func (h eventsHook) event(typ, eventID, page string) []byte {
	type data struct {
		Parent            idType   `json:"parent"`
		UpdatedProperties []string `json:"updated_properties"`
	}
	body, _ := json.Marshal(struct {
		ID             string   `json:"id"`
		Timestamp      string   `json:"timestamp"`
		WorkspaceID    string   `json:"workspace_id"`
		WorkspaceName  string   `json:"workspace_name"`
		SubscriptionID string   `json:"subscription_id"`
		IntegrationID  string   `json:"integration_id"`
		Type           string   `json:"type"`
		Authors        []idType `json:"authors"`
		AttemptNumber  int      `json:"attempt_number"`
		APIVersion     string   `json:"api_version"`
		Entity         idType   `json:"entity"`
		Data           data     `json:"data"`
	}{ID: eventID, Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), WorkspaceID: h.workspace, WorkspaceName: "Bench",
		SubscriptionID: "s", IntegrationID: "i", Type: typ, Authors: []idType{{ID: "00000000-0000-4000-8000-000000000001", Type: "person"}},
		AttemptNumber: 1, APIVersion: "2022-06-28", Entity: idType{ID: page, Type: "page"},
		Data: data{Parent: idType{ID: h.database, Type: "database"}, UpdatedProperties: []string{"%3AUPp"}}})
	return body
}

// request is a POST of body signed with the verification token.
func (h eventsHook) request(body []byte) *http.Request {
	req := jsonRequest(h.url, body)
	mac := hmac.New(sha256.New, []byte(h.token))
	mac.Write(body)
	req.Header.Set("X-Notion-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	return req
}

// subscribe subscribes the bench's OAuth client to the integration's
// events path in the sandbox's Notion, as a platform engineer would:
// Notion posts a verification token, the webhook keeps it in a Secret,
// the engineer reads it there and pastes it into Notion. It answers the
// route, signing with the stored token, once the route takes signed events.
func subscribe(ctx context.Context, c client.Client, rig *notionRig, ni *v1alpha1.NotionIntegration, httpc *http.Client) (eventsHook, error) {
	h := eventsHook{url: rig.HookURL + ni.Status.EventsPath, workspace: rig.ws.ID, database: ni.Status.DatabaseID, httpc: httpc}
	if ni.Status.EventsPath == "" {
		return h, fmt.Errorf("integration %s/%s is Ready without status.eventsPath", ni.Namespace, ni.Name)
	}
	id := rig.notion.Subscribe(sandbox.NotionSubscription{ClientID: "bench-client", URL: h.url})
	h.sub = id
	var sec corev1.Secret
	err := poll.Until(ctx, "verification token stored", 200*time.Millisecond, 30*time.Second, func() (bool, error) {
		if rig.notion.SentVerificationToken(id) == "" {
			return false, nil
		}
		err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: papers.VerificationSecretName(ni.Status.EventsPath)}, &sec)
		if apierrors.IsNotFound(err) {
			// Answered before the webhook's cache knew the path: again.
			rig.notion.ResendVerificationToken(id)
			return false, err
		}
		return err == nil, poll.Stop(err)
	})
	if err != nil {
		return h, err
	}
	h.token = string(sec.Data[papers.VerificationTokenKey])
	if err := rig.notion.VerifySubscription(id, h.token); err != nil {
		return h, err
	}
	// The route's cache holds the Secret once a signed event is answered
	// 2xx (a comment event: ignored, nothing created), not 401.
	return h, poll.Until(ctx, "events route taking signed events", 20*time.Millisecond, 30*time.Second, func() (bool, error) {
		resp, err := h.httpc.Do(h.request(h.event("comment.created", "c0000000-0000-4000-8000-000000000000", "c0000000-0000-4000-8000-000000000001")))
		if err != nil {
			return false, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode/100 == 2, fmt.Errorf("answered %d", resp.StatusCode)
	})
}

// emptyRows adds count rows with nothing in them to database db, before
// the subscription: their page.created events go nowhere.
func emptyRows(notionEmu *sandbox.Notion, db string, count int) []string {
	rows := make([]string, count)
	for i := range rows {
		rows[i] = notionEmu.AddRow(db, map[string]any{})
	}
	return rows
}

// eventFill times a person's edit of a row's Link to the page filled, by
// way of the connection event and the PaperSync that reads the page: one
// edit at a time (each a pacer interval after the last began), then
// len(rows)-pages rows edited at once.
func eventFill(ctx context.Context, notionEmu *sandbox.Notion, sub string, rows []string, pages int) error {
	notionEmu.SetEventAggregation(10 * time.Millisecond)
	notionEmu.SetEventRetrySchedule(200 * time.Millisecond)
	defer printRedelivered(notionEmu, sub)
	gap := (time.Second/notion.RequestsPerSecond + time.Millisecond).Round(time.Millisecond)
	var one []time.Duration
	for _, page := range rows[:pages] {
		t0 := time.Now()
		took, err := editAndWait(ctx, notionEmu, []string{page})
		if err != nil {
			return err
		}
		one = append(one, took...)
		time.Sleep(time.Until(t0.Add(gap)))
	}
	bench.SortDurations(one)
	fmt.Printf("\nconnection event → page filled (sandbox subscription, verified by the stored token; a person's edit of Link; aggregation window 10ms; page reads paced at %d/s):\n", notion.RequestsPerSecond)
	fmt.Printf("  one at a time (%d edits, %s apart): mean %s, p50 %s, p95 %s\n", pages, gap, bench.MeanD(one).Round(100*time.Microsecond), bench.PctMs(one, 50), bench.PctMs(one, 95))
	burst := rows[pages:]
	if len(burst) == 0 {
		return nil
	}
	time.Sleep(time.Second) // the pacer's bucket full again, as after any idle second
	each, err := editAndWait(ctx, notionEmu, burst)
	if err != nil {
		return err
	}
	bench.SortDurations(each)
	// The pacer's bucket holds a second's reads: the first go at once,
	// the rest at the rate.
	paced := max(len(burst)-notion.RequestsPerSecond, 0)
	floor := time.Duration(paced) * time.Second / notion.RequestsPerSecond
	fmt.Printf("  burst of %d edits at once: all filled in %s (floor %s: page reads at Notion's rate limit of %d/s, the first %d at once from a full bucket, the other %d paced); per page p50 %s, p95 %s\n",
		len(burst), each[len(each)-1].Round(time.Millisecond), floor, notion.RequestsPerSecond, len(burst)-paced, paced, bench.PctMs(each, 50), bench.PctMs(each, 95))
	return nil
}

// printRedelivered says how many of the subscription's deliveries were
// not answered 200 (Notion sends those again), if any.
func printRedelivered(notionEmu *sandbox.Notion, sub string) {
	all := notionEmu.SubscriptionDeliveries(sub)
	not200 := 0
	for _, d := range all {
		if d.Status != http.StatusOK {
			not200++
		}
	}
	if not200 > 0 {
		fmt.Printf("  %d of the subscription's %d deliveries were not answered 200 (sent again)\n", not200, len(all))
	}
}

// editAndWait sets the Link of each page, as a person would, and answers
// the time from the first edit to each page filled (its Title set).
func editAndWait(ctx context.Context, notionEmu *sandbox.Notion, pages []string) ([]time.Duration, error) {
	t0 := time.Now()
	for _, page := range pages {
		if err := notionEmu.EditRow(page, map[string]any{"Link": benchLink}); err != nil {
			return nil, err
		}
	}
	took := make([]time.Duration, 0, len(pages))
	left := map[string]bool{}
	for _, p := range pages {
		left[p] = true
	}
	timeout := 30*time.Second + time.Duration(len(pages))*time.Second/notion.RequestsPerSecond
	err := poll.Until(ctx, "pages filled", 2*time.Millisecond, timeout, func() (bool, error) {
		for p := range left {
			if t, _ := notionEmu.Row(p)["Title"].(string); t != "" {
				took = append(took, time.Since(t0))
				delete(left, p)
			}
		}
		return len(left) == 0, fmt.Errorf("%d of %d pages not filled", len(left), len(pages))
	})
	return took, err
}
