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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/clocks"
)

// StateTTL is how long an OAuth state is valid (seed 000 §3.1.1: 10
// minutes). The collector deletes states older than this.
const StateTTL = 10 * time.Minute

// MaxStatesPerResource bounds the outstanding states of one resource: a
// person who opens the connect link a few times keeps a few tabs working,
// and a loop of connects (even with the token) cannot fill etcd.
const MaxStatesPerResource = 3

// MaxBrowsersPerResource bounds how many browsers may have a sign-in in
// progress for one resource at once (a share link's Discord sign-in,
// which anyone holding the link may start): each browser keeps at most
// MaxStatesPerResource states, so one link holds at most 30 states, and a
// start from a further browser is refused (ErrTooManyStarts) rather than
// evicting anyone's.
const MaxBrowsersPerResource = 10

// Labels of the state Secrets.
const (
	// StateLabel marks a state Secret; its value is the OAuth target.
	StateLabel = "switchboard.dev/oauth-state"
	// StateResourceLabel holds a hash of the resource's namespace/name (a
	// label value cannot hold both), to find a resource's states.
	StateResourceLabel = "switchboard.dev/oauth-resource"
	// StateBrowserLabel holds the digest of the browser a state is bound
	// to (State.BrowserDigest), for the states that have one.
	StateBrowserLabel = "switchboard.dev/oauth-browser"
	// stateCreatedAnnotation orders a resource's states finer than
	// creationTimestamp's whole seconds.
	stateCreatedAnnotation = "switchboard.dev/created-at"
)

// Keys of a state Secret.
const (
	stateKeyTarget      = "target"
	stateKeyNamespace   = "namespace"
	stateKeyName        = "name"
	stateKeyVerifier    = "verifier"
	stateKeyExpires     = "expires"
	stateKeyConnectHash = "connect-token-hash"
	stateKeyUID         = "resource-uid"
	stateKeyClaim       = "claim-digest"
	stateKeyBrowser     = "browser-digest"
	stateKeySignup      = "signup"
	// The grant a flow obtained before a rate limit stopped it
	// (State.Pending).
	stateKeyPendingAccess  = "pending-access-token"
	stateKeyPendingRefresh = "pending-refresh-token"
	stateKeyPendingType    = "pending-token-type"
	stateKeyPendingExpiry  = "pending-expiry"
	stateKeyPendingScope   = "pending-scope"
)

// ErrStateInvalid means a callback's state is unknown, already used or
// expired: the person must start again from the connect link.
var ErrStateInvalid = errors.New("the OAuth state is unknown, already used or expired")

// ErrTooManyStarts means MaxBrowsersPerResource browsers already have a
// flow in progress for the resource: the start is refused, and no state
// is kept. A *TooManyStartsError says when a slot frees up.
var ErrTooManyStarts = errors.New("too many sign-ins are in progress for this resource")

// TooManyStartsError is ErrTooManyStarts with the wait until the first
// of the other browsers' states expires.
type TooManyStartsError struct {
	RetryAfter time.Duration
}

func (e *TooManyStartsError) Error() string {
	return fmt.Sprintf("%s; retry in %s", ErrTooManyStarts, e.RetryAfter)
}

// Is makes errors.Is(err, ErrTooManyStarts) true.
func (e *TooManyStartsError) Is(target error) bool { return target == ErrTooManyStarts }

// State is one started OAuth flow: which resource it is for, the PKCE
// verifier, and the connect Secret whose token started it.
type State struct {
	Target, Namespace, Name string
	// ResourceUID is the resource's UID at connect: a resource deleted and
	// made again under the same name is another resource, and does not get
	// the grant.
	ResourceUID types.UID
	// Verifier is the PKCE code verifier ("" without PKCE).
	Verifier string
	// ConnectTokenHash is the hash of the connect token that was used; the
	// manager deletes the connect Secret only while it holds that token
	// (the token rotates once).
	ConnectTokenHash string
	// Expires is when the state stops being accepted.
	Expires time.Time
	// ClaimDigest is the hex SHA-256 of what the flow was started for, when
	// that is itself a secret (a Discord sign-in: the short link's token,
	// the seed 003 claimTokenDigest of discord:auth:{state}). The state
	// keeps only the digest, so reading state Secrets yields no link.
	ClaimDigest string
	// BrowserDigest is the digest of the browser-binding cookie of the
	// browser that started the flow (RFC 9700 §4.7.1: a state bound to the
	// user agent), for flows anyone may start (a Discord sign-in, started
	// by whoever holds a share link). Such a state is displaced only by
	// newer starts of the same browser, and a callback from another
	// browser does not spend it. "" for flows a credential starts (a
	// connect link's token).
	BrowserDigest string
	// SignUp marks a flow started at a sign-up's public URL (Namespace and
	// Name are the sign-up's): the grant makes or reconnects the resource
	// of the account it is for (SignUp).
	SignUp bool
	// Pending is the grant the flow's code was already exchanged for when
	// a rate limit stopped it before it finished (Restore): the retried
	// callback uses it rather than the spent code.
	Pending *Token
}

