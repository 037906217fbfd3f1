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
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
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

// DefaultStateCollectInterval is how often the collector looks for
// expired states.
const DefaultStateCollectInterval = time.Minute

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
}

func (s *States) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

// StateSecretName is the Secret holding a state; the name is a hash, so
// listing Secrets shows no usable state.
func StateSecretName(state string) string {
	sum := sha256.Sum256([]byte(state))
	return "oauth-state-" + hex.EncodeToString(sum[:16])
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
		StateLabel: st.Target, StateResourceLabel: resourceHash(st.Namespace, st.Name)}
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
			stateKeyBrowser: st.BrowserDigest},
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

// createdAt orders states finer than creationTimestamp's whole seconds.
func createdAt(sec *corev1.Secret) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, sec.Annotations[stateCreatedAnnotation]); err == nil {
		return t
	}
	return sec.CreationTimestamp.Time
}

// newestFirst sorts states newest first (ties by name, so every replica
// orders them alike).
func newestFirst(list []corev1.Secret) {
	sort.Slice(list, func(i, j int) bool {
		ti, tj := createdAt(&list[i]), createdAt(&list[j])
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return list[i].Name > list[j].Name
	})
}

// prune keeps the newest MaxStatesPerResource states of a resource.
func (s *States) prune(ctx context.Context, namespace, name string) error {
	list, err := s.listFor(ctx, namespace, name)
	if err != nil || len(list) <= MaxStatesPerResource {
		return err
	}
	newestFirst(list)
	for i := MaxStatesPerResource; i < len(list); i++ {
		if err := deleteSecret(ctx, s.Writer, &list[i]); err != nil {
			return err
		}
	}
	return nil
}

// pruneBrowser bounds the states of a resource that anyone may start,
// without ever deleting another browser's live state:
//
//   - a browser keeps its newest MaxStatesPerResource states (a fourth
//     tab replaces its own oldest, as before);
//   - at most MaxBrowsersPerResource browsers have states at once, the
//     first to start keeping their slot. The state just made for a browser
//     beyond them is deleted again and the start refused with a
//     *TooManyStartsError (the bound is checked after the create, so two
//     starts racing for the last slot cannot both keep one).
//
// Expired states count for nothing; those seen go at once.
func (s *States) pruneBrowser(ctx context.Context, st State, mine *corev1.Secret, now time.Time) error {
	list, err := s.listFor(ctx, st.Namespace, st.Name)
	if err != nil {
		return err
	}
	newestFirst(list)
	// browsers in the order they first hold a live state; first is that
	// browser's oldest live state, last its newest's expiry.
	type browser struct {
		digest      string
		first       time.Time
		lastExpires time.Time
		states      int
	}
	seen := map[string]*browser{}
	for i := range list {
		sec := &list[i]
		// By the recorded expiry alone, on this clock: the collector also
		// reads the API server's creation time, on the wall clock.
		if exp := stateFrom(sec).Expires; sec.UID != mine.UID && (exp.IsZero() || !now.Before(exp)) {
			if err := deleteSecret(ctx, s.Writer, sec); err != nil {
				return err
			}
			continue
		}
		d := sec.Labels[StateBrowserLabel]
		b := seen[d]
		if b == nil {
			b = &browser{digest: d, lastExpires: stateFrom(sec).Expires}
			seen[d] = b
		}
		b.states++
		if d == st.BrowserDigest && b.states > MaxStatesPerResource {
			if err := deleteSecret(ctx, s.Writer, sec); err != nil {
				return err
			}
			continue
		}
		b.first = createdAt(sec)
	}
	order := make([]*browser, 0, len(seen))
	for _, b := range seen {
		order = append(order, b)
	}
	sort.Slice(order, func(i, j int) bool {
		if !order[i].first.Equal(order[j].first) {
			return order[i].first.Before(order[j].first)
		}
		return order[i].digest < order[j].digest
	})
	for i, b := range order {
		if b.digest != st.BrowserDigest || i < MaxBrowsersPerResource {
			continue
		}
		if err := deleteSecret(ctx, s.Writer, mine); err != nil {
			return err
		}
		// A slot frees up when the first of the browsers holding one has
		// no live state left.
		wait := StateTTL
		for _, held := range order[:MaxBrowsersPerResource] {
			wait = min(wait, held.lastExpires.Sub(now))
		}
		return &TooManyStartsError{RetryAfter: max(wait, time.Second)}
	}
	return nil
}

