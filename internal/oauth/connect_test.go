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
	"encoding/base64"
	"errors"
	"net/url"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// owner is any object the connect Secret can belong to; a ConfigMap keeps
// these tests free of any one integration.
func owner(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	ns, err := env.Namespace("connect")
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "research", Namespace: ns}}
	if err := env.Client.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

func connectSecret(t *testing.T, o *corev1.ConfigMap) *corev1.Secret {
	t.Helper()
	sec := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: o.Namespace, Name: "research-oauth-connect"}, sec); err != nil {
		t.Fatal(err)
	}
	return sec
}

// now is the clock of the connect tests.
var now = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

func TestEnsureConnectSecretMintsAnOwnedOneUseLink(t *testing.T) {
	ctx := context.Background()
	o := owner(t)
	link, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", "https://hooks.example.com/", now, nil)
	if err != nil || link.Name != "research-oauth-connect" || !link.Minted {
		t.Fatalf("got %+v, %v", link.Name, err)
	}
	sec := connectSecret(t, o)
	if string(sec.Data[oauth.ConnectTokenKey]) != link.Token {
		t.Fatal("the token returned is not the one stored")
	}
	if !metav1.IsControlledBy(sec, o) || sec.Labels[v1alpha1.ManagedByLabel] != v1alpha1.ManagedByValue {
		t.Fatalf("owner %v, labels %v", sec.OwnerReferences, sec.Labels)
	}
	token := string(sec.Data[oauth.ConnectTokenKey])
	if b, err := base64.RawURLEncoding.DecodeString(token); err != nil || len(b) != 32 {
		t.Fatalf("token is not 32 random bytes: %d %v", len(b), err)
	}
	u, err := url.Parse(string(sec.Data[oauth.ConnectURLKey]))
	if err != nil || u.Scheme+"://"+u.Host+u.Path != "https://hooks.example.com/oauth/notion/connect" ||
		u.Query().Get("namespace") != o.Namespace || u.Query().Get("name") != "research" || u.Query().Get("token") != token {
		t.Fatalf("url %s", sec.Data[oauth.ConnectURLKey])
	}

	// Nothing changed: nothing written, nothing minted.
	if again, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", "https://hooks.example.com/", now, nil); err != nil || again.Minted || again.Token != link.Token {
		t.Fatalf("second call: minted %v, same token %v, %v", again.Minted, again.Token == link.Token, err)
	}
	if again := connectSecret(t, o); again.ResourceVersion != sec.ResourceVersion {
		t.Fatal("an unchanged connect Secret was written again")
	}

	// A new public URL rewrites the link and keeps the token.
	if _, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", "https://other.example.com", now, nil); err != nil {
		t.Fatal(err)
	}
	moved := connectSecret(t, o)
	if string(moved.Data[oauth.ConnectTokenKey]) != token || string(moved.Data[oauth.ConnectURLKey]) != oauth.ConnectURL("https://other.example.com", "notion", o.Namespace, "research", token) {
		t.Fatalf("after a new public URL: %s", moved.Data[oauth.ConnectURLKey])
	}

	// Deleted (the callback's rotation): the next call mints another token.
	if err := env.Client.Delete(ctx, moved); err != nil {
		t.Fatal(err)
	}
	minted, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", "", now, nil)
	if err != nil || !minted.Minted {
		t.Fatalf("after the rotation: minted %v, %v", minted.Minted, err)
	}
	fresh := connectSecret(t, o)
	if string(fresh.Data[oauth.ConnectTokenKey]) == token || fresh.Data[oauth.ConnectURLKey] != nil {
		t.Fatal("a rotated token came back, or a link was written without a public URL")
	}
}

// TestAConnectLinkLivesAnHourAndItsLastFlowsMayFinish: a link starts
// flows for ConnectTTL; then the manager mints the next one, and a flow
// the expired link started just before still hands its code over for
// StateTTL; a link with no recorded expiry (an older manager's) is
// replaced at once.
func TestAConnectLinkLivesAnHourAndItsLastFlowsMayFinish(t *testing.T) {
	ctx := context.Background()
	o := owner(t)
	link, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", "https://hooks.example.com", now, nil)
	if err != nil || !link.Expires.Equal(now.Add(oauth.ConnectTTL)) {
		t.Fatalf("expires %v (%v), want %v", link.Expires, err, now.Add(oauth.ConnectTTL))
	}
	if got := string(connectSecret(t, o).Data[oauth.ConnectExpiresKey]); got != now.Add(time.Hour).Format(time.RFC3339) {
		t.Fatalf("the Secret says it expires %q", got)
	}
	if kept, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", "https://hooks.example.com", link.Expires.Add(-time.Second), nil); err != nil || kept.Minted || kept.Token != link.Token {
		t.Fatalf("a second before the expiry: minted %v (%v)", kept.Minted, err)
	}
	next, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", "https://hooks.example.com", link.Expires, nil)
	if err != nil || !next.Minted || next.Token == link.Token || !next.Expires.Equal(link.Expires.Add(oauth.ConnectTTL)) {
		t.Fatalf("at the expiry: minted %v, new token %v, expires %v (%v)", next.Minted, next.Token != link.Token, next.Expires, err)
	}
	sec := connectSecret(t, o)
	old, fresh := capability.Hash(link.Token), capability.Hash(next.Token)
	for _, c := range []struct {
		what string
		hash string
		at   time.Time
		want bool
	}{
		{"the new link's flow", fresh, link.Expires, true},
		{"the expired link's flow, within the states' life", old, link.Expires.Add(oauth.StateTTL - time.Second), true},
		{"the expired link's flow, after it", old, link.Expires.Add(oauth.StateTTL), false},
		{"another token's flow", capability.Hash("guess"), link.Expires, false},
		{"a flow with no token", "", link.Expires, false},
	} {
		if got := oauth.ConnectTokenCurrent(sec, c.hash, c.at); got != c.want {
			t.Errorf("%s: current = %v, want %v", c.what, got, c.want)
		}
	}
	// An older manager's link, with no expiry: replaced.
	delete(sec.Data, oauth.ConnectExpiresKey)
	if err := env.Client.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	if again, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", "https://hooks.example.com", link.Expires, nil); err != nil || !again.Minted {
		t.Fatalf("a link with no expiry was kept (%v)", err)
	}
}

