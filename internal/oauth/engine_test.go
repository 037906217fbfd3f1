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
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

var (
	env    *testenv.Env
	box    *sandbox.Server
	notion = sandbox.NewNotion()
	google = sandbox.NewGoogleOAuth()
	out    *outbound.Client
	ws     = sandbox.NotionWorkspace{ID: "4f2d7d0e-0000-4000-8000-000000000001", Name: "Research", BotID: "b0b0b0b0-0000-4000-8000-000000000001"}
)

func TestMain(m *testing.M) {
	testenv.Main(m, &env, func(*testenv.Env) (func(), error) {
		notion.AddClient("notion-client", "notion-secret")
		google.AddClient("google-client", "google-secret")
		box = sandbox.New(notion, google)
		srv := httptest.NewServer(box)
		ups := sandbox.Upstreams(srv.URL)
		var err error
		out, err = outbound.New(ups, outbound.Options{Timeout: 2 * time.Second})
		return srv.Close, err
	})
}

// fixture is one namespace with a client Secret and a token Secret.
type fixture struct {
	engine    *oauth.Engine
	clientKey types.NamespacedName
	tokenKey  types.NamespacedName
}

func newFixture(t *testing.T, clientID, clientSecret string, tok oauth.Token) *fixture {
	t.Helper()
	ctx := context.Background()
	ns, err := env.Namespace("oauth")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{clientKey: types.NamespacedName{Namespace: ns, Name: "client"}, tokenKey: types.NamespacedName{Namespace: ns, Name: "token"}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "client", Namespace: ns},
		StringData: map[string]string{"client_id": clientID, "client_secret": clientSecret}}
	if err := env.Client.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	store := &oauth.Store{Reader: env.Client, Writer: env.Client}
	if err := store.Save(ctx, f.tokenKey, tok); err != nil {
		t.Fatal(err)
	}
	f.engine = &oauth.Engine{Store: store, Out: out}
	return f
}

func (f *fixture) stored(t *testing.T) oauth.Token {
	t.Helper()
	tok, ok, err := f.engine.Store.Load(context.Background(), f.tokenKey)
	if err != nil || !ok {
		t.Fatalf("load: %v %v", ok, err)
	}
	return tok
}

func notionGrant(t *testing.T) (*fixture, string) {
	t.Helper()
	rt := notion.IssueRefreshToken("notion-client", ws)
	return newFixture(t, "notion-client", "notion-secret", oauth.Token{RefreshToken: rt, AccessToken: "ntn_old"}), rt
}

func TestNotionRotationPersistsTheNewPairAndKillsTheOld(t *testing.T) {
	box.ResetCalls()
	f, old := notionGrant(t)
	before := time.Now()
	tok, err := f.engine.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, 24*time.Hour, false)
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken == old || !strings.HasPrefix(tok.RefreshToken, "nrt_") || !notion.ValidAccessToken(tok.AccessToken) {
		t.Fatalf("token %+v", tok)
	}
	// Notion states no expiry: 7 days are assumed (seed 000 §3.7.4).
	if d := tok.Expiry.Sub(before); d < 7*24*time.Hour-time.Minute || d > 7*24*time.Hour+time.Minute {
		t.Fatalf("expiry in %s, want 7 days", d)
	}
	got := f.stored(t)
	if got.AccessToken != tok.AccessToken || got.RefreshToken != tok.RefreshToken || got.Extra["workspace_id"] != ws.ID || got.Extra["bot_id"] != ws.BotID {
		t.Fatalf("Secret holds %+v", got)
	}
	// The old refresh token is dead at the provider.
	stale := newFixture(t, "notion-client", "notion-secret", oauth.Token{RefreshToken: old})
	if _, err := stale.engine.Ensure(context.Background(), oauth.Notion, stale.clientKey, stale.tokenKey, time.Hour, true); !errors.Is(err, oauth.ErrReauthRequired) {
		t.Fatalf("old refresh token: %v, want ErrReauthRequired", err)
	}
	if n := box.Calls(sandbox.NotionOAuthToken); n != 2 {
		t.Fatalf("token endpoint calls = %d, want 2", n)
	}
}

