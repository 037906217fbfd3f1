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

// Package session keeps the sessions of receivers who signed in with
// Discord (seed 003 sess:{sid} and user:{uid}:sessions). A session is a
// Secret in one namespace: its name is a hash of the session id, so
// listing Secrets yields no usable session; its labels name the Discord
// user, so a user's sessions are a label selector; its data is the Discord
// grant in the oauth.Store format (the one OAuth engine refreshes it, under
// its refresh lock) plus who the user is and when the session was made,
// last seen and ends. The browser holds only the session id, in a cookie.
package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/internal/clocks"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// Defaults of a Store.
const (
	// DefaultTTL is a session's life from sign-in (seed 003
	// SESSION_TTL_SEC: 30 days). It does not slide: the cookie's Max-Age
	// and the Secret's expires_at say the same instant.
	DefaultTTL = 30 * 24 * time.Hour
	// DefaultMaxPerUser bounds a user's sessions; signing in once more
	// deletes the oldest (seed 003 known issue 2: "keep the newest 5").
	DefaultMaxPerUser = 5
	// DefaultTouchEvery is how stale last_seen_at may grow before a read
	// writes it again (seed 003 known issue 1): once a minute at most, so a
	// burst of requests is one write, not one per request.
	DefaultTouchEvery = time.Minute
	// DefaultRefreshBefore is how near its expiry a session's Discord
	// access token is refreshed (seed 003 getSessionWithRefresh: "when the
	// expiry is near").
	DefaultRefreshBefore = 10 * time.Minute
)

// Labels of a session Secret.
const (
	// Label marks a session Secret ("true").
	Label = "switchboard.dev/discord-session"
	// UserLabel holds the Discord user id (a snowflake: at most 20 digits,
	// a valid label value): the seed's user:{uid}:sessions set.
	UserLabel = "switchboard.dev/discord-user"
)

// Keys of a session Secret besides the grant's (oauth.KeyAccessToken,
// KeyRefreshToken, KeyTokenType, KeyExpiry, KeyScope).
const (
	KeyUserID     = "uid"
	KeyUsername   = "username"
	KeyAvatar     = "avatar"
	KeyCreatedAt  = "created_at"   // RFC 3339 with nanoseconds
	KeyLastSeenAt = "last_seen_at" // RFC 3339 with nanoseconds
	KeyExpiresAt  = "expires_at"   // RFC 3339 with nanoseconds
)

// ErrNoSession means the session id names no live session: unknown,
// malformed, expired, logged out, or its Discord grant was revoked. The
// person signs in again.
var ErrNoSession = errors.New("no such session")

// User is a Discord account, as GET /users/@me describes it.
type User struct {
	// ID is the snowflake, a decimal string.
	ID, Username string
	// Avatar is the avatar hash ("" for the default avatar).
	Avatar string
}

// Session is what a route may know of a session: never its tokens.
type Session struct {
	UserID, Username, Avatar         string
	CreatedAt, LastSeenAt, ExpiresAt time.Time
	// secret names the session's Secret (a hash of the session id, not
	// the id), so DeleteAll can delete this session last.
	secret string
}

// Store creates, reads and deletes sessions.
type Store struct {
	// Reader reads from the API server, never a cache: a session must be
	// found the moment the callback made it, and gone the moment it was
	// logged out.
	Reader client.Reader
	Writer client.Client
	// Namespace holds the session Secrets (the webhook's own).
	Namespace string
	// Engine refreshes the Discord grant (one OAuth engine for all).
	Engine *oauth.Engine
	// Provider is Discord (oauth.Discord when its Name is empty).
	Provider oauth.Provider
	// ClientKey names the Secret with the Discord application's client_id
	// and client_secret.
	ClientKey types.NamespacedName
	// Clock is the wall clock when nil.
	Clock clock.PassiveClock
	// TTL, MaxPerUser, TouchEvery and RefreshBefore default to the
	// Default* constants when zero.
	TTL           time.Duration
	MaxPerUser    int
	TouchEvery    time.Duration
	RefreshBefore time.Duration
}

func (s *Store) now() time.Time {
	return clocks.Now(s.Clock)
}

func orDefault[T time.Duration | int](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}

// ProviderOrDefault is the Discord provider the store refreshes with.
func (s *Store) ProviderOrDefault() oauth.Provider {
	if s.Provider.Name != "" {
		return s.Provider
	}
	return oauth.Discord
}

// TTLOrDefault is how long a new session lives.
func (s *Store) TTLOrDefault() time.Duration { return orDefault(s.TTL, DefaultTTL) }

// SecretName is the Secret holding a session; the name is a hash, so
// listing Secrets shows no usable session id.
func SecretName(sid string) string {
	sum := sha256.Sum256([]byte(sid))
	return "discord-session-" + hex.EncodeToString(sum[:16])
}

// sidBytes is a session id's entropy: 256 bits.
const sidBytes = 32

// validSID matches what Create hands out (capability.Random(32)); anything
// else is refused before any read.
var validSID = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// validUserID is a Discord snowflake: a 64-bit integer in decimal.
var validUserID = regexp.MustCompile(`^[0-9]{1,20}$`)

func (s *Store) key(sid string) types.NamespacedName {
	return types.NamespacedName{Namespace: s.Namespace, Name: SecretName(sid)}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func timeOf(sec *corev1.Secret, key string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, string(sec.Data[key]))
	return t
}