func TestEnsureConnectSecretRefusesASecretItDoesNotOwn(t *testing.T) {
	ctx := context.Background()
	o := owner(t)
	mine := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "research-oauth-connect", Namespace: o.Namespace},
		StringData: map[string]string{"token": "chosen-by-someone-else"}}
	if err := env.Client.Create(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if _, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", "https://hooks.example.com", now, nil); !errors.Is(err, oauth.ErrConnectSecretConflict) {
		t.Fatalf("got %v, want ErrConnectSecretConflict", err)
	}
	if sec := connectSecret(t, o); string(sec.Data["token"]) != "chosen-by-someone-else" || len(sec.OwnerReferences) != 0 {
		t.Fatal("the person's Secret was changed")
	}
}

// A cache behind the API server shows no connect Secret although one was
// written (by the reconcile before, or a concurrent one): the token this
// call would mint is not written, so it must not be handed back to be
// published as the link's hash, which would refuse the link people read
// from the Secret (seen in make demo on a loaded machine: callback 403).
func TestEnsureConnectSecretPublishesNoTokenItDidNotWrite(t *testing.T) {
	ctx := context.Background()
	o := owner(t)
	first, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", "https://hooks.example.com", now, nil)
	if err != nil {
		t.Fatal(err)
	}
	link, err := oauth.EnsureConnectSecret(ctx, secretsUnseen{env.Client}, o, "notion", "https://hooks.example.com", now, nil)
	if !errors.Is(err, oauth.ErrConnectSecretUnseen) || link.Token != "" {
		t.Fatalf("got a link with token %q and error %v, want none and ErrConnectSecretUnseen", link.Token, err)
	}
	if sec := connectSecret(t, o); string(sec.Data["token"]) != first.Token {
		t.Fatal("the written link's token changed")
	}
}

// secretsUnseen is a client whose reads find no Secret, as a cache that
// has not caught up with the API server.
type secretsUnseen struct{ client.Client }

func (c secretsUnseen) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// A link is handed to publish before the Secret shows it, whether it is
// the first one or the one an expiry mints; a failed publish writes no
// link. make e2e read a link the moment it appeared and was refused: the
// controller had written the Secret before publishing the hash.
func TestALinkIsPublishedBeforeTheSecretShowsIt(t *testing.T) {
	ctx := context.Background()
	o := owner(t)
	const hook = "https://hooks.example.com"
	var published []string
	publish := func(link oauth.ConnectLink) error {
		var sec corev1.Secret
		err := env.Client.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: "research-oauth-connect"}, &sec)
		if err == nil && string(sec.Data[oauth.ConnectTokenKey]) == link.Token {
			t.Error("the Secret showed the token before it was published")
		}
		published = append(published, link.Token)
		return nil
	}
	first, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", hook, now, publish)
	if err != nil || len(published) != 1 || published[0] != first.Token {
		t.Fatalf("first link: published %d, %v", len(published), err)
	}
	if u := string(connectSecret(t, o).Data[oauth.ConnectURLKey]); u != oauth.ConnectURL(hook, "notion", o.Namespace, "research", first.Token) {
		t.Fatalf("the Secret does not show the published link: %q", u)
	}
	if _, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", hook, now, publish); err != nil || len(published) != 1 {
		t.Fatalf("an unchanged link was published again (%d), %v", len(published), err)
	}
	next, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", hook, first.Expires, publish)
	if err != nil || !next.Minted || len(published) != 2 || published[1] != next.Token {
		t.Fatalf("expired link: minted %v, published %d, %v", next.Minted, len(published), err)
	}

	// A publish that fails leaves the Secret's link as it was.
	refused := errors.New("status write refused")
	before := connectSecret(t, o)
	if _, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", hook, next.Expires, func(oauth.ConnectLink) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("got %v, want the publish error", err)
	}
	if after := connectSecret(t, o); after.ResourceVersion != before.ResourceVersion {
		t.Fatal("the Secret was written although publishing failed")
	}
	if err := env.Client.Delete(ctx, before); err != nil {
		t.Fatal(err)
	}
	if _, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", hook, now, func(oauth.ConnectLink) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("got %v, want the publish error", err)
	}
	if sec := connectSecret(t, o); sec.Data[oauth.ConnectURLKey] != nil || sec.Data[oauth.ConnectTokenKey] != nil {
		t.Fatal("a new Secret shows a token that was not published")
	}
	// The next call mints a link into the Secret left empty.
	if again, err := oauth.EnsureConnectSecret(ctx, env.Client, o, "notion", hook, now, publish); err != nil || !again.Minted || published[len(published)-1] != again.Token {
		t.Fatalf("after a failed publish: minted %v, %v", again.Minted, err)
	}
}