func TestATokenThatIsNotDueIsNotRefreshed(t *testing.T) {
	box.ResetCalls()
	f := newFixture(t, "notion-client", "notion-secret", oauth.Token{RefreshToken: "nrt_x", AccessToken: "ntn_x", Expiry: time.Now().Add(48 * time.Hour)})
	tok, err := f.engine.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, 24*time.Hour, false)
	if err != nil || tok.AccessToken != "ntn_x" || box.Calls(sandbox.NotionOAuthToken) != 0 {
		t.Fatalf("token %q, err %v, calls %d", tok.AccessToken, err, box.Calls(sandbox.NotionOAuthToken))
	}
}

// counting is a reader that counts the Secrets it reads.
type counting struct {
	client.Reader
	mu    sync.Mutex
	reads int
}

func (c *counting) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.Reader.Get(ctx, key, obj, opts...)
}

func TestAGrantNeverStoredOrWithoutARefreshTokenIsOneReadAndNoCall(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tok   *oauth.Token
		force bool
		// want is what the error says beside ErrReauthRequired.
		want         string
		notConnected bool
	}{
		{name: "no token Secret", want: "no grant is stored yet", notConnected: true},
		{name: "no token Secret, asked", force: true, want: "no grant is stored yet", notConnected: true},
		{name: "an expired access token and no refresh token", tok: &oauth.Token{AccessToken: "ntn_x", Expiry: time.Now().Add(-time.Hour)},
			want: "has no refresh token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			box.ResetCalls()
			f := newFixture(t, "notion-client", "notion-secret", oauth.Token{RefreshToken: "nrt_unused"})
			if tc.tok == nil {
				if err := env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: f.tokenKey.Name, Namespace: f.tokenKey.Namespace}}); err != nil {
					t.Fatal(err)
				}
			} else if err := f.engine.Store.Save(context.Background(), f.tokenKey, *tc.tok); err != nil {
				t.Fatal(err)
			}
			reader := &counting{Reader: env.Client}
			f.engine.Store.Reader = reader
			_, err := f.engine.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, time.Hour, tc.force)
			if !errors.Is(err, oauth.ErrReauthRequired) || !strings.Contains(err.Error(), tc.want) ||
				errors.Is(err, oauth.ErrNotConnected) != tc.notConnected {
				t.Fatalf("Ensure: %v, want ErrReauthRequired saying %q (ErrNotConnected: %v)", err, tc.want, tc.notConnected)
			}
			if tc.notConnected && strings.Contains(err.Error(), "refused") {
				t.Fatalf("Ensure: %v: a grant never stored was not refused", err)
			}
			if reader.reads != 1 || box.Calls(sandbox.NotionOAuthToken) != 0 {
				t.Fatalf("%d Secret reads and %d token calls, want 1 and 0", reader.reads, box.Calls(sandbox.NotionOAuthToken))
			}
		})
	}
}

func TestEightConcurrentRefreshesMakeOneCall(t *testing.T) {
	box.ResetCalls()
	f, _ := notionGrant(t)
	var wg sync.WaitGroup
	results := make([]oauth.Token, 8)
	errs := make([]error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = f.engine.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, 24*time.Hour, false)
		}()
	}
	wg.Wait()
	for i := range 8 {
		if errs[i] != nil || results[i].AccessToken != results[0].AccessToken {
			t.Fatalf("caller %d: %v, token differs: %v", i, errs[i], results[i].AccessToken != results[0].AccessToken)
		}
	}
	if n := box.Calls(sandbox.NotionOAuthToken); n != 1 {
		t.Fatalf("token endpoint calls = %d, want 1", n)
	}
}

func TestInvalidGrantExplainedByAnotherWriterIsNotReauth(t *testing.T) {
	f, old := notionGrant(t)
	other := newFixture(t, "notion-client", "notion-secret", oauth.Token{RefreshToken: old})
	var theirs oauth.Token
	// Just before our call, another writer rotates the pair and stores it.
	f.engine.SetBeforeCall(func() {
		tok, err := other.engine.Ensure(context.Background(), oauth.Notion, other.clientKey, other.tokenKey, time.Hour, true)
		if err != nil {
			t.Errorf("other writer: %v", err)
			return
		}
		theirs = tok
		if err := f.engine.Store.Save(context.Background(), f.tokenKey, tok); err != nil {
			t.Errorf("other writer save: %v", err)
		}
	})
	tok, err := f.engine.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, time.Hour, true)
	if err != nil {
		t.Fatalf("got %v, want the other writer's grant", err)
	}
	if tok.RefreshToken != theirs.RefreshToken || f.stored(t).RefreshToken != theirs.RefreshToken {
		t.Fatal("the other writer's newer pair was not used")
	}
}

