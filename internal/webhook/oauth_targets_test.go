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
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// The OAuth routes know no integration: a route family carries a target
// and connects through them. These tests add two test-only targets,
// one on Google (as CalendarWatch and SheetConnection do) and one on
// Discord, whose resource is a ConfigMap that names its Secrets and holds
// what a controller would publish in status (the connect token's hash,
// the client id, the Authenticated condition). The resolver is a
// function, so a ConfigMap stands in for a kind honestly: the routes and
// the manager's Receiver see only what an oauth.Resource carries.

// configMapTarget resolves a ConfigMap with keys clientSecret, tokenSecret,
// connectTokenHash, clientID, reconnectedFor and authenticated ("True",
// "False" or absent).
func configMapTarget(name string, p oauth.Provider) oauth.Target {
	return oauth.Target{
		Name:     name,
		Kind:     "configmap",
		Provider: p,
		Resolve: func(ctx context.Context, r client.Reader, key types.NamespacedName) (*oauth.Resource, error) {
			cm := &corev1.ConfigMap{}
			if err := r.Get(ctx, key, cm); err != nil {
				return nil, err
			}
			return &oauth.Resource{Object: cm, Authenticated: metav1.ConditionStatus(cm.Data["authenticated"]),
				Credentials: v1alpha1.OAuthCredentials{
					ClientSecretRef: v1alpha1.SecretReference{Name: cm.Data["clientSecret"]},
					TokenSecretRef:  v1alpha1.SecretReference{Name: cm.Data["tokenSecret"]},
				},
				Connect: v1alpha1.OAuthConnectStatus{ConnectTokenHash: cm.Data["connectTokenHash"], ClientID: cm.Data["clientID"],
					ReconnectedFor: cm.Data["reconnectedFor"], ConnectExpiresAt: expiresAt(cm.Data["connectExpiresAt"])},
			}, nil
		},
	}
}

// expiresAt parses a published connectExpiresAt (RFC 3339), nil if none.
func expiresAt(v string) *metav1.Time {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil
	}
	return &metav1.Time{Time: t}
}

type oauthWorld struct {
	env           *testenv.Env
	sandbox, hook string
	ups           *upstream.Set
	out           *outbound.Client
	targets       []oauth.Target
	stateNS       string
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
	w := &oauthWorld{env: env, sandbox: srv.URL, ups: ups, out: out, stateNS: stateNS,
		targets: []oauth.Target{configMapTarget("test-google", calendar), configMapTarget("test-discord", oauth.Discord)}}
	w.receive(t, stateNS)
	w.hook = w.serve(t, stateNS, 0)
	return w
}

// receive runs the manager's side of the callbacks, the operator with no
// kind but its grant receiver, on the handovers in namespace for the test's
// targets.
func (w *oauthWorld) receive(t *testing.T, namespace string) {
	t.Helper()
	_, stop, err := testenv.StartOperator(w.env.Config, wire.Operator{
		Deps: wire.Deps{Outbound: w.out, StateNamespace: namespace}, Targets: w.targets})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
}

// families are the webhook's route families and one more for each test
// target, which brings only the target.
func (w *oauthWorld) families() []webhook.Family {
	families := webhook.Families()
	for _, tg := range w.targets {
		families = append(families, webhook.Family{Name: tg.Name, OAuth: &webhook.OAuthTarget{Target: tg}})
	}
	return families
}

// serve starts a webhook server whose state namespace is namespace.
func (w *oauthWorld) serve(t *testing.T, namespace string, wait time.Duration) string {
	t.Helper()
	return w.serveWith(t, namespace, wait, webhook.Options{Log: logr.Discard()})
}

// serveWith is serve with the server's options.
func (w *oauthWorld) serveWith(t *testing.T, namespace string, wait time.Duration, opts webhook.Options) string {
	t.Helper()
	hookSrv := httptest.NewUnstartedServer(nil)
	hookURL := "http://" + hookSrv.Listener.Addr().String()
	hook, err := webhook.NewServer(opts,
		webhook.Deps{Client: w.env.Client, APIReader: w.env.Client, Upstreams: w.ups, Outbound: w.out, Log: logr.Discard(),
			PublicURL: hookURL, StateNamespace: namespace, HandoverWait: wait},
		w.families()...)
	if err != nil {
		t.Fatal(err)
	}
	hookSrv.Config.Handler = hook.Handler()
	hookSrv.Start()
	t.Cleanup(hookSrv.Close)
	return hookURL
}