// Expired reports whether a session Secret is past its expires_at, or,
// without a readable one, older than ttl by the API server's clock (so a
// Secret with a missing or damaged expiry still goes).
func Expired(sec *corev1.Secret, now time.Time, ttl time.Duration) bool {
	exp := timeOf(sec, KeyExpiresAt)
	if exp.IsZero() {
		return now.Sub(sec.CreationTimestamp.Time) > ttl
	}
	return !now.Before(exp)
}

func sessionFrom(sec *corev1.Secret) Session {
	d := func(k string) string { return string(sec.Data[k]) }
	return Session{UserID: d(KeyUserID), Username: d(KeyUsername), Avatar: d(KeyAvatar),
		CreatedAt: timeOf(sec, KeyCreatedAt), LastSeenAt: timeOf(sec, KeyLastSeenAt), ExpiresAt: timeOf(sec, KeyExpiresAt),
		secret: sec.Name}
}

// Get returns the live session sid names, or ErrNoSession. On the way it
// writes last_seen_at when it is more than TouchEvery old, and refreshes
// the Discord grant through the engine when its access token has less than
// RefreshBefore left (one refresh for any number of concurrent reads, in
// this process and across replicas). A grant Discord refuses ends the
// session; Discord being unreachable does not, while the access token
// still works.
func (s *Store) Get(ctx context.Context, sid string) (Session, error) {
	if !validSID.MatchString(sid) {
		return Session{}, ErrNoSession
	}
	key := s.key(sid)
	var sec corev1.Secret
	if err := s.Reader.Get(ctx, key, &sec); err != nil {
		if apierrors.IsNotFound(err) {
			return Session{}, ErrNoSession
		}
		return Session{}, fmt.Errorf("read session Secret %s: %w", key.Name, err)
	}
	now := s.now()
	if sec.Labels[Label] != "true" || !validUserID.MatchString(string(sec.Data[KeyUserID])) {
		return Session{}, ErrNoSession // not a session Secret
	}
	if Expired(&sec, now, s.TTLOrDefault()) {
		// The collector would delete it; the person is signing in again
		// now, so it goes at once.
		if err := deleteSecret(ctx, s.Writer, &sec); err != nil {
			logf.FromContext(ctx).V(1).Info("could not delete an expired session", "secret", key.Name, "error", err.Error())
		}
		return Session{}, ErrNoSession
	}
	sess := sessionFrom(&sec)
	if now.Sub(sess.LastSeenAt) >= orDefault(s.TouchEvery, DefaultTouchEvery) {
		if s.touch(ctx, &sec, now) {
			sess.LastSeenAt = now
		}
	}
	expiry, _ := time.Parse(time.RFC3339, string(sec.Data[oauth.KeyExpiry]))
	margin := orDefault(s.RefreshBefore, DefaultRefreshBefore)
	if len(sec.Data[oauth.KeyAccessToken]) > 0 && expiry.After(now.Add(margin)) {
		return sess, nil
	}
	_, err := s.Engine.Ensure(ctx, s.ProviderOrDefault(), s.ClientKey, key, margin, false)
	switch {
	case err == nil:
		return sess, nil
	case errors.Is(err, oauth.ErrReauthRequired):
		// The person revoked the app at Discord, or the grant is gone:
		// the session proves nothing any more.
		logf.FromContext(ctx).Info("a session's Discord grant was refused; ending the session", "secret", key.Name, "user", sess.UserID)
		if err := s.delete(ctx, key); err != nil {
			return Session{}, err
		}
		return Session{}, ErrNoSession
	case expiry.After(now):
		// Discord is unreachable but the access token still works: the
		// session stands, and the next read refreshes.
		logf.FromContext(ctx).Info("could not refresh a session's Discord grant; keeping it while its token works", "secret", key.Name, "error", err.Error())
		return sess, nil
	default:
		return Session{}, fmt.Errorf("refresh the Discord grant of session %s: %w", key.Name, err)
	}
}

// touch writes last_seen_at, only if the Secret is still as read (a merge
// patch carrying resourceVersion): of concurrent reads one writes, and the
// others, refused, know that someone just did. It reports whether it wrote.
func (s *Store) touch(ctx context.Context, sec *corev1.Secret, now time.Time) bool {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": sec.ResourceVersion},
		"data":     map[string][]byte{KeyLastSeenAt: []byte(stamp(now))},
	})
	if err != nil {
		return false
	}
	target := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: sec.Namespace, Name: sec.Name}}
	err = s.Writer.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch))
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		// A missed touch costs nothing but freshness: the read goes on.
		logf.FromContext(ctx).V(1).Info("could not record a session as seen", "secret", sec.Name, "error", err.Error())
	}
	return err == nil
}

// Delete ends a session (logout). An unknown or malformed id is success.
func (s *Store) Delete(ctx context.Context, sid string) error {
	if !validSID.MatchString(sid) {
		return nil
	}
	return s.delete(ctx, s.key(sid))
}

func (s *Store) delete(ctx context.Context, key types.NamespacedName) error {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := s.Writer.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete session Secret %s: %w", key.Name, err)
	}
	return nil
}

// deleteSecret deletes the Secret that was read (UID precondition), and
// treats "already gone" as done.
func deleteSecret(ctx context.Context, c client.Client, sec *corev1.Secret) error {
	uid := sec.UID
	err := c.Delete(ctx, sec, client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete session Secret %s: %w", sec.Name, err)
	}
	return nil
}