func TestInvalidGrantAloneNeedsReauthAndKeepsTheSecret(t *testing.T) {
	f := newFixture(t, "notion-client", "notion-secret", oauth.Token{RefreshToken: "nrt_revoked", AccessToken: "ntn_kept"})
	_, err := f.engine.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, time.Hour, true)
	if !errors.Is(err, oauth.ErrReauthRequired) {
		t.Fatalf("got %v, want ErrReauthRequired", err)
	}
	if strings.Contains(err.Error(), "nrt_revoked") {
		t.Fatal("a refresh token reached an error message")
	}
	if got := f.stored(t); got.RefreshToken != "nrt_revoked" || got.AccessToken != "ntn_kept" {
		t.Fatalf("Secret changed: %+v", got)
	}
}

// Notion refuses a grant in its own error object ({"object": "error",
// "code": "invalid_grant"}, developers.notion.com/reference/status-codes)
// and, as integrators report, in RFC 6749's {"error": "invalid_grant"}:
// either is a grant to connect again, for a refresh and for a code.
func TestInvalidGrantInEitherShapeNeedsReauth(t *testing.T) {
	defer notion.SetRFC6749Errors(false)
	for name, rfc := range map[string]bool{"in Notion's error object": false, "in RFC 6749's shape": true} {
		t.Run(name, func(t *testing.T) {
			notion.SetRFC6749Errors(rfc)
			f := newFixture(t, "notion-client", "notion-secret", oauth.Token{RefreshToken: "nrt_revoked", AccessToken: "ntn_kept"})
			if _, err := f.engine.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, time.Hour, true); !errors.Is(err, oauth.ErrReauthRequired) {
				t.Fatalf("refresh: got %v, want ErrReauthRequired", err)
			}
			creds := oauth.ClientCredentials{ID: "notion-client", Secret: "notion-secret"}
			if _, err := f.engine.Exchange(context.Background(), oauth.Notion, creds, "no-such-code", "https://hooks.example.com/cb", ""); !errors.Is(err, oauth.ErrReauthRequired) {
				t.Fatalf("exchange: got %v, want ErrReauthRequired", err)
			}
		})
	}
}

func TestUnauthorizedClientNeedsReauth(t *testing.T) {
	box.ResetCalls()
	rt := notion.IssueRefreshToken("notion-client", ws)
	f := newFixture(t, "notion-client", "wrong-secret", oauth.Token{RefreshToken: rt})
	_, err := f.engine.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, time.Hour, true)
	if !errors.Is(err, oauth.ErrReauthRequired) || box.Calls(sandbox.NotionOAuthToken) != 1 {
		t.Fatalf("got %v after %d calls, want ErrReauthRequired after 1 (401, seed 000 §3.7.6)", err, box.Calls(sandbox.NotionOAuthToken))
	}
	if strings.Contains(err.Error(), "wrong-secret") {
		t.Fatal("a client secret reached an error message")
	}
}

func TestRateLimitIsOneCallAndATransientErrorCarryingRetryAfter(t *testing.T) {
	// The seed's 1, 2, 4 s retries (§3.7.6) are the controller's requeues,
	// not waits inside the engine: a worker is never held.
	defer box.ClearFaults()
	box.ResetCalls()
	f, rt := notionGrant(t)
	box.SetFault(sandbox.NotionOAuthToken, sandbox.Fault{Status: 429, RetryAfter: "7", Body: `{"object":"error","status":429,"code":"rate_limited"}`})
	_, err := f.engine.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, time.Hour, true)
	if err == nil || errors.Is(err, oauth.ErrReauthRequired) || !outbound.IsTransient(err) {
		t.Fatalf("got %v, want a transient error", err)
	}
	if got := outbound.RetryAfterOf(err); got != 7*time.Second {
		t.Fatalf("Retry-After %v, want 7s", got)
	}
	if n := box.Calls(sandbox.NotionOAuthToken); n != 1 {
		t.Fatalf("%d token calls, want 1", n)
	}
	if f.stored(t).RefreshToken != rt {
		t.Fatal("the Secret changed")
	}
	box.ClearFaults()
	if _, err := f.engine.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, time.Hour, true); err != nil {
		t.Fatalf("the retry the controller makes: %v", err)
	}
}

