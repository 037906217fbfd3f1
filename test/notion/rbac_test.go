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

package notion_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue 17 §1: the webhook faces the internet, so the chart gives its
// ServiceAccount no right to any Secret outside its own namespace. The
// API server itself answers (SubjectAccessReview), for every verb.
func TestTheWebhookMayTouchNoSecretOutsideItsNamespace(t *testing.T) {
	user, err := env.Namespace("someone")
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"kube-system", user, ""} {
		for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
			allowed, err := rbac.Can(env, rbac.WebhookUser, verb, "secrets", ns)
			if err != nil {
				t.Fatal(err)
			}
			if allowed {
				t.Errorf("the webhook may %s Secrets in %q", verb, ns)
			}
		}
	}
	// Its own namespace: what the OAuth states, handovers and sessions need.
	for _, verb := range []string{"get", "list", "watch", "create", "delete"} {
		if allowed, err := rbac.Can(env, rbac.WebhookUser, verb, "secrets", rbac.Namespace); err != nil || !allowed {
			t.Errorf("the webhook may not %s Secrets in its own namespace (%v)", verb, err)
		}
	}
	// The manager keeps the users' Secrets (a cluster-wide install).
	if allowed, err := rbac.Can(env, rbac.ManagerUser, "get", "secrets", user); err != nil || !allowed {
		t.Errorf("the manager may not read Secrets in %s (%v)", user, err)
	}

	// And a real request as the webhook is refused, and counted as a
	// denial (the count the suite fails on when it is not provoked).
	cl, err := client.New(rbac.Webhook, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	err = cl.Get(context.Background(), types.NamespacedName{Namespace: "kube-system", Name: "anything"}, &corev1.Secret{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("the webhook reading a kube-system Secret: %v", err)
	}
	if d := rbac.Drain(); len(d) != 1 || !strings.Contains(d[0], "/namespaces/kube-system/secrets/anything") {
		t.Fatalf("denials recorded: %q", d)
	}
}
