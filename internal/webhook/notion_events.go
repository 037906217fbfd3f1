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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/upstream/notionid"
)

// The Notion routes, as metrics and logs name them.
const (
	routeAutomation = "automation"
	routeEvents     = "events"
)

// signatureHeader carries an event's signature: "sha256=" and the hex
// HMAC-SHA256 of the raw body, keyed by the subscription's verification
// token (developers.notion.com/reference/webhooks, "Validating event
// payloads").
const signatureHeader = "X-Notion-Signature"

// maxVerificationToken bounds what a verification request may store.
const maxVerificationToken = 512

// pageEventTypes are the events that may change what a page's Link
// holds; the route takes no others (comments, database schema changes,
// content edits, deletions) and answers them 200 "ignored".
var pageEventTypes = map[string]bool{
	"page.created": true, "page.properties_updated": true, "page.undeleted": true, "page.moved": true,
}

// notionEvent is a connection-webhook request: the one-time verification
// request ({"verification_token"}), or an event
// (developers.notion.com/reference/webhooks-events-delivery).
type notionEvent struct {
	VerificationToken string `json:"verification_token"`

	ID          string `json:"id"`
	Type        string `json:"type"`
	WorkspaceID string `json:"workspace_id"`
	Authors     []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	} `json:"authors"`
	Entity struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	} `json:"entity"`
	Data struct {
		Parent struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"parent"`
		UpdatedProperties []string `json:"updated_properties"`
	} `json:"data"`
}

// connectionEvents takes a public integration's connection-webhook
// requests on its secret events path (status.eventsPath, derived from
// the OAuth client's secret): the verification request, whose token it
// keeps in a Secret of its own namespace for the platform team to paste
// into Notion, and then the events, each signed with that token. An
// unsigned or wrongly signed event is refused (401) with nothing created.
// A signed page event becomes, for each integration connected to its
// workspace, a PaperSync that reads the page (events carry no property
// values); a retry of the event is the same object. Every event it
// understood is answered 200 (notionReply says why not 202).
func connectionEvents(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var list v1alpha1.NotionIntegrationList
		if err := d.routed(r.Context(), &list, index.RoutePaths, r.URL.Path); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return Errorf(http.StatusNotFound, "no integration listens on this path")
		}
		raw, e := readBody(r)
		if e != nil {
			return e
		}
		var ev notionEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return Errorf(http.StatusBadRequest, "request body is not a JSON object").WithCause(err)
		}
		if ev.VerificationToken != "" && ev.Type == "" {
			return d.keepVerificationToken(w, r, ev.VerificationToken)
		}
		if e := d.checkSignature(r, raw); e != nil {
			return e
		}
		return d.routeEvent(w, r, list.Items, ev)
	}
}

// readBody reads the raw body, which the signature covers byte for byte.
func readBody(r *http.Request) ([]byte, *Error) {
	if e := requireJSON(r); e != nil {
		return nil, e
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, bodyError(err, "could not read the request body")
	}
	return raw, nil
}

// verificationKey is the Secret that keeps the token of the events path
// the request came in on.
func (d Deps) verificationKey(r *http.Request) types.NamespacedName {
	return types.NamespacedName{Namespace: d.StateNamespace, Name: papers.VerificationSecretName(r.URL.Path)}
}

// keepVerificationToken stores the token of Notion's verification
// request, replacing an earlier one (a subscription created again sends a
// new one), and answers 200. The token is never logged or answered: the
// log line names the Secret a platform engineer reads it from.
func (d Deps) keepVerificationToken(w http.ResponseWriter, r *http.Request, token string) error {
	if len(token) > maxVerificationToken {
		return Errorf(http.StatusBadRequest, "verification_token is longer than %d characters", maxVerificationToken)
	}
	key := d.verificationKey(r)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
		Labels:      map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue},
		Annotations: map[string]string{papers.EventsPathAnnotation: r.URL.Path}},
		Data: map[string][]byte{papers.VerificationTokenKey: []byte(token)}}
	err := d.Client.Create(r.Context(), sec)
	if apierrors.IsAlreadyExists(err) {
		var old corev1.Secret
		if err = d.APIReader.Get(r.Context(), key, &old); err == nil {
			old.Data = sec.Data
			err = d.Client.Update(r.Context(), &old)
		}
	}
	if err != nil {
		return Unavailable(DefaultRetryAfter, "could not keep the verification token; retry").WithCause(err)
	}
	logr.FromContextOrDiscard(r.Context()).Info("Notion sent a webhook verification token; paste it into the subscription's Verify dialog",
		"secret", key.String(), "key", papers.VerificationTokenKey)
	WriteJSON(w, http.StatusOK, map[string]any{"success": true, "status": "verification_token_stored"})
	return nil
}

// checkSignature compares the event's signature with the HMAC of its raw
// body under the stored verification token, in constant time. Without a
// stored token every event is refused: nothing can have signed it.
func (d Deps) checkSignature(r *http.Request, raw []byte) *Error {
	// The cache's own copy, read and never changed: no deep copy of the
	// Secret on every event.
	var sec corev1.Secret
	if err := d.Client.Get(r.Context(), d.verificationKey(r), &sec, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			return Errorf(http.StatusUnauthorized, "no verification token is stored for this path yet: create the subscription in Notion first")
		}
		return Unavailable(DefaultRetryAfter, "could not read the verification token; retry").WithCause(err)
	}
	token := sec.Data[papers.VerificationTokenKey]
	got, ok := strings.CutPrefix(r.Header.Get(signatureHeader), "sha256=")
	sig, err := hex.DecodeString(got)
	if len(token) == 0 || !ok || err != nil {
		return Errorf(http.StatusUnauthorized, "the event is not signed")
	}
	mac := hmac.New(sha256.New, token)
	mac.Write(raw)
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return Errorf(http.StatusUnauthorized, "the event's signature does not match")
	}
	return nil
}

// routeEvent records a signed event for each integration connected to its
// workspace, unless it cannot change a Link or is the integration's own
// write (the page update that filled it).
func (d Deps) routeEvent(w http.ResponseWriter, r *http.Request, items []v1alpha1.NotionIntegration, ev notionEvent) error {
	pageID := notionid.Normalize(ev.Entity.ID)
	if !pageEventTypes[ev.Type] || ev.Entity.Type != "page" || pageID == "" || ev.ID == "" || len(ev.ID) > 128 {
		return d.eventIgnored(w, r, pageID, reasonEventType, "the route acts on page events only, not "+ev.Type)
	}
	reason, queued := reasonNoIntegration, []string{}
	for i := range items {
		ni := &items[i]
		if ni.Status.WorkspaceID == "" || ni.Status.WorkspaceID != ev.WorkspaceID {
			continue
		}
		if why := eventSkip(ni, ev); why != "" {
			reason = why
			continue
		}
		ps := papers.NewEventSync(ni, pageID, v1alpha1.NotionPageEvent{ID: ev.ID, Type: ev.Type, UpdatedProperties: capped(ev.Data.UpdatedProperties)})
		err := d.Client.Create(r.Context(), ps)
		switch {
		case err == nil, apierrors.IsAlreadyExists(err):
			queued = append(queued, ps.Namespace+"/"+ps.Name)
		case apierrors.IsInvalid(err):
			reason = reasonInvalid
		default:
			return Unavailable(DefaultRetryAfter, "could not record the event; retry").WithCause(err)
		}
	}
	if len(queued) == 0 {
		return d.eventIgnored(w, r, pageID, reason, "no integration of this workspace acts on the event")
	}
	d.countNotion(routeEvents, "queued", "")
	WriteJSON(w, http.StatusOK, notionAnswer{Success: true, Status: "queued", PageID: pageID, PaperSyncs: queued})
	return nil
}

// eventSkip says why an integration has nothing to do with an event: its
// own bot wrote the change, or the page is in another database. A parent
// of type data_source (API version 2025-09-03) names a data source, not
// the database: the PaperSync reads the page, which says.
func eventSkip(ni *v1alpha1.NotionIntegration, ev notionEvent) string {
	if bot := ni.Status.BotID; bot != "" && len(ev.Authors) > 0 {
		own := true
		for _, a := range ev.Authors {
			own = own && a.Type == "bot" && notionid.Normalize(a.ID) == notionid.Normalize(bot)
		}
		if own {
			return reasonOwnWrite
		}
	}
	if p := ev.Data.Parent; p.Type == "database" && otherDatabase(ni, p.ID) {
		return reasonOtherDatabase
	}
	return ""
}

// capped keeps the updated property ids a PaperSync may hold.
func capped(ids []string) []string {
	var out []string
	for _, id := range ids {
		if len(out) == 100 {
			break
		}
		if id != "" && len(id) <= 256 {
			out = append(out, id)
		}
	}
	return out
}

// eventIgnored answers a signed event the route acts on with nothing,
// logged at V(1) as the Automation route's are.
func (d Deps) eventIgnored(w http.ResponseWriter, r *http.Request, pageID, reason, message string) error {
	logr.FromContextOrDiscard(r.Context()).V(1).Info("Notion event ignored", "route", routeEvents, "reason", reason, "page", pageID)
	return d.answerIgnored(w, routeEvents, pageID, reason, message)
}
