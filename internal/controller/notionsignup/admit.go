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

package notionsignup

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
)

// webhookTokenBytes is the entropy of the webhook token of an integration
// a sign-up makes: 256 bits.
const webhookTokenBytes = 32

// SignUp is NotionSignup's side of the OAuth Receiver: a Notion grant
// names its workspace (workspace_id, seed 000 §3.1.2), and each workspace
// gets one NotionIntegration.
var SignUp = oauth.SignUp{
	Target:  targets.Notion.Name,
	Resolve: resolve,
	Account: func(t oauth.Token) string { return t.Extra["workspace_id"] },
	Admit: func(ctx context.Context, c client.Client, r client.Reader, su *oauth.SignUpResource, workspace string) (*oauth.Resource, error) {
		return admit(ctx, c, r, su.Object.(*v1alpha1.NotionSignup), workspace)
	},
}

func resolve(ctx context.Context, r client.Reader, key types.NamespacedName) (*oauth.SignUpResource, error) {
	var s v1alpha1.NotionSignup
	if err := r.Get(ctx, key, &s); err != nil {
		return nil, err
	}
	// A sign-up being deleted takes no one in, as a closed one.
	closed := s.Spec.Closed || !s.DeletionTimestamp.IsZero()
	return &oauth.SignUpResource{Object: &s, ClientSecret: s.Spec.OAuth.ClientSecretRef.Name, Closed: closed}, nil
}

// admit is the NotionIntegration of workspace that s made, or a new one
// when s has room. The receiver runs one handover at a time, so the count
// and the create of one admit are not raced by another's.
func admit(ctx context.Context, c client.Client, r client.Reader, s *v1alpha1.NotionSignup, workspace string) (*oauth.Resource, error) {
	name := IntegrationName(s.Name, workspace)
	var ni v1alpha1.NotionIntegration
	err := r.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: name}, &ni)
	switch {
	case err == nil:
		if ni.Labels[v1alpha1.SignUpLabel] != s.Name || ni.Labels[v1alpha1.WorkspaceLabel] != workspaceLabel(workspace) {
			return nil, fmt.Errorf("NotionIntegration %s/%s exists and was not made by this sign-up for this workspace", s.Namespace, name)
		}
		return resourceOf(&ni), nil
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("read NotionIntegration %s/%s: %w", s.Namespace, name, err)
	}
	var made v1alpha1.NotionIntegrationList
	if err := r.List(ctx, &made, client.InNamespace(s.Namespace), client.MatchingLabels{v1alpha1.SignUpLabel: s.Name}); err != nil {
		return nil, fmt.Errorf("count the sign-up's integrations: %w", err)
	}
	if len(made.Items) >= int(s.Spec.MaxIntegrations) {
		return nil, oauth.ErrSignUpFull
	}
	ni = integrationFor(s, name, workspace)
	if err := c.Create(ctx, &ni); err != nil {
		return nil, fmt.Errorf("create NotionIntegration %s/%s: %w", s.Namespace, name, err)
	}
	// Its Secrets, owned by it: the webhook token (the Automation path;
	// connection webhooks need none) and an empty token Secret the grant
	// is then written into, which keeps the owner.
	webhookKey := types.NamespacedName{Namespace: s.Namespace, Name: ni.Spec.WebhookSecretRef.Name}
	if _, err := oauth.CreateOwnedSecret(ctx, c, &ni, webhookKey, nil, map[string][]byte{"token": []byte(capability.Random(webhookTokenBytes))}); err != nil {
		return nil, err
	}
	tokenKey := types.NamespacedName{Namespace: s.Namespace, Name: ni.Spec.OAuth.TokenSecretRef.Name}
	if _, err := oauth.CreateOwnedSecret(ctx, c, &ni, tokenKey, nil, nil); err != nil {
		return nil, err
	}
	return resourceOf(&ni), nil
}

func resourceOf(ni *v1alpha1.NotionIntegration) *oauth.Resource {
	return &oauth.Resource{Object: ni, Credentials: ni.Spec.OAuth}
}

// integrationFor is the NotionIntegration s makes for workspace: the
// sign-up's client and template, its own Secrets, labelled with the
// sign-up and the workspace (and the sign-up's shard, so that the same
// manager keeps both).
func integrationFor(s *v1alpha1.NotionSignup, name, workspace string) v1alpha1.NotionIntegration {
	labels := map[string]string{v1alpha1.SignUpLabel: s.Name, v1alpha1.WorkspaceLabel: workspaceLabel(workspace)}
	if shard, ok := s.Labels[v1alpha1.ShardLabel]; ok {
		labels[v1alpha1.ShardLabel] = shard
	}
	t := s.Spec.Template
	ni := v1alpha1.NotionIntegration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: labels},
		Spec: v1alpha1.NotionIntegrationSpec{
			OAuth: v1alpha1.OAuthCredentials{ClientSecretRef: s.Spec.OAuth.ClientSecretRef,
				TokenSecretRef: v1alpha1.SecretReference{Name: name + "-token"}},
			WebhookSecretRef: v1alpha1.SecretReference{Name: name + "-webhook"},
			Database:         v1alpha1.NotionDatabase{Name: t.Database.Name, LinkProperty: t.Database.LinkProperty},
		},
	}
	if t.TokenRefresh != nil {
		ni.Spec.TokenRefresh = *t.TokenRefresh
	}
	if t.BackfillInterval != nil {
		ni.Spec.BackfillInterval = *t.BackfillInterval
	}
	if t.SyncRetention != nil {
		ni.Spec.SyncRetention = *t.SyncRetention
	}
	return ni
}

// IntegrationName is the name of the integration the sign-up signUp makes
// for workspace: derived from both, so one workspace has one, and short
// enough for its Secrets' names ("-webhook" and "-token" appended).
func IntegrationName(signUp, workspace string) string {
	suffix := "-" + capability.Hash(workspace)[:10]
	if limit := validation.DNS1123SubdomainMaxLength - len("-webhook") - len(suffix); len(signUp) > limit {
		signUp = strings.TrimRight(signUp[:limit], "-.")
	}
	return signUp + suffix
}

// workspaceLabel is the WorkspaceLabel value of workspace: the id itself
// (Notion's are UUIDs), or its hash when it could not be a label value.
func workspaceLabel(workspace string) string {
	if len(validation.IsValidLabelValue(workspace)) == 0 {
		return workspace
	}
	return capability.Hash(workspace)[:32]
}
