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

package oauth_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// A restore (Velero, a GitOps delete and re-apply) brings the connect
// Secret back with no owner reference, or with one to the old UID: the
// re-created resource takes it back with a new token, where it used to
// stall on ConnectSecretConflict and stay stalled.
func TestARestoredConnectSecretIsClaimedWithANewToken(t *testing.T) {
	for _, c := range []struct {
		what string
		refs func(o *corev1.ConfigMap) []metav1.OwnerReference
	}{
		{"no owner reference", func(*corev1.ConfigMap) []metav1.OwnerReference { return nil }},
		{"the old UID's controller reference", func(o *corev1.ConfigMap) []metav1.OwnerReference {
			return []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: o.Name, UID: types.UID("gone-with-the-old-cluster"), Controller: ptr.To(true)}}
		}},
	} {
		t.Run(c.what, func(t *testing.T) {
			ctx := context.Background()
			o := owner(t)
			restored := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "research-oauth-connect", Namespace: o.Namespace,
				Labels:          map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue, oauth.ConnectTargetLabel: "notion"},
				OwnerReferences: c.refs(o)},
				StringData: map[string]string{oauth.ConnectTokenKey: "from-the-backup", oauth.ConnectExpiresKey: now.Add(oauth.ConnectTTL).Format("2006-01-02T15:04:05Z07:00")}}
			if err := env.Client.Create(ctx, restored); err != nil {
				t.Fatal(err)
			}
			link, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", "https://hooks.example.com", now, nil)
			if err != nil {
				t.Fatalf("a restored connect Secret was refused: %v", err)
			}
			sec := connectSecret(t, o)
			if !metav1.IsControlledBy(sec, o) || len(sec.OwnerReferences) != 1 {
				t.Fatalf("owner references %+v, want the re-created resource alone as controller", sec.OwnerReferences)
			}
			if !link.Minted || link.Token == "from-the-backup" || string(sec.Data[oauth.ConnectTokenKey]) != link.Token {
				t.Fatalf("the backup's token was kept (minted %v): a planted token would open the link", link.Minted)
			}
		})
	}
}

// A Secret the operator wrote for another object, or one without its
// label, stays someone else's.
func TestClaimSecretLeavesOthersSecretsAlone(t *testing.T) {
	ctx := context.Background()
	o := owner(t)
	for _, c := range []struct {
		what   string
		labels map[string]string
		refs   []metav1.OwnerReference
	}{
		{"not the operator's", nil, nil},
		{"another object's", map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue},
			[]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "someone-else", UID: "x", Controller: ptr.To(true)}}},
		{"another kind's of that name", map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue},
			[]metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: o.Name, UID: "y", Controller: ptr.To(true)}}},
	} {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{GenerateName: "claim-", Namespace: o.Namespace, Labels: c.labels, OwnerReferences: c.refs}}
		if err := env.Client.Create(ctx, sec); err != nil {
			t.Fatal(err)
		}
		before := sec.ResourceVersion
		got, err := oauth.ClaimSecret(ctx, env.Client, o, sec)
		if err != nil || got != oauth.Foreign {
			t.Errorf("%s: claim = %v, %v; want Foreign", c.what, got, err)
		}
		if sec.ResourceVersion != before {
			t.Errorf("%s: the Secret was written", c.what)
		}
	}
}
