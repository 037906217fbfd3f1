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

package grant_test

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
)

// ensureCall is what a parent's Token asked of the engine.
type ensureCall struct {
	provider         string
	clientKey, token types.NamespacedName
	margin           time.Duration
	force            bool
}

type recordingTokens struct {
	calls  []ensureCall
	answer oauth.Token
	err    error
}

func (r *recordingTokens) Ensure(_ context.Context, p oauth.Provider, clientKey, tokenKey types.NamespacedName, margin time.Duration, force bool) (oauth.Token, error) {
	r.calls = append(r.calls, ensureCall{p.Name, clientKey, tokenKey, margin, force})
	return r.answer, r.err
}

// A parent's grant for its children's batches is its token Secret's, from
// the parent kind's provider, refreshed when less than the parent's
// refreshBefore remains (no lead, never forced), with the grant's id.
func TestTokenIsTheParentsGrantRefreshedAsItsSpecSays(t *testing.T) {
	tokens := &recordingTokens{answer: oauth.Token{AccessToken: "access", Extra: map[string]string{oauth.KeyGrantedAt: "g1"}}}
	conn := &v1alpha1.SheetConnection{ObjectMeta: metav1.ObjectMeta{Name: "log", Namespace: "ns"}}
	conn.Spec.OAuth.ClientSecretRef.Name, conn.Spec.OAuth.TokenSecretRef.Name = "google-client", "google-token"
	conn.Spec.TokenRefreshBefore = metav1.Duration{Duration: 5 * time.Minute}
	p := grant.New[*v1alpha1.SheetConnection](grant.Deps{Tokens: tokens}, oauth.Target{Name: "sheets", Provider: oauth.Provider{Name: "google"}}).
		WithRefreshLead()

	g, err := p.Token(context.Background(), conn)
	if err != nil || g.Token != "access" || g.ID != "g1" {
		t.Fatalf("Token = %+v, %v; want the access token and grant g1", g, err)
	}
	want := ensureCall{"google", types.NamespacedName{Namespace: "ns", Name: "google-client"},
		types.NamespacedName{Namespace: "ns", Name: "google-token"}, 5 * time.Minute, false}
	if len(tokens.calls) != 1 || tokens.calls[0] != want {
		t.Fatalf("engine asked %+v, want %+v", tokens.calls, want)
	}

	tokens.err = oauth.ErrReauthRequired
	if _, err := p.Token(context.Background(), conn); !errors.Is(err, oauth.ErrReauthRequired) {
		t.Fatalf("a refused grant: %v, want ErrReauthRequired", err)
	}
}
