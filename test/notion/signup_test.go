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
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/controller/notionsignup"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// signUpFixture is a NotionSignup in a namespace of its own, with the
// public integration's client Secret, as a platform team opens one.
type signUpFixture struct {
	key types.NamespacedName
}

func newSignUp(t *testing.T, maxIntegrations int32) *signUpFixture {
	t.Helper()
	ctx := context.Background()
	ns, err := env.Namespace("signup")
	if err != nil {
		t.Fatal(err)
	}
	_, err = testenv.NotionSignup(ctx, env.Client, ns, "notion-client", "notion-secret", func(su *v1alpha1.NotionSignup) {
		su.Spec.Template.Database.Name, su.Spec.MaxIntegrations = "Lab Papers", maxIntegrations
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &signUpFixture{key: types.NamespacedName{Namespace: ns, Name: "lab"}}
	f.published(t, false)
	return f
}

// published waits until the webhook sees the sign-up published, closed
// or not: its start URL reads the webhook's cache, not the API server.
func (f *signUpFixture) published(t *testing.T, closed bool) {
	t.Helper()
	eventually(t, fmt.Sprintf("the sign-up published (closed %v)", closed), func() bool {
		p, found, err := oauth.ReadSignUp(context.Background(), hookView, "default", "notion", f.key.Namespace, f.key.Name)
		return err == nil && found && p.Closed == closed && p.ClientID == "notion-client"
	})
}

func (f *signUpFixture) startURL() string {
	return hookURL + "/signup/notion/" + f.key.Namespace + "/" + f.key.Name
}

// signUp walks a person of workspace ws through the start URL and
// Notion's consent, and returns the callback's page.
func (f *signUpFixture) signUp(t *testing.T, ws sandbox.NotionWorkspace) page {
	t.Helper()
	notionEmu.SetConsentWorkspace(ws)
	start := get(t, f.startURL())
	if start.status != http.StatusFound || start.location == nil {
		t.Fatalf("the start URL answered %d: %s", start.status, start.body)
	}
	q := start.location.Query()
	if !strings.HasSuffix(start.location.Path, "/v1/oauth/authorize") || q.Get("client_id") != "notion-client" ||
		q.Get("redirect_uri") != hookURL+"/oauth/notion/callback" || q.Get("owner") != "user" {
		t.Fatalf("authorize URL %s", start.location)
	}
	if !strings.Contains(start.header.Get("Set-Cookie"), "sb_browser=") {
		t.Errorf("the start bound no browser: Set-Cookie %q", start.header.Get("Set-Cookie"))
	}
	back := get(t, start.location.String())
	if back.status != http.StatusFound || back.location == nil {
		t.Fatalf("consent answered %d", back.status)
	}
	return get(t, back.location.String())
}

// made lists the integrations the sign-up made.
func (f *signUpFixture) made(t *testing.T) []v1alpha1.NotionIntegration {
	t.Helper()
	var list v1alpha1.NotionIntegrationList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(f.key.Namespace),
		client.MatchingLabels{v1alpha1.SignUpLabel: f.key.Name}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func (f *signUpFixture) secret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	var sec corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.key.Namespace, Name: name}, &sec); err != nil {
		t.Fatal(err)
	}
	return &sec
}

func (f *signUpFixture) secrets(t *testing.T) int {
	t.Helper()
	var list corev1.SecretList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(f.key.Namespace)); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

func signUpWorkspace(n int) sandbox.NotionWorkspace {
	wsCount++
	ws := sandbox.NotionWorkspace{ID: fmt.Sprintf("5%07d-1111-4222-8333-444455556666", wsCount), Name: fmt.Sprintf("Sign-up Lab %d", n),
		BotID: fmt.Sprintf("5%07d-0000-4000-8000-000000000001", wsCount)}
	notionEmu.AddPage(ws.ID, "Reading list")
	return ws
}

