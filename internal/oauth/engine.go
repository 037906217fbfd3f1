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

package oauth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/clocks"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// ErrReauthRequired means the provider refused the grant for good (401,
// invalid_client, or invalid_grant that no other writer explains): a person
// must connect again. The token Secret is kept (seed 000 §3.7.6).
var ErrReauthRequired = errors.New("the provider refused the grant; connect again")

// ErrNotConnected is a grant never stored: the token Secret does not
// exist, because no person has connected yet. It is an ErrReauthRequired
// (a person connects, and nothing refreshes until then), but nothing was
// refused, so it says so: errors.Is(err, ErrReauthRequired) holds for it.
var ErrNotConnected error = notConnected{}

type notConnected struct{}

func (notConnected) Error() string        { return "no grant is stored yet: open the connect link" }
func (notConnected) Is(target error) bool { return target == ErrReauthRequired }

// Engine refreshes and exchanges tokens for every provider.
type Engine struct {
	Store *Store
	Out   *outbound.Client
	Clock clock.PassiveClock
	// Identity names this process in the refresh lock (RefreshLockAnnotation)
	// for people reading the Secret; the hostname (a pod's name) when empty.
	Identity string
	// LockTTL is how long a refresh lock holds (DefaultLockTTL when zero).
	LockTTL time.Duration
	// Limits remembers the providers' rate limits, so that no token call
	// is sent into one (a memory of the engine's own when nil).
	Limits *RateLimits

	limitsOnce sync.Once

	flights singleflight.Group
	// beforeCall runs just before a refresh call (tests use it to play a
	// concurrent writer).
	beforeCall func()
	// onLockWait runs each time a refresh waits for another writer's lock
	// (tests use it to know a second replica is waiting).
	onLockWait func()
}

// limitWait is how long p's token endpoint must not be called (0 for a
// provider whose limits are not remembered).
func (e *Engine) limitWait(p Provider) time.Duration {
	if !p.RememberRateLimits {
		return 0
	}
	return e.RateLimits().Wait(p.TokenUpstream, p.TokenPath)
}

// RateLimits is the rate-limit memory of the engine's token calls, which
// other calls to the same provider (Discord's GET /users/@me) share.
func (e *Engine) RateLimits() *RateLimits {
	e.limitsOnce.Do(func() {
		if e.Limits == nil {
			e.Limits = &RateLimits{Clock: e.Clock}
		}
	})
	return e.Limits
}

func (e *Engine) now() time.Time {
	return clocks.Now(e.Clock)
}

// MinRefreshInterval is the least time between a token's issue and its
// refresh, whatever its life and margin say (RefreshAt).
const MinRefreshInterval = 30 * time.Second

// RefreshAt is when a token falls due: margin before it expires, but never
// before half its life has passed, nor within MinRefreshInterval of its
// issue, and never after it expires. A margin as long as the token's life
// (Google's lifetime is the account's and the provider's to set, and a
// SheetConnection's margin is 6 minutes with its lead) used to make a
// fresh token due at once, so every reconcile refreshed it again: a
// refresh and a Secret write every few seconds. Half the life keeps the
// other half for the retries a refused or throttled refresh takes before
// the token runs out; margins shorter than half the life (Google's 1 h
// tokens with 6 minutes, Notion's assumed 7 days with a day) are
// unchanged. A token whose issue is not known (stored before it was
// kept) falls due by the margin alone, once: its refresh records it.
func RefreshAt(t Token, margin time.Duration) time.Time {
	at := t.Expiry.Add(-margin)
	if t.Issued.IsZero() || !t.Issued.Before(t.Expiry) {
		return at
	}
	half := t.Issued.Add(t.Expiry.Sub(t.Issued) / 2)
	floor := t.Issued.Add(MinRefreshInterval)
	return minTime(maxTime(at, half, floor), t.Expiry)
}

