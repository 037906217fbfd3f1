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

package webhook

import (
	"errors"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/go-logr/logr"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/upstream/notionid"
)

// Why a Notion route did nothing with an event it understood: the
// "reason" of its 200 answer, of its log line and of
// switchboard_webhook_notion_events_total.
const (
	reasonOtherWorkspace = "OtherWorkspace"
	reasonOtherDatabase  = "OtherDatabase"
	reasonLinkEmpty      = "LinkEmpty"
	reasonNotArxiv       = "NotArxiv"
	reasonInvalid        = "Invalid"
	reasonOwnWrite       = "OwnWrite"
	reasonEventType      = "EventType"
	reasonNoIntegration  = "NoIntegration"
	reasonNotStored      = "NotStored"
)

// notionReply answers one request of a Notion route: queued (a PaperSync
// stored), or ignored with a reason (200). Notion's own senders get 200
// for both: its webhook references ask for "an HTTP 200 status code to
// indicate that the data was received successfully"
// (developers.notion.com/reference/webhooks/page-properties-updated) and
// say nothing of other 2xx; the seed's body keeps its 202 for other
// senders.
type notionReply struct {
	d Deps
	// native: Notion's own sender, answered 200 when queued too.
	native bool
	w      http.ResponseWriter
	r      *http.Request
	route  string
	ni     *v1alpha1.NotionIntegration
	pageID string
}

// ignored answers 200 with the reason, counts it and logs it (at V(1):
// a fresh page with an empty Link is ordinary).
func (p notionReply) ignored(reason, message string) error {
	logr.FromContextOrDiscard(p.r.Context()).V(1).Info("Notion event ignored", "route", p.route,
		"reason", reason, "message", message, "integration", client.ObjectKeyFromObject(p.ni), "page", p.pageID)
	return p.d.answerIgnored(p.w, p.route, p.pageID, reason, message)
}

// answerIgnored counts an event a Notion route understood and did nothing
// with, and answers it 200 with the reason: the one shape of both routes'
// "ignored" answers.
func (d Deps) answerIgnored(w http.ResponseWriter, route, pageID, reason, message string) error {
	d.countNotion(route, "ignored", reason)
	WriteJSON(w, http.StatusOK, notionAnswer{Success: true, Status: "ignored", Reason: reason, Message: message, PageID: pageID})
	return nil
}

// notionAnswer is the body of a Notion route's 2xx answer: queued, with
// what was stored, or ignored, with the reason. A struct, not a map: the
// answer is written for every event, and a map's encoding sorts its keys
// and reflects on each value.
type notionAnswer struct {
	Success bool   `json:"success"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	PageID  string `json:"page_id"`
	ArxivID string `json:"arxiv_id,omitempty"`
	// PaperSync is the Automation route's record; PaperSyncs the
	// connection webhook's, one per integration of the workspace.
	PaperSync  string   `json:"paper_sync,omitempty"`
	PaperSyncs []string `json:"paper_syncs,omitempty"`
	AcceptedAt string   `json:"accepted_at,omitempty"`
}

// otherDatabase reports that id names a database other than the
// integration's (false while the integration has found none).
func otherDatabase(ni *v1alpha1.NotionIntegration, id string) bool {
	return id != "" && ni.Status.DatabaseID != "" && notionid.Normalize(id) != notionid.Normalize(ni.Status.DatabaseID)
}

// warn records a Warning Event on the integration, for a person: what the
// route ignored because of something they can fix in Notion.
func (p notionReply) warn(reason, format string, args ...any) {
	if p.d.Recorder != nil {
		p.d.Recorder.Eventf(p.ni, nil, corev1.EventTypeWarning, reason, "Webhook", format, args...)
	}
}

// queue stores ps (an existing one is the same event again) and answers
// 202 with its name. A PaperSync the API server refuses as invalid is an
// event the route cannot act on: ignored. When the API server cannot
// store it, the answer is the route's own choice (storeFailed).
func (p notionReply) queue(ps *v1alpha1.PaperSync) error {
	err := p.d.Client.Create(p.r.Context(), ps)
	var st apierrors.APIStatus
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
	case errors.As(err, &st) && apierrors.IsInvalid(err):
		return p.ignored(reasonInvalid, "the event was refused: "+st.Status().Message)
	default:
		return p.storeFailed(err)
	}
	p.d.countNotion(p.route, "queued", "")
	code := http.StatusAccepted
	if p.native {
		code = http.StatusOK
	}
	WriteJSON(p.w, code, notionAnswer{Success: true, Status: "queued", PageID: p.pageID, ArxivID: ps.Spec.ArxivID, PaperSync: ps.Name,
		AcceptedAt: p.d.now().UTC().Format(time.RFC3339Nano)})
	return nil
}

// storeFailed answers an event the API server could not store. The
// connection webhook answers 503: Notion retries an event up to eight
// times, with backoff, and a subscription is not paused for it. An
// Automation's delivery that fails pauses the automation for good, so
// that route answers 200 "not stored", logged as an error and counted:
// the hourly backfill fills the page when its metadata is missing.
func (p notionReply) storeFailed(err error) error {
	if p.route == routeEvents {
		return Unavailable(DefaultRetryAfter, "could not record the event; retry").WithCause(err)
	}
	logr.FromContextOrDiscard(p.r.Context()).Error(err, "Notion Automation event not stored; the backfill will fill the page",
		"integration", client.ObjectKeyFromObject(p.ni), "page", p.pageID)
	return p.d.answerIgnored(p.w, p.route, p.pageID, reasonNotStored,
		"the event could not be stored now; the integration's backfill fills the page within its backfillInterval")
}
