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

// Package papers holds what the Notion webhook route and the Notion
// controllers must agree on: the secret webhook path and the PaperSync
// names.
package papers

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/notionid"
)

// WebhookPrefix is where Notion Automations post.
const WebhookPrefix = "/notion/webhook/"

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

// IntegrationLabel carries a PaperSync's integration name, for listing.
const IntegrationLabel = "switchboard.dev/integration"

// NewSync is the PaperSync for one page and paper of an integration, owned
// by it (deleted with it). pageID must be normalised.
func NewSync(ni *v1alpha1.NotionIntegration, pageID, link, arxivID string) *v1alpha1.PaperSync {
	return &v1alpha1.PaperSync{
		ObjectMeta: metav1.ObjectMeta{
			Name: SyncName(ni.Name, pageID, arxivID), Namespace: ni.Namespace,
			Labels: v1alpha1.ShardOf(ni, map[string]string{IntegrationLabel: ni.Name}),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "NotionIntegration",
				Name: ni.Name, UID: ni.UID}},
		},
		Spec: v1alpha1.PaperSyncSpec{IntegrationRef: v1alpha1.LocalObjectReference{Name: ni.Name},
			PageID: pageID, Link: strings.TrimSpace(link), ArxivID: arxivID},
	}
}
