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

package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// The OAuth routes know no integration: a route family registers a target
// and connects through them. These tests register two test-only targets,
// one on Google (as CalendarWatch and SheetConnection will) and one on
// Discord (as ReceiveLink will), whose resource is a ConfigMap that names
// its Secrets. The resolver is a function, so a ConfigMap stands in for a
// kind honestly: the routes see only what an OAuthResource carries.

// configMapTarget resolves a ConfigMap with keys clientSecret, tokenSecret
// and authenticated ("True", "False" or absent).
func configMapTarget(p oauth.Provider) webhook.OAuthTarget {
	return webhook.OAuthTarget{
		Kind:     "configmap",
		Provider: p,
		Resolve: func(ctx context.Context, d webhook.Deps, key types.NamespacedName) (*webhook.OAuthResource, error) {
			cm := &corev1.ConfigMap{}
			if err := d.APIReader.Get(ctx, key, cm); err != nil {
				return nil, err
			}
			return &webhook.OAuthResource{Object: cm, Authenticated: metav1.ConditionStatus(cm.Data["authenticated"]),
				Credentials: v1alpha1.OAuthCredentials{
					ClientSecretRef: v1alpha1.SecretReference{Name: cm.Data["clientSecret"]},
					TokenSecretRef:  v1alpha1.SecretReference{Name: cm.Data["tokenSecret"]},
				}}, nil
		},
	}
}

type oauthWorld struct {
	env           *testenv.Env
	sandbox, hook string
}

func startOAuthWorld(t *testing.T) *oauthWorld {
	t.Helper()
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	google := sandbox.NewGoogleOAuth()
	google.AddClient("google-client", "google-secret")
	discord := sandbox.NewDiscord()
	discord.AddClient("1234567890", "discord-secret")
	discord.SetConsentUser(sandbox.DiscordUser{ID: "80351110224678912", Username: "nelly"})
	box := sandbox.New(google, discord)
	srv := httptest.NewServer(box)
	t.Cleanup(srv.Close)
	ups := sandbox.Upstreams(srv.URL)
	out, err := outbound.New(ups, outbound.Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stateNS, err := env.Namespace("webhook")
	if err != nil {
		t.Fatal(err)
	}
	calendar := oauth.Google
	calendar.Scopes = []string{"https://www.googleapis.com/auth/calendar.readonly"}
	webhook.RegisterOAuthTarget("test-google", configMapTarget(calendar))
	webhook.RegisterOAuthTarget("test-discord", configMapTarget(oauth.Discord))
	hookSrv := httptest.NewUnstartedServer(nil)
	hookURL := "http://" + hookSrv.Listener.Addr().String()
	hook, err := webhook.NewServer(webhook.Options{Log: logr.Discard()},
		webhook.Deps{Client: env.Client, APIReader: env.Client, Upstreams: ups, Outbound: out, Log: logr.Discard(),
			PublicURL: hookURL, StateNamespace: stateNS},
		webhook.Registered()...)
	if err != nil {
		t.Fatal(err)
	}
	hookSrv.Config.Handler = hook.Handler()
	hookSrv.Start()
	t.Cleanup(hookSrv.Close)
	return &oauthWorld{env: env, sandbox: srv.URL, hook: hookURL}
}

// resource is one connectable ConfigMap with its client Secret, and its
// connect Secret minted as a controller would.
func (w *oauthWorld) resource(t *testing.T, target, clientID, clientSecret string) (*corev1.ConfigMap, string) {
	t.Helper()
	ctx := context.Background()
	ns, err := w.env.Namespace(target)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "client", Namespace: ns},
		StringData: map[string]string{oauth.KeyClientID: clientID, oauth.KeyClientSecret: clientSecret}}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "res", Namespace: ns},
		Data: map[string]string{"clientSecret": "client", "tokenSecret": "token"}}
	if err := w.env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if _, err := oauth.EnsureConnectSecret(ctx, w.env.Client, cm, target, w.hook); err != nil {
		t.Fatal(err)
	}
	var sec corev1.Secret
	if err := w.env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: oauth.ConnectSecretName("res")}, &sec); err != nil {
		t.Fatal(err)
	}
	return cm, string(sec.Data[oauth.ConnectURLKey])
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func fetch(t *testing.T, u string) (int, *url.URL, string) {
	t.Helper()
	resp, err := noFollow.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Every OAuth page carries a URL with a secret in it: never cached,
	// never sent on as a Referer.
	if strings.Contains(u, "/oauth/") && (resp.Header.Get("Referrer-Policy") != "no-referrer" || resp.Header.Get("Cache-Control") != "no-store") {
		t.Fatalf("%d from %s without no-referrer and no-store", resp.StatusCode, u[:strings.Index(u, "/oauth/")])
	}
	b, _ := io.ReadAll(resp.Body)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	return resp.StatusCode, loc, string(b)
}

// connectThrough runs connect → consent → callback like a browser and returns the
// authorize URL the route sent it to and the callback's answer.
func connectThrough(t *testing.T, link string) (authorize *url.URL, status int, body string) {
	t.Helper()
	st, authorize, body := fetch(t, link)
	if st != http.StatusFound {
		t.Fatalf("connect answered %d:\n%s", st, body)
	}
	st, back, body := fetch(t, authorize.String())
	if st != http.StatusFound {
		t.Fatalf("consent answered %d:\n%s", st, body)
	}
	st, _, body = fetch(t, back.String())
	return authorize, st, body
}