// States keeps OAuth states in Secrets, so any webhook replica can finish
// a flow another started. Each is usable once: consuming it deletes it
// with UID and resourceVersion preconditions, so of two concurrent
// callbacks exactly one wins.
type States struct {
	// Reader reads from the API server (never a cache: a state must be
	// found the moment it was written, and gone the moment it was used).
	Reader client.Reader
	Writer client.Client
	// Namespace holds the state Secrets (the webhook's own).
	Namespace string
	// Clock is the wall clock when nil.
	Clock clock.PassiveClock
	// MaxBrowsers bounds the browsers with a flow in progress for one
	// resource, for states bound to a browser (MaxBrowsersPerResource when
	// zero).
	MaxBrowsers int
}

func (s *States) maxBrowsers() int {
	if s.MaxBrowsers > 0 {
		return s.MaxBrowsers
	}
	return MaxBrowsersPerResource
}

func (s *States) now() time.Time {
	return clocks.Now(s.Clock)
}

// StateSecretName is the Secret holding a state; the name is a hash, so
// listing Secrets shows no usable state.
func StateSecretName(state string) string {
	sum := sha256.Sum256([]byte(state))
	return "oauth-state-" + hex.EncodeToString(sum[:16])
}

// resource is the StateResourceLabel value of st: its resource's, or its
// sign-up's, kept apart from a resource of the same name (a name holds no
// "/"), so that neither's bounds or a connect's clean-up touch the other's
// states.
func (st State) resource() string {
	if st.SignUp {
		return resourceHash(st.Namespace, "signup/"+st.Name)
	}
	return resourceHash(st.Namespace, st.Name)
}

// resourceHash is the StateResourceLabel value of a resource.
func resourceHash(namespace, name string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	return hex.EncodeToString(sum[:16])
}

// Create stores a new state for st's resource and returns it (the value
// the provider echoes to the callback). It then deletes the oldest states
// beyond MaxStatesPerResource: of the resource, or, for a state bound to
// a browser, of that browser alone (pruneBrowser), so that nobody else's
// start displaces a flow in progress.
func (s *States) Create(ctx context.Context, st State) (string, error) {
	state := capability.Random(32)
	now := s.now()
	labels := map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue,
		StateLabel: st.Target, StateResourceLabel: st.resource()}
	if st.BrowserDigest != "" {
		labels[StateBrowserLabel] = st.BrowserDigest
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: StateSecretName(state), Namespace: s.Namespace, Labels: labels,
			Annotations: map[string]string{stateCreatedAnnotation: now.UTC().Format(time.RFC3339Nano)}},
		Type: corev1.SecretTypeOpaque,
		StringData: map[string]string{stateKeyTarget: st.Target, stateKeyNamespace: st.Namespace, stateKeyName: st.Name,
			stateKeyVerifier: st.Verifier, stateKeyConnectHash: st.ConnectTokenHash, stateKeyUID: string(st.ResourceUID),
			stateKeyExpires: now.Add(StateTTL).UTC().Format(time.RFC3339), stateKeyClaim: st.ClaimDigest,
			stateKeyBrowser: st.BrowserDigest, stateKeySignup: signUpFlag(st.SignUp)},
	}
	if err := s.Writer.Create(ctx, sec); err != nil {
		return "", fmt.Errorf("create OAuth state Secret: %w", err)
	}
	var err error
	if st.BrowserDigest != "" {
		err = s.pruneBrowser(ctx, st, sec, now)
	} else {
		err = s.prune(ctx, st.Namespace, st.Name)
	}
	if err != nil {
		return "", err
	}
	return state, nil
}