// A stranger signs up through the public URL with no kubectl: one
// NotionIntegration for the workspace, Ready, with its database; signing
// up again reconnects the same one; a new workspace past maxIntegrations
// gets the "full" page and nothing is created; a closed sign-up refuses
// at the start and leaves the integrations working; a deleted one answers
// that there is no sign-up, and its integrations stay.
func TestSelfServiceSignUpOneIntegrationPerWorkspaceBounded(t *testing.T) {
	ctx := context.Background()
	f := newSignUp(t, 1)
	ws := signUpWorkspace(1)

	done := f.signUp(t, ws)
	if done.status != http.StatusOK || !strings.Contains(done.body, "Connected to Notion") || !strings.Contains(done.body, ws.Name) {
		t.Fatalf("the sign-up's page %d:\n%s", done.status, done.body)
	}
	made := f.made(t)
	if len(made) != 1 {
		t.Fatalf("%d integrations made, want 1", len(made))
	}
	ni := made[0]
	if ni.Name != notionsignup.IntegrationName("lab", ws.ID) || ni.Labels[v1alpha1.WorkspaceLabel] != ws.ID ||
		ni.Spec.OAuth.ClientSecretRef.Name != "notion-client" || ni.Spec.Database.Name != "Lab Papers" || len(ni.OwnerReferences) != 0 {
		t.Fatalf("the integration made: name %s, labels %v, spec %+v, owners %v", ni.Name, ni.Labels, ni.Spec, ni.OwnerReferences)
	}
	// The page shows the database's link once the manager made it; the
	// integration is Ready with it.
	key := types.NamespacedName{Namespace: f.key.Namespace, Name: ni.Name}
	var got v1alpha1.NotionIntegration
	eventually(t, "the signed-up integration Ready with its database", func() bool {
		return env.Client.Get(ctx, key, &got) == nil && status.IsTrue(&got, v1alpha1.ReadyCondition) && got.Status.DatabaseURL != ""
	})
	if !strings.Contains(done.body, got.Status.DatabaseURL) {
		t.Errorf("the page does not link the database %s", got.Status.DatabaseURL)
	}
	// Its Secrets are its own: deleting it deletes them.
	tok, hook := f.secret(t, ni.Spec.OAuth.TokenSecretRef.Name), f.secret(t, ni.Spec.WebhookSecretRef.Name)
	for _, s := range []*corev1.Secret{tok, hook} {
		if !metav1.IsControlledBy(s, &got) {
			t.Errorf("Secret %s is not controlled by the integration: %v", s.Name, s.OwnerReferences)
		}
	}
	if !strings.HasPrefix(string(tok.Data["refresh_token"]), "nrt_") || len(hook.Data["token"]) < 40 {
		t.Fatalf("token Secret keys %d, webhook token %d bytes", len(tok.Data), len(hook.Data["token"]))
	}
	var su v1alpha1.NotionSignup
	eventually(t, "the sign-up counts one integration and is full", func() bool {
		return env.Client.Get(ctx, f.key, &su) == nil && su.Status.Integrations == 1 && !su.Status.Open && su.Status.ClientID == "notion-client"
	})

	// Again, the same workspace: the same integration, a new grant.
	again := f.signUp(t, ws)
	if again.status != http.StatusOK || !strings.Contains(again.body, "Connected to Notion") {
		t.Fatalf("signing up again: %d\n%s", again.status, again.body)
	}
	if n := len(f.made(t)); n != 1 {
		t.Fatalf("signing up again made %d integrations", n)
	}
	if rt := string(f.secret(t, ni.Spec.OAuth.TokenSecretRef.Name).Data["refresh_token"]); rt == string(tok.Data["refresh_token"]) || !strings.HasPrefix(rt, "nrt_") {
		t.Error("signing up again did not write the new grant")
	}

	// Another workspace, past the bound: the full page, nothing created.
	secrets := f.secrets(t)
	other := signUpWorkspace(2)
	full := f.signUp(t, other)
	if full.status != http.StatusForbidden || !strings.Contains(full.body, "Sign-up is full") {
		t.Fatalf("past the bound: %d\n%s", full.status, full.body)
	}
	if n, s := len(f.made(t)), f.secrets(t); n != 1 || s != secrets {
		t.Fatalf("past the bound: %d integrations, %d Secrets (were 1, %d)", n, s, secrets)
	}
	err := env.Client.Get(ctx, types.NamespacedName{Namespace: f.key.Namespace, Name: notionsignup.IntegrationName("lab", other.ID)}, &v1alpha1.NotionIntegration{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("the refused workspace's integration: %v", err)
	}

	// Closed: refused at the start with no state kept; the integration
	// made keeps working.
	su.Spec.Closed = true
	if err := env.Client.Update(ctx, &su); err != nil {
		t.Fatal(err)
	}
	f.published(t, true)
	states := stateCount(t)
	closed := get(t, f.startURL())
	if closed.status != http.StatusForbidden || !strings.Contains(closed.body, "Sign-up is closed") || stateCount(t) != states {
		t.Fatalf("a closed sign-up answered %d (states %d, were %d):\n%s", closed.status, stateCount(t), states, closed.body)
	}
	if err := env.Client.Get(ctx, key, &got); err != nil || !status.IsTrue(&got, v1alpha1.ReadyCondition) {
		t.Fatalf("the integration after closing: %v, Ready %v", err, status.Get(&got, v1alpha1.ReadyCondition))
	}

	// Deleted: its start URL is gone, its integrations stay.
	if err := env.Client.Delete(ctx, &su); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the webhook sees the sign-up unpublished", func() bool {
		_, found, err := oauth.ReadSignUp(ctx, hookView, "default", "notion", f.key.Namespace, f.key.Name)
		return err == nil && !found
	})
	if gone := get(t, f.startURL()); gone.status != http.StatusNotFound || !strings.Contains(gone.body, "There is no sign-up here") {
		t.Fatalf("a deleted sign-up answered %d:\n%s", gone.status, gone.body)
	}
	if n := len(f.made(t)); n != 1 {
		t.Fatalf("deleting the sign-up left %d integrations, want 1", n)
	}
}