func (w *oauthWorld) token(t *testing.T, cm *corev1.ConfigMap) *corev1.Secret {
	t.Helper()
	var sec corev1.Secret
	if err := w.env.Client.Get(context.Background(), types.NamespacedName{Namespace: cm.Namespace, Name: "token"}, &sec); err != nil {
		t.Fatal(err)
	}
	return &sec
}

func TestOAuthRoutesConnectAnyRegisteredTarget(t *testing.T) {
	w := startOAuthWorld(t)
	ctx := context.Background()

	t.Run("Google: consent on accounts.google.com, PKCE, offline access", func(t *testing.T) {
		cm, link := w.resource(t, "test-google", "google-client", "google-secret")
		authorize, st, body := connectThrough(t, link)
		q := authorize.Query()
		if authorize.String()[:len(w.sandbox)] != w.sandbox || authorize.Path != "/googleaccounts/o/oauth2/v2/auth" ||
			q.Get("scope") != "https://www.googleapis.com/auth/calendar.readonly" || q.Get("access_type") != "offline" ||
			q.Get("code_challenge_method") != "S256" || q.Get("redirect_uri") != w.hook+"/oauth/test-google/callback" {
			t.Fatalf("authorize URL %s", authorize)
		}
		if st != http.StatusOK || !strings.Contains(body, "kubectl get configmap -n "+cm.Namespace+" res") {
			t.Fatalf("callback answered %d:\n%s", st, body)
		}
		tok := w.token(t, cm)
		if !strings.HasPrefix(string(tok.Data[oauth.KeyRefreshToken]), "1//") || !strings.HasPrefix(string(tok.Data[oauth.KeyAccessToken]), "ya29.") ||
			tok.Labels[v1alpha1.ManagedByLabel] != v1alpha1.ManagedByValue {
			t.Fatalf("token Secret keys %d, labels %v", len(tok.Data), tok.Labels)
		}
		// The connect token rotated: the Secret is gone until the
		// controller mints another, and the used link is refused.
		err := w.env.Client.Get(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: oauth.ConnectSecretName("res")}, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("connect Secret after the callback: %v", err)
		}
		if st, _, _ := fetch(t, link); st != http.StatusForbidden {
			t.Fatalf("the used link answered %d", st)
		}
	})

	t.Run("Discord: consent on discord.com, form-encoded exchange, the user behind the grant", func(t *testing.T) {
		cm, link := w.resource(t, "test-discord", "1234567890", "discord-secret")
		authorize, st, body := connectThrough(t, link)
		if authorize.Path != "/discord/oauth2/authorize" || authorize.Query().Get("scope") != "identify" || authorize.Query().Get("code_challenge") == "" {
			t.Fatalf("authorize URL %s", authorize)
		}
		if st != http.StatusOK {
			t.Fatalf("callback answered %d:\n%s", st, body)
		}
		tok := w.token(t, cm)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.sandbox+"/discord/api/users/@me", nil)
		req.Header.Set("Authorization", "Bearer "+string(tok.Data[oauth.KeyAccessToken]))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var me struct{ ID string }
		_ = json.NewDecoder(resp.Body).Decode(&me)
		resp.Body.Close()
		if me.ID != "80351110224678912" || tok.Data[oauth.KeyRefreshToken] == nil {
			t.Fatalf("the grant is not the consenting user's: %q", me.ID)
		}
	})

	t.Run("a grant marked not working is replaced without the annotation", func(t *testing.T) {
		cm, link := w.resource(t, "test-discord", "1234567890", "discord-secret")
		if _, st, _ := connectThrough(t, link); st != http.StatusOK {
			t.Fatalf("first connect answered %d", st)
		}
		first := string(w.token(t, cm).Data[oauth.KeyRefreshToken])
		// The controller would mint a new link; here the test plays it.
		if _, err := oauth.EnsureConnectSecret(ctx, w.env.Client, cm, "test-discord", w.hook); err != nil {
			t.Fatal(err)
		}
		var sec corev1.Secret
		if err := w.env.Client.Get(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: oauth.ConnectSecretName("res")}, &sec); err != nil {
			t.Fatal(err)
		}
		link = string(sec.Data[oauth.ConnectURLKey])
		if st, _, _ := fetch(t, link); st != http.StatusConflict {
			t.Fatalf("connect to a working grant answered %d", st)
		}
		cm.Data["authenticated"] = string(metav1.ConditionFalse)
		if err := w.env.Client.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		if _, st, _ := connectThrough(t, link); st != http.StatusOK {
			t.Fatalf("reconnect of a broken grant answered %d", st)
		}
		if string(w.token(t, cm).Data[oauth.KeyRefreshToken]) == first {
			t.Fatal("the broken grant was not replaced")
		}
	})

	t.Run("a resource made again under the same name does not get a grant started for the old one", func(t *testing.T) {
		cm, link := w.resource(t, "test-google", "google-client", "google-secret")
		st, authorize, _ := fetch(t, link)
		if st != http.StatusFound {
			t.Fatalf("connect answered %d", st)
		}
		_, back, _ := fetch(t, authorize.String())
		if err := w.env.Client.Delete(ctx, cm); err != nil {
			t.Fatal(err)
		}
		again := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "res", Namespace: cm.Namespace}, Data: cm.Data}
		if err := w.env.Client.Create(ctx, again); err != nil {
			t.Fatal(err)
		}
		if st, _, _ := fetch(t, back.String()); st != http.StatusNotFound {
			t.Fatalf("callback for a replaced resource answered %d", st)
		}
		if err := w.env.Client.Get(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: "token"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Fatalf("a token Secret was written: %v", err)
		}
	})
}
