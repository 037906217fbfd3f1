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

package session_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/contract/session"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// The session store on the real API server, its grants refreshed at the
// sandbox's Discord emulator.

var (
	env     *testenv.Env
	box     *sandbox.Server
	discord = sandbox.NewDiscord()
	out     *outbound.Client
	nelly   = session.User{ID: "80351110224678912", Username: "nelly", Avatar: "8342729096ea3675442027381ff50dfe"}
)

const (
	clientID     = "1234567890"
	clientSecret = "discord-secret"
)

func TestMain(m *testing.M) {
	testenv.Main(m, &env, func(*testenv.Env) (func(), error) {
		discord.AddClient(clientID, clientSecret)
		box = sandbox.New(discord)
		srv := httptest.NewServer(box)
		var err error
		out, err = outbound.New(sandbox.Upstreams(srv.URL), outbound.Options{Timeout: 2 * time.Second})
		return srv.Close, err
	})
}

// countingWriter counts the patches the API server accepted: the touches
// of last_seen_at.
type countingWriter struct {
	client.Client
	patches atomic.Int32
}

func (w *countingWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	err := w.Client.Patch(ctx, obj, patch, opts...)
	if err == nil {
		w.patches.Add(1)
	}
	return err
}

// newStore is a webhook replica's session store in a fresh namespace, with
// the Discord client Secret beside the sessions.
func newStore(t *testing.T, clk *clocktesting.FakeClock) *session.Store {
	t.Helper()
	ns, err := env.Namespace("sessions")
	if err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "discord-client"}
	if err := env.Client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns},
		StringData: map[string]string{oauth.KeyClientID: clientID, oauth.KeyClientSecret: clientSecret}}); err != nil {
		t.Fatal(err)
	}
	return replicaOf(&session.Store{Namespace: ns, ClientKey: key}, clk)
}

// replicaOf is another webhook replica on the same sessions: its own
// engine, so its own singleflight; only the API server is shared. A nil
// clk is the wall clock.
func replicaOf(s *session.Store, clk *clocktesting.FakeClock) *session.Store {
	w := &countingWriter{Client: env.Client}
	r := &session.Store{Reader: env.Client, Writer: w, Namespace: s.Namespace, ClientKey: s.ClientKey,
		Provider: oauth.Discord.WithScopes("identify"),
		Engine:   &oauth.Engine{Store: &oauth.Store{Reader: env.Client, Writer: w}, Out: out},
	}
	if clk != nil {
		r.Clock, r.Engine.Clock = clk, clk
	}
	return r
}

func patches(s *session.Store) int { return int(s.Writer.(*countingWriter).patches.Load()) }

// grant is a Discord grant the emulator knows, whose access token ends at
// expiry.
func grant(u session.User, expiry time.Time) oauth.Token {
	rt := discord.IssueRefreshToken(clientID, "identify", sandbox.DiscordUser{ID: u.ID, Username: u.Username})
	return oauth.Token{AccessToken: "access-" + rt[:8], RefreshToken: rt, TokenType: "Bearer", Expiry: expiry,
		Extra: map[string]string{oauth.KeyScope: "identify"}}
}

func sessionSecret(t *testing.T, s *session.Store, sid string) (*corev1.Secret, bool) {
	t.Helper()
	var sec corev1.Secret
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: s.Namespace, Name: session.SecretName(sid)}, &sec)
	if err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, false
		}
		t.Fatal(err)
	}
	return &sec, true
}
