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

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// The reconnect value a callback recorded must survive every refresh,
// or the next refresh would re-open the grant to the same annotation.
func TestARefreshKeepsWhatTheCallbackRecorded(t *testing.T) {
	ctx := context.Background()
	ns, err := env.Namespace("store")
	if err != nil {
		t.Fatal(err)
	}
	clientKey, tokenKey := types.NamespacedName{Namespace: ns, Name: "client"}, types.NamespacedName{Namespace: ns, Name: "token"}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "client", Namespace: ns},
		StringData: map[string]string{"client_id": "notion-client", "client_secret": "notion-secret"}}); err != nil {
		t.Fatal(err)
	}
	store := &oauth.Store{Reader: env.Client, Writer: env.Client}
	rt := notion.IssueRefreshToken("notion-client", ws)
	if err := store.SaveConnected(ctx, tokenKey, oauth.Token{RefreshToken: rt, AccessToken: "a"}, "2026-05-01"); err != nil {
		t.Fatal(err)
	}
	g, err := store.Grant(ctx, tokenKey)
	if err != nil || !g.HasRefreshToken || g.ReconnectedFor != "2026-05-01" {
		t.Fatalf("grant %+v, %v", g, err)
	}
	engine := &oauth.Engine{Store: store, Out: out}
	tok, err := engine.Ensure(ctx, oauth.Notion, clientKey, tokenKey, 0, true)
	if err != nil || tok.RefreshToken == rt {
		t.Fatalf("refresh did not rotate: %v", err)
	}
	g, err = store.Grant(ctx, tokenKey)
	if err != nil || g.ReconnectedFor != "2026-05-01" {
		t.Fatalf("after a refresh the grant says reconnected-for %q (%v)", g.ReconnectedFor, err)
	}
	var sec corev1.Secret
	if err := env.Client.Get(ctx, tokenKey, &sec); err != nil || sec.Labels[v1alpha1.ManagedByLabel] != v1alpha1.ManagedByValue {
		t.Fatalf("labels %v (%v)", sec.Labels, err)
	}
	// A callback without a reconnect value clears the record.
	if err := store.SaveConnected(ctx, tokenKey, tok, ""); err != nil {
		t.Fatal(err)
	}
	if g, _ := store.Grant(ctx, tokenKey); g.ReconnectedFor != "" {
		t.Fatalf("reconnected-for %q kept", g.ReconnectedFor)
	}
}
