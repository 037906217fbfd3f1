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

package sandbox

import (
	"errors"
	"fmt"
	"net/http"
)

// The admin endpoints of the Notion senders: automations, a person's
// edits and subscriptions, for the demo and a person exploring.

// registerHookAdmin adds the admin endpoints of the automations, the
// person's edits and the subscriptions.
func (n *Notion) registerHookAdmin(s *Server) {
	s.HandleAdmin("POST /_sandbox/notion/automations", n.adminAddAutomation)
	s.HandleAdmin("GET /_sandbox/notion/automations/{id}", n.adminAutomation)
	s.HandleAdmin("POST /_sandbox/notion/automations/{id}/resume", func(w http.ResponseWriter, r *http.Request) {
		adminDone(w, n.resumeAutomation(r.PathValue("id")))
	})
	s.HandleAdmin("PATCH /_sandbox/notion/pages/{id}", adminBody(func(r *http.Request, body struct {
		Values map[string]any `json:"values"`
	}) error {
		return n.EditRow(r.PathValue("id"), body.Values)
	}))
	n.registerSubscriptionAdmin(s)
}

// adminAddAutomation takes a NotionAutomation and answers {"id"}.
func (n *Notion) adminAddAutomation(w http.ResponseWriter, r *http.Request) {
	var a NotionAutomation
	if !adminDecode(w, r, &a) {
		return
	}
	switch {
	case a.URL == "":
		adminError(w, http.StatusBadRequest, errors.New("url is required"))
	case a.Trigger != "page_added" && a.Trigger != "property_edited":
		adminError(w, http.StatusBadRequest, errors.New("trigger must be page_added or property_edited"))
	case n.DatabaseProperties(a.DatabaseID) == nil:
		adminError(w, http.StatusNotFound, fmt.Errorf("no database %q", a.DatabaseID))
	default:
		writeJSON(w, http.StatusOK, map[string]string{"id": n.AddAutomation(a)})
	}
}

// adminAutomation answers {"paused", "deliveries"}.
func (n *Notion) adminAutomation(w http.ResponseWriter, r *http.Request) {
	var out map[string]any
	n.mu.Lock()
	if a := n.hooks.automations[r.PathValue("id")]; a != nil {
		out = map[string]any{"paused": a.paused, "deliveries": append([]NotionDelivery{}, a.deliveries...)}
	}
	n.mu.Unlock()
	if out == nil {
		adminError(w, http.StatusNotFound, fmt.Errorf("no automation %q", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// registerSubscriptionAdmin adds the subscriptions' admin endpoints.
func (n *Notion) registerSubscriptionAdmin(s *Server) {
	s.HandleAdmin("POST /_sandbox/notion/subscriptions", n.adminSubscribe)
	s.HandleAdmin("GET /_sandbox/notion/subscriptions/{id}", n.adminSubscription)
	s.HandleAdmin("POST /_sandbox/notion/subscriptions/{id}/verify", adminBody(func(r *http.Request, body struct {
		Token string `json:"verification_token"`
	}) error {
		return n.VerifySubscription(r.PathValue("id"), body.Token)
	}))
}

// adminSubscribe takes {"client_id", "url", "event_types"} and answers
// {"id"}.
func (n *Notion) adminSubscribe(w http.ResponseWriter, r *http.Request) {
	var s NotionSubscription
	if !adminDecode(w, r, &s) {
		return
	}
	if s.ClientID == "" || s.URL == "" {
		adminError(w, http.StatusBadRequest, errors.New("client_id and url are required"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": n.Subscribe(s)})
}

// adminSubscription answers {"verification_token_sent", "verified",
// "deliveries"}; never the token, which only the webhook URL receives.
func (n *Notion) adminSubscription(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	n.mu.Lock()
	sub := n.hooks.subs[id]
	var out map[string]any
	if sub != nil {
		deliveries := append([]NotionDelivery{}, sub.deliveries...)
		out = map[string]any{"verification_token_sent": sub.tokenSent, "verified": sub.verified, "deliveries": deliveries}
	}
	n.mu.Unlock()
	if sub == nil {
		adminError(w, http.StatusNotFound, fmt.Errorf("no subscription %q", id))
		return
	}
	writeJSON(w, http.StatusOK, out)
}