// Restore puts back a state Consume took, unchanged but for a pending
// grant: for a flow a provider's rate limit stopped before it finished,
// so that the same callback, retried once the limit has passed, finishes
// it (a 429 never spends a state). It keeps the state's expiry; an
// expired state is not restored.
func (s *States) Restore(ctx context.Context, state string, st State) error {
	if !s.now().Before(st.Expires) {
		return ErrStateInvalid
	}
	labels := map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue,
		StateLabel: st.Target, StateResourceLabel: st.resource()}
	if st.BrowserDigest != "" {
		labels[StateBrowserLabel] = st.BrowserDigest
	}
	data := map[string]string{stateKeyTarget: st.Target, stateKeyNamespace: st.Namespace, stateKeyName: st.Name,
		stateKeyVerifier: st.Verifier, stateKeyConnectHash: st.ConnectTokenHash, stateKeyUID: string(st.ResourceUID),
		stateKeyExpires: st.Expires.UTC().Format(time.RFC3339), stateKeyClaim: st.ClaimDigest, stateKeyBrowser: st.BrowserDigest,
		stateKeySignup: signUpFlag(st.SignUp)}
	if g := st.Pending; g != nil {
		data[stateKeyPendingAccess], data[stateKeyPendingRefresh], data[stateKeyPendingType] = g.AccessToken, g.RefreshToken, g.TokenType
		data[stateKeyPendingScope] = g.Extra[KeyScope]
		if !g.Expiry.IsZero() {
			data[stateKeyPendingExpiry] = g.Expiry.UTC().Format(time.RFC3339)
		}
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: StateSecretName(state), Namespace: s.Namespace, Labels: labels,
			Annotations: map[string]string{stateCreatedAnnotation: s.now().UTC().Format(time.RFC3339Nano)}},
		Type: corev1.SecretTypeOpaque, StringData: data,
	}
	if err := s.Writer.Create(ctx, sec); err != nil {
		return fmt.Errorf("restore OAuth state Secret: %w", err)
	}
	return nil
}

// Consume reads a state and deletes it in one step: only the first caller
// whose delete succeeds gets it. An unknown, used or expired state is
// ErrStateInvalid; any other error is the API server's, worth a retry.
func (s *States) Consume(ctx context.Context, state string) (State, error) {
	return s.ConsumeIn(ctx, state, "")
}

// ConsumeIn is Consume for a callback that came with the browser-binding
// cookie whose digest is browser ("" when it came without one). A state
// bound to another browser is ErrStateInvalid and is not spent: its own
// browser can still finish. A callback without the cookie may finish a
// bound state (seed 003: the callback copes with a lost cookie).
func (s *States) ConsumeIn(ctx context.Context, state, browser string) (State, error) {
	if state == "" {
		return State{}, ErrStateInvalid
	}
	var sec corev1.Secret
	key := types.NamespacedName{Namespace: s.Namespace, Name: StateSecretName(state)}
	if err := s.Reader.Get(ctx, key, &sec); err != nil {
		if apierrors.IsNotFound(err) {
			return State{}, ErrStateInvalid
		}
		return State{}, fmt.Errorf("read OAuth state: %w", err)
	}
	if bound := string(sec.Data[stateKeyBrowser]); bound != "" && browser != "" && !capability.Equal(bound, browser) {
		return State{}, ErrStateInvalid
	}
	uid, rv := sec.UID, sec.ResourceVersion
	if err := s.Writer.Delete(ctx, &sec, client.Preconditions{UID: &uid, ResourceVersion: &rv}); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return State{}, ErrStateInvalid // consumed by a concurrent callback
		}
		return State{}, fmt.Errorf("consume OAuth state: %w", err)
	}
	st := stateFrom(&sec)
	if st.Expires.IsZero() || !s.now().Before(st.Expires) {
		return State{}, ErrStateInvalid
	}
	return st, nil
}

func stateFrom(sec *corev1.Secret) State {
	d := func(k string) string { return string(sec.Data[k]) }
	expires, _ := time.Parse(time.RFC3339, d(stateKeyExpires))
	var pending *Token
	if d(stateKeyPendingAccess) != "" {
		pending = &Token{AccessToken: d(stateKeyPendingAccess), RefreshToken: d(stateKeyPendingRefresh), TokenType: d(stateKeyPendingType),
			Extra: map[string]string{}}
		pending.Expiry, _ = time.Parse(time.RFC3339, d(stateKeyPendingExpiry))
		if sc := d(stateKeyPendingScope); sc != "" {
			pending.Extra[KeyScope] = sc
		}
	}
	return State{Pending: pending, Target: d(stateKeyTarget), Namespace: d(stateKeyNamespace), Name: d(stateKeyName),
		Verifier: d(stateKeyVerifier), ConnectTokenHash: d(stateKeyConnectHash), ResourceUID: types.UID(d(stateKeyUID)),
		Expires: expires, ClaimDigest: d(stateKeyClaim), BrowserDigest: d(stateKeyBrowser), SignUp: d(stateKeySignup) == "true"}
}

// signUpFlag is how a state or a handover records SignUp.
func signUpFlag(signUp bool) string {
	if signUp {
		return "true"
	}
	return ""
}