func maxTime(first time.Time, rest ...time.Time) time.Time {
	for _, t := range rest {
		if t.After(first) {
			first = t
		}
	}
	return first
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Due reports whether a token should be refreshed: its RefreshAt has come,
// or no expiry is known.
func (e *Engine) Due(t Token, margin time.Duration) bool {
	return t.Expiry.IsZero() || !e.now().Before(RefreshAt(t, margin))
}

// Ensure returns the grant in tokenKey, refreshed first when less than
// margin remains or when force is set. Concurrent calls for one Secret
// share one refresh: in one process by singleflight, across processes by
// the refresh lock on the Secret (lock.go).
func (e *Engine) Ensure(ctx context.Context, p Provider, clientKey, tokenKey types.NamespacedName, margin time.Duration, force bool) (Token, error) {
	if !force {
		st, err := e.Store.load(ctx, tokenKey)
		if err != nil {
			return Token{}, err
		}
		if st.exists && st.AccessToken != "" && !e.Due(st.Token, margin) {
			return st.Token, nil
		}
		if !st.exists || st.RefreshToken == "" {
			// Nothing to refresh with: said without reading the Secret
			// again in the flight (an object waiting to be connected
			// comes here at every reconcile).
			return Token{}, noRefreshToken(p, tokenKey, st.exists)
		}
	}
	v, err, _ := e.flights.Do(tokenKey.String(), func() (any, error) {
		return e.refresh(ctx, p, clientKey, tokenKey, margin, force)
	})
	if err != nil {
		return Token{}, err
	}
	return v.(Token), nil
}

// noRefreshToken is the error of a grant never stored (no token Secret:
// ErrNotConnected), or stored without a refresh token: a person connects
// (again).
func noRefreshToken(p Provider, tokenKey types.NamespacedName, stored bool) error {
	if !stored {
		return fmt.Errorf("%s grant in Secret %s: %w", p.Name, tokenKey, ErrNotConnected)
	}
	return fmt.Errorf("%s grant in Secret %s has no refresh token: %w", p.Name, tokenKey, ErrReauthRequired)
}

func (e *Engine) refresh(ctx context.Context, p Provider, clientKey, tokenKey types.NamespacedName, margin time.Duration, force bool) (Token, error) {
	st, err := e.Store.load(ctx, tokenKey)
	if err != nil {
		return Token{}, err
	}
	if !st.exists || st.RefreshToken == "" {
		return Token{}, noRefreshToken(p, tokenKey, st.exists)
	}
	if !force && st.AccessToken != "" && !e.Due(st.Token, margin) {
		return st.Token, nil // refreshed by the flight before ours
	}
	// A limit the provider set is waited out, not hit again: no lock is
	// taken, no request sent.
	if wait := e.limitWait(p); wait > 0 {
		return Token{}, fmt.Errorf("refresh %s grant in Secret %s: %w", p.Name, tokenKey, RateLimited(p.TokenUpstream, p.TokenPath, wait, false))
	}
	holder := e.newHolder()
	st, fresh, err := e.acquire(ctx, tokenKey, st, holder, margin, force)
	if err != nil {
		return Token{}, err
	}
	if fresh != nil {
		return *fresh, nil // another process refreshed while we waited
	}
	creds, err := e.Store.LoadClient(ctx, clientKey)
	if err != nil {
		e.release(ctx, tokenKey, st, holder)
		return Token{}, err
	}
	if e.beforeCall != nil {
		e.beforeCall()
	}
	resp, err := e.call(ctx, p, creds, map[string]string{"grant_type": "refresh_token", "refresh_token": st.RefreshToken})
	if err != nil {
		e.release(ctx, tokenKey, st, holder)
	}
	switch {
	case errors.Is(err, errInvalidGrant):
		// Another writer may have rotated the pair after we read it: its
		// newer refresh token explains the refusal.
		now, lerr := e.Store.load(ctx, tokenKey)
		if lerr == nil && now.RefreshToken != "" && now.RefreshToken != st.RefreshToken {
			return now.Token, nil
		}
		return Token{}, fmt.Errorf("refresh %s grant in Secret %s: %w", p.Name, tokenKey, ErrReauthRequired)
	case err != nil:
		return Token{}, fmt.Errorf("refresh %s grant in Secret %s: %w", p.Name, tokenKey, err)
	}
	return e.storeRefreshed(ctx, p, tokenKey, st, holder, resp)
}

// storeRefreshed writes the pair a refresh call returned (resp) over the
// grant st that was read under holder's lock, in one update that frees the
// lock. A conflict with another writer is read again: a newer grant wins,
// other changed keys are kept.
func (e *Engine) storeRefreshed(ctx context.Context, p Provider, tokenKey types.NamespacedName, st stored, holder string, resp tokenResponse) (Token, error) {
	next := e.tokenFrom(p, resp, st.Token)
	for {
		// One update stores the new pair and frees the lock.
		err := e.Store.write(ctx, tokenKey, next, st, withoutLock(st.annotations))
		if err == nil {
			next.Refreshed = true
			recordRefreshed(ctx, p, tokenKey)
			return next, nil
		}
		if !apierrors.IsConflict(err) {
			// The provider rotated and we could not keep the new pair: the
			// grant may be lost, and saying so beats hiding it.
			return Token{}, fmt.Errorf("persist refreshed %s grant in Secret %s: %w", p.Name, tokenKey, err)
		}
		cur, lerr := e.Store.load(ctx, tokenKey)
		if lerr != nil {
			return Token{}, lerr
		}
		if cur.RefreshToken != st.RefreshToken {
			e.release(ctx, tokenKey, cur, holder)
			return cur.Token, nil // a newer grant was written (a new OAuth callback)
		}
		// Only other keys changed (a session's last_seen_at): write our pair
		// over them, keeping what they wrote.
		st = cur
		next = e.tokenFrom(p, resp, st.Token)
	}
}

// recordRefreshed records a refreshed grant saved in tokenKey, once per
// save, on the audit record: about the resource the caller named
// (audit.WithSubject: a grant phase names its object), else the token
// Secret itself (a Discord sign-in session's, or a refresh a batch of a
// connection's children made).
func recordRefreshed(ctx context.Context, p Provider, tokenKey types.NamespacedName) {
	s, ok := audit.SubjectFrom(ctx)
	if !ok {
		s = audit.Subject{Kind: "Secret", Namespace: tokenKey.Namespace, Name: tokenKey.Name}
	}
	audit.Record(ctx, audit.Fact{Fact: audit.OAuthRefreshed, Kind: s.Kind, Namespace: s.Namespace, Name: s.Name,
		Provider: p.Name, TokenSecret: tokenKey.Name})
}

// Exchange trades an authorization code for a grant (the OAuth callback).
func (e *Engine) Exchange(ctx context.Context, p Provider, creds ClientCredentials, code, redirectURI, verifier string) (Token, error) {
	params := map[string]string{"grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI}
	if verifier != "" {
		params["code_verifier"] = verifier
	}
	if wait := e.limitWait(p); wait > 0 {
		// Not sent: the code stays unspent for a retry after the limit.
		return Token{}, fmt.Errorf("exchange %s code: %w", p.Name, RateLimited(p.TokenUpstream, p.TokenPath, wait, false))
	}
	resp, err := e.call(ctx, p, creds, params)
	if errors.Is(err, errInvalidGrant) {
		return Token{}, fmt.Errorf("exchange %s code: %w", p.Name, ErrReauthRequired)
	}
	if err != nil {
		return Token{}, fmt.Errorf("exchange %s code: %w", p.Name, err)
	}
	t := e.tokenFrom(p, resp, Token{})
	t.Extra[KeyGrantedAt] = e.now().UTC().Format(time.RFC3339Nano)
	return t, nil
}

// Disconnect revokes the grant in tokenKey at the provider's revocation
// endpoint (its refresh token, which takes the access tokens with it) and
// then deletes the Secret. A missing Secret, and a token the provider no
// longer knows (RFC 7009 §2.2: invalid tokens are not an error), are
// success; a provider without a revocation endpoint only loses the Secret.
func (e *Engine) Disconnect(ctx context.Context, p Provider, clientKey, tokenKey types.NamespacedName) error {
	t, ok, err := e.Store.Load(ctx, tokenKey)
	if err != nil || !ok {
		return err
	}
	tok, hint := t.RefreshToken, "refresh_token"
	if tok == "" {
		tok, hint = t.AccessToken, "access_token"
	}
	if p.RevokePath != "" && tok != "" {
		header := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
		if p.RevokeWithClient {
			creds, err := e.Store.LoadClient(ctx, clientKey)
			if err != nil {
				return err
			}
			header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(creds.ID+":"+creds.Secret)))
		}
		body := url.Values{"token": {tok}, "token_type_hint": {hint}}.Encode()
		_, err := e.Out.Do(ctx, outbound.Request{
			Upstream: p.TokenUpstream, Method: http.MethodPost, Path: p.RevokePath,
			Body: strings.NewReader(body), Header: header,
		})
		if oe, ok := outbound.Classify(err); ok && oe.Status == http.StatusBadRequest {
			err = nil // invalid_token: revoked already, or expired
		}
		if err != nil {
			return fmt.Errorf("revoke %s grant in Secret %s: %w", p.Name, tokenKey, err)
		}
	}
	return e.Store.Forget(ctx, tokenKey, t)
}

// tokenFrom builds the new grant; a provider that does not rotate (Google)
// keeps the old refresh token.
func (e *Engine) tokenFrom(p Provider, r tokenResponse, old Token) Token {
	t := Token{AccessToken: r.AccessToken, RefreshToken: r.RefreshToken, TokenType: r.TokenType, Extra: map[string]string{},
		ReconnectedFor: old.ReconnectedFor}
	if t.RefreshToken == "" {
		t.RefreshToken = old.RefreshToken
	}
	life := p.AssumedLifetime
	if r.ExpiresIn > 0 {
		life = time.Duration(r.ExpiresIn) * time.Second
	}
	t.Issued = e.now().Truncate(time.Second)
	t.Expiry = t.Issued.Add(life)
	for k, v := range old.Extra {
		t.Extra[k] = v
	}
	for k, v := range r.Extra {
		t.Extra[k] = v
	}
	return t
}
