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

// Package papers holds what the Notion webhook routes and the Notion
// controllers must agree on: the secret paths (the Automation's, and the
// public integration's connection webhook), the PaperSync names, and the
// Secret the webhook keeps a subscription's verification token in.
package papers

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/upstream/notionid"
)

// WebhookPrefix is where Notion Automations post.
const WebhookPrefix = "/notion/webhook/"

// EventsPrefix is where a public integration's connection webhook
// subscription posts (developers.notion.com/reference/webhooks).
const EventsPrefix = "/notion/events/"

// EventsPath derives a public integration's connection-webhook path from
// its OAuth client id and secret: every NotionIntegration connected with
// that client shares it (Notion sends one subscription's events for every
// workspace that installed the integration), knowing it means knowing the
// client secret, and it reveals neither. Rotating the client secret
// changes it.
func EventsPath(clientID, clientSecret string) string {
	return capability.DerivedPath(EventsPrefix, clientSecret, "notion-events", clientID)
}

// VerificationSecretName names the Secret, in the webhook's namespace, in
// which the webhook keeps the verification token Notion sent to an events
// path: the key of every later event's signature.
func VerificationSecretName(eventsPath string) string {
	return capability.ChildName("notion-events", eventsPath, 16)
}

// VerificationTokenKey is the key of that Secret.
const VerificationTokenKey = "verification_token" //nolint:gosec // a key name, not a credential

// EventsPathAnnotation on the verification Secret names the path it
// belongs to, for a person reading it.
const EventsPathAnnotation = "switchboard.dev/notion-events-path"

// WebhookTokenKey is the key of the webhook Secret.
const WebhookTokenKey = "token"

// WebhookPath derives an integration's webhook path from its token, as
// Flux's Receiver does: knowing the path means knowing the token, and the
// path reveals nothing about it.
func WebhookPath(token, namespace, name string) string {
	return capability.DerivedPath(WebhookPrefix, token, namespace, name)
}

// SyncName names the PaperSync for one page and paper, so that the same
// event posted twice is one object (the second create is a no-op).
func SyncName(integration, pageID, arxivID string) string {
	return capability.ChildName(integration, notionid.Normalize(pageID)+"\x00"+arxivID, 16)
}

// EventSyncName names the PaperSync of one connection-webhook event for
// one page: Notion's retries of an event carry its id, so a retry is the
// same object (the second create is a no-op).
func EventSyncName(integration, pageID, eventID string) string {
	return capability.ChildName(integration, notionid.Normalize(pageID)+"\x00event\x00"+eventID, 16)
}

// DefaultLinkProperty is the seed's Link property (seed 000 §3.2.1).
const DefaultLinkProperty = "Link"

// LinkProperty is the name of the property an integration's pages hold
// their arXiv link in (spec.database.linkProperty).
func LinkProperty(ni *v1alpha1.NotionIntegration) string {
	if p := ni.Spec.Database.LinkProperty; p != "" {
		return p
	}
	return DefaultLinkProperty
}

// IntegrationLabel carries a PaperSync's integration name, for listing.
const IntegrationLabel = "switchboard.dev/integration"

// ReadFirstAnnotation on a PaperSync makes it read its page before it
// writes it, and write nothing when the page already holds its paper:
// set on the sync an event's PaperSync hands its page to when that event
// sync was re-created by a restore (it may have handed the page over, and
// the page been filled, before). A sync without an owner reference to its
// integration's UID reads first without it.
const ReadFirstAnnotation = "switchboard.dev/read-page-first"

// NewSync is the PaperSync for one page and paper of an integration, owned
// by it (deleted with it). pageID must be normalised.
func NewSync(ni *v1alpha1.NotionIntegration, pageID, link, arxivID string) *v1alpha1.PaperSync {
	ps := newSync(ni, SyncName(ni.Name, pageID, arxivID), pageID)
	ps.Spec.Link, ps.Spec.ArxivID = strings.TrimSpace(link), arxivID
	return ps
}

// NewEventSync is the PaperSync of a connection-webhook event that names
// only the page: the controller reads the page for its Link. pageID must
// be normalised.
func NewEventSync(ni *v1alpha1.NotionIntegration, pageID string, ev v1alpha1.NotionPageEvent) *v1alpha1.PaperSync {
	ps := newSync(ni, EventSyncName(ni.Name, pageID, ev.ID), pageID)
	ps.Spec.Event = &ev
	return ps
}

func newSync(ni *v1alpha1.NotionIntegration, name, pageID string) *v1alpha1.PaperSync {
	return &v1alpha1.PaperSync{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ni.Namespace,
			Labels: v1alpha1.ShardOf(ni, map[string]string{IntegrationLabel: ni.Name}),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NotionIntegration",
				Name: ni.Name, UID: ni.UID}},
		},
		Spec: v1alpha1.PaperSyncSpec{IntegrationRef: v1alpha1.LocalObjectReference{Name: ni.Name}, PageID: pageID},
	}
}
