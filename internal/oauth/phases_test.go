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
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/runner"
	"github.com/switchboard-dev/switchboard/internal/status"
)

// fakeTokens is a struct-of-functions fake of the engine.
type fakeTokens struct {
	ensure func(force bool) (oauth.Token, error)
}

func (f fakeTokens) Ensure(_ context.Context, _ oauth.Provider, _, _ types.NamespacedName, _ time.Duration, force bool) (oauth.Token, error) {
	return f.ensure(force)
}

func grantPhases(tokens oauth.TokenSource) *oauth.Phases[*v1alpha1.NotionIntegration] {
	return &oauth.Phases[*v1alpha1.NotionIntegration]{
		Tokens:        tokens,
		Provider:      func(*v1alpha1.NotionIntegration) oauth.Provider { return oauth.Notion },
		Credentials:   func(ni *v1alpha1.NotionIntegration) v1alpha1.OAuthCredentials { return ni.Spec.OAuth },
		RefreshBefore: func(*v1alpha1.NotionIntegration) time.Duration { return time.Hour },
	}
}

func TestTheGrantPhaseTellsAPersonsProblemFromATransientOne(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "client")
	for _, tc := range []struct {
		name, kind, reason string
		err                error
		authenticated      metav1.ConditionStatus
		recheck            bool
	}{
		{"a refused grant needs a person to connect again", "stall", v1alpha1.ReauthRequiredReason,
			fmt.Errorf("refresh: %w", oauth.ErrReauthRequired), metav1.ConditionFalse, false},
		{"a missing client Secret stalls and rechecks slowly", "stall", v1alpha1.SecretNotFoundReason,
			fmt.Errorf("read OAuth client Secret ns/client: %w", notFound), "", true},
		{"a client Secret without its keys stalls and rechecks slowly", "stall", v1alpha1.SecretNotFoundReason,
			fmt.Errorf("%w: ns/client needs keys", oauth.ErrClientIncomplete), "", true},
		{"an API server that fails to answer is transient", "transient", v1alpha1.TokenRefreshFailedReason,
			fmt.Errorf("read token Secret ns/token: %w", apierrors.NewServiceUnavailable("etcd is down")), "", false},
		{"a forbidden read is transient, not a missing Secret", "transient", v1alpha1.TokenRefreshFailedReason,
			fmt.Errorf("read token Secret ns/token: %w", apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "token", errors.New("RBAC"))), "", false},
		{"a token endpoint 503 is transient", "transient", v1alpha1.TokenRefreshFailedReason,
			&outbound.Error{Upstream: "notion", Class: outbound.Transient, Status: 503, Reason: "HTTP 503"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ni := &v1alpha1.NotionIntegration{}
			p := grantPhases(fakeTokens{ensure: func(bool) (oauth.Token, error) { return oauth.Token{}, tc.err }})
			run := &runner.Run{Now: time.Now()}
			out := p.Grant(context.Background(), ni, run)
			if out.Kind() != tc.kind || out.Reason() != tc.reason || (out.After() > 0) != tc.recheck || run.Token != "" {
				t.Fatalf("got %s %s recheck %v", out.Kind(), out.Reason(), out.After())
			}
			c := status.Get(ni, v1alpha1.AuthenticatedCondition)
			if tc.authenticated != "" && (c == nil || c.Status != tc.authenticated) {
				t.Fatalf("Authenticated %+v, want %s", c, tc.authenticated)
			}
		})
	}
}

func TestTheGrantPhaseHandsTheTokenOnAndRequeuesAtTheRefreshDeadline(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var forced []bool
	p := grantPhases(fakeTokens{ensure: func(force bool) (oauth.Token, error) {
		forced = append(forced, force)
		return oauth.Token{AccessToken: "access", Expiry: now.Add(7 * 24 * time.Hour)}, nil
	}})
	granted := 0
	p.Granted = func(*v1alpha1.NotionIntegration, oauth.Token, *runner.Run) { granted++ }
	ni := &v1alpha1.NotionIntegration{}
	run := &runner.Run{Now: now, Requested: true}
	if out := p.Grant(context.Background(), ni, run); out.Kind() != "continue" || run.Token != "access" || granted != 1 {
		t.Fatalf("%s, token handed on %v, granted %d", out.Kind(), run.Token != "", granted)
	}
	if len(forced) != 1 || !forced[0] {
		t.Fatal("a requested-at annotation did not force the refresh")
	}
	if !status.IsTrue(ni, v1alpha1.AuthenticatedCondition) {
		t.Fatal("not Authenticated")
	}
	if d, ok := run.Next(); !ok || d != 7*24*time.Hour-time.Hour {
		t.Fatalf("next deadline in %v, want 6d23h (expiry less refreshBefore)", d)
	}
}
