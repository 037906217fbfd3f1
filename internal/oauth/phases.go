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
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/runner"
	"github.com/switchboard-dev/switchboard/internal/status"
)

// TokenSource is the part of the engine controllers use: a grant, refreshed
// first when less than margin remains or when force is set. *Engine is
// the one implementation; unit tests of phase logic use a fake.
type TokenSource interface {
	Ensure(ctx context.Context, p Provider, clientKey, tokenKey types.NamespacedName, margin time.Duration, force bool) (Token, error)
}

var _ TokenSource = (*Engine)(nil)

// Keys are the Secrets an object's OAuthCredentials name, in its
// namespace.
func Keys(namespace string, c v1alpha1.OAuthCredentials) (clientKey, tokenKey types.NamespacedName) {
	return types.NamespacedName{Namespace: namespace, Name: c.ClientSecretRef.Name},
		types.NamespacedName{Namespace: namespace, Name: c.TokenSecretRef.Name}
}

// SecretRecheck is how often an object stalled on a missing Secret looks
// again: Secrets a person creates are not cached or watched by the
// manager, so a slow, jittered recheck notices them without a busy loop.
const SecretRecheck = 2 * time.Minute

// ErrClientIncomplete means the OAuth client Secret lacks a key.
var ErrClientIncomplete = errors.New("OAuth client Secret is incomplete")

// IsMissingSecret reports a Secret or key a person must create: NotFound,
// or an incomplete client Secret. Any other error reading a Secret is
// transient.
func IsMissingSecret(err error) bool {
	return apierrors.IsNotFound(err) || errors.Is(err, ErrClientIncomplete)
}

// Phases are the two phases every OAuth integration runs first: the
// one-use connect link, and a grant refreshed before it expires. T is the
// integration's kind.
type Phases[T interface {
	runner.Object
	GetOAuthConnect() *v1alpha1.OAuthConnectStatus
}] struct {
	Client   client.Client
	Tokens   TokenSource
	Recorder events.EventRecorder
	// Target is the OAuth route's {target} ("notion", "calendar", "sheets").
	Target string
	// PublicURL is the webhook server's public base URL, for the link.
	PublicURL string
	// Provider, Credentials and RefreshBefore read the object's spec.
	Provider      func(T) Provider
	Credentials   func(T) v1alpha1.OAuthCredentials
	RefreshBefore func(T) time.Duration
	// Granted records a working grant in status (identity, expiry); the
	// runner requeues at the refresh deadline on its own.
	Granted func(obj T, tok Token, run *runner.Run)
}

// connectSecretUnseenWait is how long Connect waits for the cache to show
// a connect Secret the API server already holds.
const connectSecretUnseenWait = time.Second

// Connect keeps the object's connect Secret (a random one-use token, and
// the link when the public URL is known), and publishes in status what the
// webhook's connect route checks instead of reading Secrets: the token's
// hash and the OAuth client's id. The client Secret is read when a token
// is minted, while no id is published, and when a person asks
// (requested-at), so that a steady reconcile reads no more Secrets.
func (p *Phases[T]) Connect(ctx context.Context, obj T, run *runner.Run) runner.Outcome {
	link, err := EnsureConnectSecret(ctx, p.Client, obj, p.Target, p.PublicURL, run.Now)
	switch {
	case errors.Is(err, ErrConnectSecretConflict):
		return runner.Stall(v1alpha1.ConnectSecretConflictReason, err)
	case errors.Is(err, ErrConnectSecretUnseen):
		// Not an error: the Secret's own event brings obj back once the
		// cache shows it; the wait is for a missed one.
		return runner.Wait(connectSecretUnseenWait)
	case err != nil:
		return runner.Transient(v1alpha1.SecretReadFailedReason, err)
	}
	st := obj.GetOAuthConnect()
	st.ConnectSecretName, st.ConnectTokenHash = link.Name, capability.Hash(link.Token)
	st.ConnectExpiresAt = &metav1.Time{Time: link.Expires}
	run.RequeueAt(link.Expires)
	if link.Minted || st.ClientID == "" || run.Requested {
		clientKey, _ := Keys(obj.GetNamespace(), p.Credentials(obj))
		var sec corev1.Secret
		err := p.Client.Get(ctx, clientKey, &sec)
		switch {
		case apierrors.IsNotFound(err):
			// The Grant phase stalls on it; the connect route says so.
			st.ClientID = ""
		case err != nil:
			return runner.Transient(v1alpha1.SecretReadFailedReason, fmt.Errorf("read OAuth client Secret %s: %w", clientKey, err))
		default:
			st.ClientID = string(sec.Data[KeyClientID])
		}
	}
	return runner.Continue()
}