// A Velero restore of a sign-up's namespace (status and owner references
// dropped, new UIDs): started again, the manager publishes the sign-up
// again under its new UID and counts its integration by label, and the
// workspace signing up again finds its integration: none is made twice.
func TestARestoredSignUpFindsItsIntegrationsAgain(t *testing.T) {
	ctx := context.Background()
	f := newSignUp(t, 5)
	ws := signUpWorkspace(3)
	if done := f.signUp(t, ws); done.status != http.StatusOK {
		t.Fatalf("sign-up: %d\n%s", done.status, done.body)
	}
	var before v1alpha1.NotionSignup
	if err := env.Client.Get(ctx, f.key, &before); err != nil {
		t.Fatal(err)
	}
	b, err := testenv.TakeNamespaceBackup(ctx, env.Client, f.key.Namespace, nil, &v1alpha1.NotionSignupList{}, &v1alpha1.NotionIntegrationList{})
	if err != nil {
		t.Fatal(err)
	}
	// The cluster is lost with the manager down (it would mint the
	// integration's connect Secret again while the rest goes), and
	// restored before it starts again.
	stopControllers()
	restarted := false
	defer func() {
		if !restarted { // a failure before the restart leaves the suite a manager
			_ = startControllers(env)
		}
	}()
	if err := b.Replay(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := startControllers(env); err != nil {
		t.Fatal(err)
	}
	restarted = true
	var after v1alpha1.NotionSignup
	eventually(t, "the restored sign-up published under its new UID, counting its integration", func() bool {
		p, found, err := oauth.ReadSignUp(ctx, hookView, "default", "notion", f.key.Namespace, f.key.Name)
		return err == nil && found && env.Client.Get(ctx, f.key, &after) == nil && after.UID != before.UID && p.UID == after.UID &&
			after.Status.Integrations == 1 && after.Status.Open
	})
	if again := f.signUp(t, ws); again.status != http.StatusOK || !strings.Contains(again.body, "Connected to Notion") {
		t.Fatalf("signing up again after the restore: %d\n%s", again.status, again.body)
	}
	if made := f.made(t); len(made) != 1 || made[0].Name != notionsignup.IntegrationName("lab", ws.ID) {
		t.Fatalf("after the restore the sign-up made %d integrations", len(made))
	}
}
