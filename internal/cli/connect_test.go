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

package cli_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/cli"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

const link = "https://hooks.example.com/oauth/notion/connect?name=research&namespace=x&token=s3cr3t-one-use-token"

// connectable is a NotionIntegration whose controller minted a connect
// link into its Secret (holding data), with its Authenticated condition
// set to auth when auth is not empty.
func connectable(t *testing.T, ns string, auth metav1.ConditionStatus, data map[string]string) *v1alpha1.NotionIntegration {
	t.Helper()
	ni := create(t, ns, "research", &v1alpha1.NotionIntegration{})
	name := oauth.ConnectSecretName(ni.Name)
	if data != nil {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
		if err := env.Client.Create(context.Background(), sec); err != nil {
			t.Fatal(err)
		}
	}
	setStatus(t, ni, func(ni *v1alpha1.NotionIntegration) {
		ni.Status.ConnectSecretName = name
		if auth != "" {
			condition(&ni.Status.ReconcileStatus, v1alpha1.AuthenticatedCondition, auth, "Granted", "the grant works")
		}
	})
	return ni
}

// TestConnectPrintsExactlyTheLink: standard output is the link and
// nothing else, so that $(kubectl switchboard connect ...) is the link;
// a resource not yet connected gets no 409 warning.
func TestConnectPrintsExactlyTheLink(t *testing.T) {
	ns := namespace(t)
	connectable(t, ns, "", map[string]string{oauth.ConnectURLKey: link, oauth.ConnectTokenKey: "s3cr3t-one-use-token"})
	r := run(t, ns, "connect", "notion/research").ok(t)
	if r.stdout != link+"\n" {
		t.Errorf("stdout %q, want exactly the link", r.stdout)
	}
	if strings.Contains(r.stderr, "409") || strings.Contains(r.stderr, "s3cr3t") {
		t.Errorf("stderr warns of a 409, or repeats the token:\n%s", r.stderr)
	}
}

// TestConnectWarnsThatAWorkingGrantAnswers409: with Authenticated True
// the link is printed with the hint that it answers 409 until the
// reconnect annotation changes; --reconnect sets that annotation to a new
// value, and then the hint is gone.
func TestConnectWarnsThatAWorkingGrantAnswers409(t *testing.T) {
	ns := namespace(t)
	ni := connectable(t, ns, metav1.ConditionTrue, map[string]string{oauth.ConnectURLKey: link})
	r := run(t, ns, "connect", "notionintegration", "research").ok(t)
	if r.stdout != link+"\n" {
		t.Errorf("stdout %q, want exactly the link", r.stdout)
	}
	for _, want := range []string{"409", v1alpha1.ReconnectAnnotation, "--reconnect"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "s3cr3t") {
		t.Errorf("stderr repeats the token:\n%s", r.stderr)
	}

	at := time.Date(2031, 5, 6, 7, 8, 9, 10, time.UTC)
	r = plugin(t, cli.Options{Now: func() time.Time { return at }}, ns, "connect", "notion/research", "--reconnect").ok(t)
	if r.stdout != link+"\n" {
		t.Errorf("stdout %q, want exactly the link", r.stdout)
	}
	if strings.Contains(r.stderr, "409") {
		t.Errorf("after --reconnect, stderr still warns of a 409:\n%s", r.stderr)
	}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ni), ni); err != nil {
		t.Fatal(err)
	}
	if got, want := ni.Annotations[v1alpha1.ReconnectAnnotation], at.Format(time.RFC3339Nano); got != want {
		t.Errorf("%s is %q, want %q", v1alpha1.ReconnectAnnotation, got, want)
	}
}

// TestConnectOpensTheLink: --open hands the link to the opener after
// printing it; an opener's failure is an error that does not repeat it.
func TestConnectOpensTheLink(t *testing.T) {
	ns := namespace(t)
	connectable(t, ns, "", map[string]string{oauth.ConnectURLKey: link})
	var opened []string
	open := func(_ context.Context, url string) error { opened = append(opened, url); return nil }
	r := plugin(t, cli.Options{Open: open}, ns, "connect", "notion/research", "--open").ok(t)
	if len(opened) != 1 || opened[0] != link || r.stdout != link+"\n" {
		t.Errorf("opened %q, printed %q; want the link once each", opened, r.stdout)
	}
	broken := func(context.Context, string) error { return errors.New("no browser here") }
	r = plugin(t, cli.Options{Open: broken}, ns, "connect", "notion/research", "--open").fails(t, "could not open a browser", "no browser here")
	if strings.Contains(r.stderr, "s3cr3t") {
		t.Errorf("the opener's failure repeats the link:\n%s", r.stderr)
	}
}

// TestConnectExplainsAMissingLink: no connectSecretName, no Secret, a
// Secret without a url, a kind without OAuth, and a person who may not
// read Secrets each get an explanation.
func TestConnectExplainsAMissingLink(t *testing.T) {
	t.Run("not minted", func(t *testing.T) {
		ns := namespace(t)
		create(t, ns, "research", &v1alpha1.NotionIntegration{})
		run(t, ns, "connect", "notion/research").fails(t, "status.connectSecretName is empty", "has not minted one", "Ready is Unknown")
	})
	t.Run("Secret gone", func(t *testing.T) {
		ns := namespace(t)
		connectable(t, ns, "", nil)
		run(t, ns, "connect", "notion/research").fails(t, "research-oauth-connect", "does not exist", "reconcile notionintegration/research")
	})
	t.Run("no public URL", func(t *testing.T) {
		ns := namespace(t)
		connectable(t, ns, "", map[string]string{oauth.ConnectTokenKey: "s3cr3t-one-use-token"})
		r := run(t, ns, "connect", "notion/research").fails(t, "no link", "--public-url")
		if strings.Contains(r.stderr+r.stdout, "s3cr3t") {
			t.Errorf("the token was printed:\n%s%s", r.stdout, r.stderr)
		}
	})
	t.Run("not an OAuth kind", func(t *testing.T) {
		ns := namespace(t)
		r := run(t, ns, "connect", "slidestock/deck").fails(t, "a SlideStock has no connect link", "CalendarWatch (calwatch)", "NotionIntegration (notion)", "SheetConnection (sheetconn)")
		if strings.Contains(r.stderr, "PaperSync") {
			t.Errorf("PaperSync is listed as an OAuth kind:\n%s", r.stderr)
		}
	})
	t.Run("Secrets forbidden", func(t *testing.T) {
		ns := namespace(t)
		connectable(t, ns, "", map[string]string{oauth.ConnectURLKey: link})
		grant(t, ns, "reader", rbacv1.PolicyRule{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"notionintegrations"}, Verbs: []string{"get"}})
		r := run(t, ns, "connect", "notion/research", "--as", "reader").fails(t, "you may not read the connect Secret research-oauth-connect", "get on secrets")
		if r.stdout != "" {
			t.Errorf("stdout %q, want nothing", r.stdout)
		}
	})
}

// grant gives user the rules in ns only.
func grant(t *testing.T, ns, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user}, Rules: rules}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	for _, o := range []client.Object{role, binding} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// The authorizer reads RBAC from its own cache: wait until it lets
	// the user do what the first rule allows.
	r := rules[0]
	testenv.EventuallyWithin(t, patience, "the Role to take effect", func() bool {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: r.Verbs[0], Group: r.APIGroups[0], Resource: r.Resources[0]}}}
		return env.Client.Create(ctx, sar) == nil && sar.Status.Allowed
	})
}