// Grant makes sure the grant works: refreshed when less than the object's
// refreshBefore remains, or when a person asked (requested-at). The access
// token is handed to the later phases in run.Token, never stored.
func (p *Phases[T]) Grant(ctx context.Context, obj T, run *runner.Run) runner.Outcome {
	clientKey, tokenKey := Keys(obj.GetNamespace(), p.Credentials(obj))
	margin := p.RefreshBefore(obj)
	tok, err := p.Tokens.Ensure(ctx, p.Provider(obj), clientKey, tokenKey, margin, run.Requested)
	switch {
	case errors.Is(err, ErrReauthRequired):
		// The Secret is kept (seed 000 §3.7.6); a person connects again and
		// the callback's new grant reconciles this object.
		return p.Reauth(obj, "Refresh", err)
	case IsMissingSecret(err):
		return runner.Stall(v1alpha1.SecretNotFoundReason, err).RecheckAfter(SecretRecheck)
	case err != nil:
		return runner.Transient(v1alpha1.TokenRefreshFailedReason, err)
	}
	status.Set(obj, v1alpha1.AuthenticatedCondition, metav1.ConditionTrue, v1alpha1.SucceededReason, "the grant works")
	run.Token, run.GrantID = tok.AccessToken, tok.Extra[KeyGrantedAt]
	obj.GetOAuthConnect().ReconnectedFor = tok.ReconnectedFor
	if !tok.Expiry.IsZero() {
		run.RequeueAt(tok.Expiry.Add(-margin))
	}
	if p.Granted != nil {
		p.Granted(obj, tok, run)
	}
	return runner.Continue()
}

// Reauth marks a grant the provider refused, at a token refresh or at an
// API call made with it (action names which): Authenticated=False and
// Stalled with reason ReauthRequired, and one Warning Event when the
// object was not stalled for that already.
func (p *Phases[T]) Reauth(obj T, action string, err error) runner.Outcome {
	status.Set(obj, v1alpha1.AuthenticatedCondition, metav1.ConditionFalse, v1alpha1.ReauthRequiredReason, err.Error())
	if c := status.Get(obj, v1alpha1.StalledCondition); p.Recorder != nil && (c == nil || c.Reason != v1alpha1.ReauthRequiredReason) {
		p.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, v1alpha1.ReauthRequiredReason, action, "connect again: %s", err.Error())
	}
	return runner.Stall(v1alpha1.ReauthRequiredReason, err)
}

// SecretPath reads the token under key in the Secret name (the webhook
// Secret of a NotionIntegration, the ingest Secret of a SheetConnection)
// and derives the resource's secret path from it with derive. A missing
// Secret, or a token shorter than minLength, stalls the resource until a
// person fixes it.
func SecretPath(ctx context.Context, c client.Reader, obj client.Object, name, key string, minLength int,
	derive func(token, namespace, name string) string) (string, runner.Outcome) {
	var sec corev1.Secret
	ref := types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}
	if err := c.Get(ctx, ref, &sec); err != nil {
		if IsMissingSecret(err) {
			return "", runner.Stall(v1alpha1.SecretNotFoundReason, fmt.Errorf("the Secret %s was not found", name)).RecheckAfter(SecretRecheck)
		}
		return "", runner.Transient(v1alpha1.SecretReadFailedReason, fmt.Errorf("read Secret %s: %w", name, err))
	}
	token := string(sec.Data[key])
	if len(token) < minLength {
		return "", runner.Stall(v1alpha1.SecretNotFoundReason,
			fmt.Errorf("the Secret %s needs a key %q of at least %d characters", name, key, minLength)).RecheckAfter(SecretRecheck)
	}
	return derive(token, obj.GetNamespace(), obj.GetName()), runner.Continue()
}