// resource is one connectable ConfigMap with its client Secret, and its
// connect Secret minted and published as a controller would.
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
		Data: map[string]string{"clientSecret": "client", "tokenSecret": "token", "clientID": clientID}}
	if err := w.env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	return cm, w.mint(t, cm, target)
}

// mint plays the controller's Connect phase: a connect Secret, and its
// token's hash published where the routes read it. It returns the link.
func (w *oauthWorld) mint(t *testing.T, cm *corev1.ConfigMap, target string) string {
	t.Helper()
	return w.mintOn(t, cm, target, w.hook)
}

// mintOn is mint for the webhook at hook: the link is built on its URL
// (the token is kept when the Secret exists).
func (w *oauthWorld) mintOn(t *testing.T, cm *corev1.ConfigMap, target, hook string) string {
	t.Helper()
	ctx := context.Background()
	link, err := oauth.EnsureConnectSecret(ctx, w.env.Client, cm, target, hook, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.publish(t, cm, "connectTokenHash", capability.Hash(link.Token))
	var sec corev1.Secret
	if err := w.env.Client.Get(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: link.Name}, &sec); err != nil {
		t.Fatal(err)
	}
	return string(sec.Data[oauth.ConnectURLKey])
}

// publish sets what the controller would publish in status.
func (w *oauthWorld) publish(t *testing.T, cm *corev1.ConfigMap, key, value string) {
	t.Helper()
	if err := w.env.Client.Get(context.Background(), client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	cm.Data[key] = value
	if err := w.env.Client.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
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

func TestOAuthRoutesConnectTheTargetsOfTheirFamilies(t *testing.T) {
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
		// controller mints another. Until the controller publishes the new
		// token's hash, the old link still starts a flow, but the manager
		// refuses to finish it: a link works once.
		err := w.env.Client.Get(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: oauth.ConnectSecretName("res")}, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("connect Secret after the callback: %v", err)
		}
		if _, st, body := connectThrough(t, link); st != http.StatusForbidden || !strings.Contains(body, "not valid") {
			t.Fatalf("a second flow from the used link answered %d:\n%s", st, body)
		}
		if again := w.token(t, cm); string(again.Data[oauth.KeyRefreshToken]) != string(tok.Data[oauth.KeyRefreshToken]) {
			t.Fatal("a second flow from the used link replaced the grant")
		}
		// Once the controller has minted and published a new token, the
		// used link is refused at once.
		fresh := w.mint(t, cm, "test-google")
		if st, _, _ := fetch(t, link); st != http.StatusForbidden || fresh == link {
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
		// The controller would mint a new link and find the grant working;
		// here the test plays it.
		link = w.mint(t, cm, "test-discord")
		w.publish(t, cm, "authenticated", string(metav1.ConditionTrue))
		if st, _, _ := fetch(t, link); st != http.StatusConflict {
			t.Fatalf("connect to a working grant answered %d", st)
		}
		w.publish(t, cm, "authenticated", string(metav1.ConditionFalse))
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

	t.Run("a grant that started working between connect and callback is not replaced", func(t *testing.T) {
		cm, link := w.resource(t, "test-google", "google-client", "google-secret")
		st, authorize, _ := fetch(t, link)
		if st != http.StatusFound {
			t.Fatalf("connect answered %d", st)
		}
		_, back, _ := fetch(t, authorize.String())
		// Meanwhile a grant arrives another way (a person wrote the Secret).
		if err := w.env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: cm.Namespace},
			StringData: map[string]string{oauth.KeyRefreshToken: "1//by-hand", oauth.KeyAccessToken: "ya29.by-hand"}}); err != nil {
			t.Fatal(err)
		}
		if st, _, body := fetch(t, back.String()); st != http.StatusConflict || !strings.Contains(body, "Already connected") {
			t.Fatalf("callback answered %d:\n%s", st, body)
		}
		if string(w.token(t, cm).Data[oauth.KeyRefreshToken]) != "1//by-hand" {
			t.Fatal("the working grant was replaced")
		}
	})

	t.Run("a callback the manager has not received yet says so, and the grant arrives when it runs", func(t *testing.T) {
		idle, err := w.env.Namespace("idle")
		if err != nil {
			t.Fatal(err)
		}
		// A webhook whose handovers no Receiver watches yet: the manager is
		// down, say. It waits 200 ms, not the default 10 s.
		hook := w.serve(t, idle, 200*time.Millisecond)
		cm, _ := w.resource(t, "test-google", "google-client", "google-secret")
		_, st, body := connectThrough(t, w.mintOn(t, cm, "test-google", hook))
		if st != http.StatusAccepted || !strings.Contains(body, "kubectl get configmap -n "+cm.Namespace+" res") {
			t.Fatalf("callback answered %d:\n%s", st, body)
		}
		var handovers corev1.SecretList
		if err := w.env.Client.List(ctx, &handovers, client.InNamespace(idle), client.HasLabels{oauth.HandoverLabel}); err != nil || len(handovers.Items) != 1 {
			t.Fatalf("%d handovers, %v", len(handovers.Items), err)
		}
		if len(handovers.Items[0].Data["code"]) == 0 {
			t.Fatal("the handover holds no code")
		}
		if err := w.env.Client.Get(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: "token"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Fatalf("a token Secret was written with no manager running: %v", err)
		}
		// The manager starts: the grant arrives, and the handover keeps the
		// outcome but no code.
		w.receive(t, idle)
		testenv.Eventually(t, "the handover received, with its outcome and without its code", func() bool {
			var ho corev1.Secret
			err := w.env.Client.Get(ctx, client.ObjectKeyFromObject(&handovers.Items[0]), &ho)
			return err == nil && string(ho.Data["outcome"]) == string(oauth.Connected) && ho.Data["code"] == nil
		})
		if tok := w.token(t, cm); !strings.HasPrefix(string(tok.Data[oauth.KeyRefreshToken]), "1//") {
			t.Fatal("no grant after the manager ran")
		}
	})

	t.Run("a handover of another shard's resource is left to that shard's manager", func(t *testing.T) {
		ns, err := w.env.Namespace("shard")
		if err != nil {
			t.Fatal(err)
		}
		hook := w.serve(t, ns, 200*time.Millisecond)
		cm, _ := w.resource(t, "test-google", "google-client", "google-secret") // unlabelled: the main manager's
		if _, st, body := connectThrough(t, w.mintOn(t, cm, "test-google", hook)); st != http.StatusAccepted {
			t.Fatalf("callback answered %d:\n%s", st, body)
		}
		var handovers corev1.SecretList
		if err := w.env.Client.List(ctx, &handovers, client.InNamespace(ns), client.HasLabels{oauth.HandoverLabel}); err != nil || len(handovers.Items) != 1 {
			t.Fatalf("%d handovers, %v", len(handovers.Items), err)
		}
		key := client.ObjectKeyFromObject(&handovers.Items[0])
		// shard1's manager sees the handover (Secrets are not sharded) and
		// leaves it: one code is exchanged once, by the resource's own.
		shard1 := &oauth.Receiver{Client: w.env.Client, Reader: w.env.Client, Targets: w.targets, Namespace: ns,
			Engine: setup.Engine(w.env, w.out),
			Shard:  labels.SelectorFromSet(labels.Set{v1alpha1.ShardLabel: "shard1"})}
		if res, err := shard1.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil || res != (reconcile.Result{}) {
			t.Fatalf("shard1's receiver: %+v, %v", res, err)
		}
		var ho corev1.Secret
		if err := w.env.Client.Get(ctx, key, &ho); err != nil || len(ho.Data["code"]) == 0 || len(ho.Data["outcome"]) != 0 {
			t.Fatalf("shard1's receiver touched the handover (%v): outcome %q", err, ho.Data["outcome"])
		}
		if err := w.env.Client.Get(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: "token"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Fatalf("shard1's receiver wrote a grant: %v", err)
		}
		// The main manager, whose selector takes the unlabelled resource.
		w.receive(t, ns)
		testenv.Eventually(t, "the main manager's receiver to receive the handover", func() bool {
			err := w.env.Client.Get(ctx, key, &ho)
			return err == nil && string(ho.Data["outcome"]) == string(oauth.Connected)
		})
	})
}