func (s *States) listFor(ctx context.Context, namespace, name string) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := s.Reader.List(ctx, &list, client.InNamespace(s.Namespace),
		client.MatchingLabels{StateResourceLabel: resourceHash(namespace, name)}); err != nil {
		return nil, fmt.Errorf("list OAuth states of %s/%s: %w", namespace, name, err)
	}
	return list.Items, nil
}

// DeleteFor deletes every outstanding state of a resource: after a
// successful callback, no flow started with the old token may finish.
func (s *States) DeleteFor(ctx context.Context, namespace, name string) error {
	list, err := s.listFor(ctx, namespace, name)
	if err != nil {
		return err
	}
	for i := range list {
		if err := deleteSecret(ctx, s.Writer, &list[i]); err != nil {
			return err
		}
	}
	return nil
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
		StateLabel: st.Target, StateResourceLabel: resourceHash(st.Namespace, st.Name)}
	if st.BrowserDigest != "" {
		labels[StateBrowserLabel] = st.BrowserDigest
	}
	data := map[string]string{stateKeyTarget: st.Target, stateKeyNamespace: st.Namespace, stateKeyName: st.Name,
		stateKeyVerifier: st.Verifier, stateKeyConnectHash: st.ConnectTokenHash, stateKeyUID: string(st.ResourceUID),
		stateKeyExpires: st.Expires.UTC().Format(time.RFC3339), stateKeyClaim: st.ClaimDigest, stateKeyBrowser: st.BrowserDigest}
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
		Expires: expires, ClaimDigest: d(stateKeyClaim), BrowserDigest: d(stateKeyBrowser)}
}

// expired reports whether a state Secret is past its use: its recorded
// expiry passed, or it is older than StateTTL by the API server's clock
// (so a Secret with a missing or forged expiry still goes).
func expired(sec *corev1.Secret, now time.Time) bool {
	if now.Sub(sec.CreationTimestamp.Time) > StateTTL {
		return true
	}
	st := stateFrom(sec)
	return st.Expires.IsZero() || !now.Before(st.Expires)
}

// deleteSecret deletes the Secret that was read (UID precondition), and
// treats "already gone" as done.
func deleteSecret(ctx context.Context, c client.Client, sec *corev1.Secret) error {
	uid := sec.UID
	err := c.Delete(ctx, sec, client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete Secret %s/%s: %w", sec.Namespace, sec.Name, err)
	}
	return nil
}

// +kubebuilder:rbac:groups="",resources=secrets,verbs=list;delete

// StateCollector deletes expired OAuth states on a timer: a person who
// never finishes the consent leaves a state behind, and nothing else would
// ever delete it. It is a manager.Runnable.
type StateCollector struct {
	// Client lists and deletes the state Secrets.
	Client client.Client
	// Namespace holds the states (the webhook's --state-namespace).
	Namespace string
	// Clock drives the timer (the wall clock when nil).
	Clock clock.WithTicker
	// Interval between passes (DefaultStateCollectInterval when zero).
	Interval time.Duration
}

// NeedLeaderElection: one replica collecting is enough.
func (c *StateCollector) NeedLeaderElection() bool { return true }

// Start collects at once, then every Interval, until ctx is done. A failed
// pass is logged and retried at the next tick.
func (c *StateCollector) Start(ctx context.Context) error {
	clk := c.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultStateCollectInterval
	}
	log := logf.FromContext(ctx).WithName("oauth-state-collector")
	ticker := clk.NewTicker(interval)
	defer ticker.Stop()
	for {
		if n, err := c.collect(ctx, clk.Now()); err != nil {
			log.Error(err, "collecting expired OAuth states failed", "namespace", c.Namespace)
		} else if n > 0 {
			log.V(1).Info("deleted expired OAuth states", "namespace", c.Namespace, "count", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
	}
}

// Collect runs one pass now and returns how many states it deleted.
func (c *StateCollector) Collect(ctx context.Context) (int, error) {
	var now time.Time
	if c.Clock != nil {
		now = c.Clock.Now()
	} else {
		now = time.Now()
	}
	return c.collect(ctx, now)
}

func (c *StateCollector) collect(ctx context.Context, now time.Time) (int, error) {
	var list corev1.SecretList
	if err := c.Client.List(ctx, &list, client.InNamespace(c.Namespace), client.HasLabels{StateLabel}); err != nil {
		return 0, fmt.Errorf("list OAuth states: %w", err)
	}
	n := 0
	for i := range list.Items {
		if !expired(&list.Items[i], now) {
			continue
		}
		if err := deleteSecret(ctx, c.Client, &list.Items[i]); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