func TestServiceUnavailableWaitsForTheNextTimer(t *testing.T) {
	defer box.ClearFaults()
	box.ResetCalls()
	f, rt := notionGrant(t)
	box.SetFault(sandbox.NotionOAuthToken, sandbox.Fault{Status: 503})
	_, err := f.engine.Ensure(context.Background(), oauth.Notion, f.clientKey, f.tokenKey, time.Hour, true)
	if !outbound.IsTransient(err) || errors.Is(err, oauth.ErrReauthRequired) {
		t.Fatalf("got %v, want a transient error", err)
	}
	if box.Calls(sandbox.NotionOAuthToken) != 1 || f.stored(t).RefreshToken != rt {
		t.Fatal("503 was retried in place or changed the Secret (seed 000 §3.7.6: next timer)")
	}
}

func TestGoogleThroughTheOAuth2Library(t *testing.T) {
	box.ResetCalls()
	rt := google.IssueRefreshToken("google-client", "https://www.googleapis.com/auth/spreadsheets")
	f := newFixture(t, "google-client", "google-secret", oauth.Token{RefreshToken: rt})
	before := time.Now()
	// Five minutes' margin, as seed 004 §5 asks for Google.
	tok, err := f.engine.Ensure(context.Background(), oauth.Google, f.clientKey, f.tokenKey, 5*time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := google.ValidAccessToken(tok.AccessToken); !ok || tok.RefreshToken != rt {
		t.Fatalf("token %+v: Google does not rotate, the refresh token must be kept", tok)
	}
	if d := tok.Expiry.Sub(before); d < 3590*time.Second || d > 3600*time.Second {
		t.Fatalf("expiry in %s, want Google's 3599 s", d)
	}
	// Not due again for almost an hour.
	if _, err := f.engine.Ensure(context.Background(), oauth.Google, f.clientKey, f.tokenKey, 5*time.Minute, false); err != nil || box.Calls(sandbox.GoogleOAuthToken) != 1 {
		t.Fatalf("second Ensure: %v, calls %d", err, box.Calls(sandbox.GoogleOAuthToken))
	}
	google.Revoke(rt)
	if _, err := f.engine.Ensure(context.Background(), oauth.Google, f.clientKey, f.tokenKey, 5*time.Minute, true); !errors.Is(err, oauth.ErrReauthRequired) {
		t.Fatalf("revoked grant: %v", err)
	}
	if n := box.Calls(sandbox.GoogleOAuthToken); n != 2 {
		t.Fatalf("calls = %d, want 2 (no double send from auth-style auto-detection)", n)
	}
}

func TestAFormEncodedProviderIsConfigurationOnly(t *testing.T) {
	// A provider like Discord (form body, the engine's own call) works by
	// configuration; here it is pointed at the Google emulator's endpoint.
	p := oauth.Discord
	p.TokenUpstream, p.TokenPath = upstream.GoogleOAuth, "/token"
	rt := google.IssueRefreshToken("google-client", "identify")
	f := newFixture(t, "google-client", "google-secret", oauth.Token{RefreshToken: rt})
	tok, err := f.engine.Ensure(context.Background(), p, f.clientKey, f.tokenKey, time.Minute, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := google.ValidAccessToken(tok.AccessToken); !ok {
		t.Fatal("access token not issued")
	}
}

func TestExchangeACode(t *testing.T) {
	code := notion.IssueCode("notion-client", "https://hooks.example.com/oauth/notion/callback", ws)
	e := &oauth.Engine{Out: out}
	creds := oauth.ClientCredentials{ID: "notion-client", Secret: "notion-secret"}
	tok, err := e.Exchange(context.Background(), oauth.Notion, creds, code, "https://hooks.example.com/oauth/notion/callback", "")
	if err != nil || tok.Extra["workspace_name"] != "Research" || tok.RefreshToken == "" {
		t.Fatalf("exchange: %+v %v", tok, err)
	}
	// Codes are usable once; a bad code is an auth failure (seed 000 §3.1.2: 401).
	if _, err := e.Exchange(context.Background(), oauth.Notion, creds, code, "https://hooks.example.com/oauth/notion/callback", ""); !errors.Is(err, oauth.ErrReauthRequired) {
		t.Fatalf("reused code: %v", err)
	}
}

// With the openid scope Google's token answer carries an id_token; its sub
// is kept with the grant (seed 004 googleUserId), through refreshes.
func TestTheGoogleAccountOfAGrantIsKept(t *testing.T) {
	rt := google.IssueRefreshTokenFor("google-client", "openid https://www.googleapis.com/auth/spreadsheets", "104857600000000000001")
	f := newFixture(t, "google-client", "google-secret", oauth.Token{RefreshToken: rt, Extra: map[string]string{oauth.KeyGrantedAt: "2026-11-22T00:00:00Z"}})
	tok, err := f.engine.Ensure(context.Background(), oauth.Google, f.clientKey, f.tokenKey, 5*time.Minute, true)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Extra[oauth.KeySubject] != "104857600000000000001" || f.stored(t).Extra[oauth.KeySubject] != "104857600000000000001" {
		t.Fatalf("sub %q", tok.Extra[oauth.KeySubject])
	}
	if tok.Extra[oauth.KeyGrantedAt] != "2026-11-22T00:00:00Z" {
		t.Fatal("a refresh lost when the grant was made")
	}
}

// Disconnect revokes at Google's revocation endpoint and forgets the
// grant; a second Disconnect, and one of a grant Google no longer knows,
// are no-ops.
func TestDisconnectRevokesAtTheProviderAndForgetsTheGrant(t *testing.T) {
	rt := google.IssueRefreshToken("google-client", "https://www.googleapis.com/auth/spreadsheets")
	f := newFixture(t, "google-client", "google-secret", oauth.Token{RefreshToken: rt})
	calls := box.Calls(sandbox.GoogleOAuthRevoke)
	if err := f.engine.Disconnect(context.Background(), oauth.Google, f.clientKey, f.tokenKey); err != nil {
		t.Fatal(err)
	}
	if box.Calls(sandbox.GoogleOAuthRevoke) != calls+1 {
		t.Fatal("the revocation endpoint was not called")
	}
	if _, ok, _ := f.engine.Store.Load(context.Background(), f.tokenKey); ok {
		t.Fatal("the token Secret is still there")
	}
	// The refresh token is dead at Google.
	again := newFixture(t, "google-client", "google-secret", oauth.Token{RefreshToken: rt})
	if _, err := again.engine.Ensure(context.Background(), oauth.Google, again.clientKey, again.tokenKey, time.Minute, true); !errors.Is(err, oauth.ErrReauthRequired) {
		t.Fatalf("the revoked refresh token still works: %v", err)
	}
	// Google answers 400 invalid_token for it now: still success, and the
	// Secret goes.
	if err := again.engine.Disconnect(context.Background(), oauth.Google, again.clientKey, again.tokenKey); err != nil {
		t.Fatal(err)
	}
	if err := again.engine.Disconnect(context.Background(), oauth.Google, again.clientKey, again.tokenKey); err != nil {
		t.Fatalf("a second disconnect: %v", err)
	}
	// An outage is an error, and the grant is kept for the next try.
	third := newFixture(t, "google-client", "google-secret", oauth.Token{RefreshToken: google.IssueRefreshToken("google-client", "x")})
	box.SetFault(sandbox.GoogleOAuthRevoke, sandbox.Fault{Status: http.StatusServiceUnavailable, Times: 1})
	if err := third.engine.Disconnect(context.Background(), oauth.Google, third.clientKey, third.tokenKey); err == nil || !outbound.IsTransient(err) {
		t.Fatalf("an outage: %v", err)
	}
	if _, ok, _ := third.engine.Store.Load(context.Background(), third.tokenKey); !ok {
		t.Fatal("the grant was forgotten although Google did not revoke it")
	}
}
