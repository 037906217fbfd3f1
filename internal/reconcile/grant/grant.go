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

// Package grant is the OAuth grant on the controller side, one for every
// kind the OAuth routes connect (v1alpha1.OAuthObject): the two phases
// such a kind runs first (the one-use connect link, and a grant refreshed
// before it expires), the grant those phases hand the later ones, the
// watch of the Secrets the objects name, and the registration of the
// manager's receiver of the grants the webhook hands over. The engine,
// the token store and the connect Secret stay in internal/oauth, which
// the webhook server shares.
package grant

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// Object is an OAuth kind the runner reconciles.
type Object interface {
	runner.Object
	v1alpha1.OAuthObject
}

// Deps are what the phases use of their controller.
type Deps struct {
	Client   client.Client
	Tokens   oauth.TokenSource
	Recorder events.EventRecorder
	// PublicURL is the webhook server's public base URL, for the link
	// ("" keeps only the token).
	PublicURL string
}

// Phases are the two phases every OAuth kind runs first, Connect and
// Grant, and Reauth for a grant refused later. T is the kind.
type Phases[T Object] struct {
	Deps
	target   oauth.Target
	provider func(T) oauth.Provider
	granted  func(obj T, tok oauth.Token, run *runner.Run)
	// lead is how early a refresh begins for a refreshBefore (none when
	// nil).
	lead func(refreshBefore time.Duration) time.Duration
}

// New builds the phases of kind T for its OAuth route target: the
// target's Name is the connect link's {target}, its Provider the grant's.
// Everything else is read through v1alpha1.OAuthObject.
func New[T Object](d Deps, target oauth.Target) *Phases[T] {
	return &Phases[T]{Deps: d, target: target}
}

// WithProvider makes the provider of each object f's (a
// NotionIntegration's assumed token lifetime) rather than the target's.
func (p *Phases[T]) WithProvider(f func(T) oauth.Provider) *Phases[T] {
	p.provider = f
	return p
}

// OnGrant has f record what else the kind keeps of a working grant
// (identity, refresh counters) after the Grant phase recorded its expiry
// (status.tokenExpiresAt, and lastTokenRefreshAt when it refreshed); the runner requeues at the refresh deadline on its
// own.
func (p *Phases[T]) OnGrant(f func(obj T, tok oauth.Token, run *runner.Run)) *Phases[T] {
	p.granted = f
	return p
}

// RefreshLead is how far ahead of its due instant (expiry −
// refreshBefore) a refresh begins in a kind that asks (WithRefreshLead): a
// twentieth of refreshBefore, as CalendarWatch begins its channel
// renewals, but at least a minute and at most five (one minute for 5m,
// three for 1h, five for 24h), and never more than refreshBefore itself.
// The runner puts a deadline off by up to a second to spread objects that
// share it, and a burst queues behind the workers: with the bench's
// 10,000 grants due within one minute (hack/bench -suite tokens), eight
// workers refresh about 80 a second, so a lead of a twentieth of 5m (15
// s) left SheetConnections refreshed up to 2½ minutes after their due
// instants; a minute's lead costs a Google grant one refresh in 54
// minutes in place of one in 55.
func RefreshLead(refreshBefore time.Duration) time.Duration {
	return min(max(refreshBefore/20, time.Minute), refreshBefore, 5*time.Minute)
}

// WithRefreshLead makes refreshes begin RefreshLead(refreshBefore) before
// they are due: the grant is refreshed when less than refreshBefore and
// the lead remains, and the object requeued for that instant.
func (p *Phases[T]) WithRefreshLead() *Phases[T] {
	p.lead = RefreshLead
	return p
}

// margin is how much of the token's life must remain for obj's grant not
// to be refreshed: refreshBefore, and the lead when the kind asked.
func (p *Phases[T]) margin(obj T) time.Duration {
	margin := obj.GetTokenRefreshBefore()
	if p.lead != nil {
		margin += p.lead(margin)
	}
	return margin
}

func (p *Phases[T]) providerOf(obj T) oauth.Provider {
	if p.provider != nil {
		return p.provider(obj)
	}
	return p.target.Provider
}

// SecretRecheck is how often an object stalled on a missing Secret looks
// again: Secrets a person creates are not cached or watched by the
// manager, so a slow, jittered recheck notices them without a busy loop.
const SecretRecheck = 2 * time.Minute

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
	// The connect route checks what status holds, so a link's hash and
	// the client id are written there before the Secret shows the link.
	published := false
	var patchErr error
	publish := func(link oauth.ConnectLink) error {
		if err := p.publishConnect(ctx, obj, run, link); err != nil {
			return err
		}
		published, patchErr = true, run.WriteAhead(ctx, obj)
		return patchErr
	}
	link, err := oauth.EnsureConnectSecret(ctx, p.Client, obj, p.target.Name, p.PublicURL, run.Now, publish)
	switch {
	case errors.Is(err, oauth.ErrConnectSecretConflict):
		return runner.Stall(v1alpha1.ConnectSecretConflictReason, err)
	case errors.Is(err, oauth.ErrConnectSecretUnseen):
		// Not an error: the Secret's own event brings obj back once the
		// cache shows it; the wait is for a missed one.
		return runner.Wait(connectSecretUnseenWait)
	case patchErr != nil:
		return runner.Transient(v1alpha1.ProgressingReason, err)
	case err != nil:
		return runner.Transient(v1alpha1.SecretReadFailedReason, err)
	}
	if !published {
		if err := p.publishConnect(ctx, obj, run, link); err != nil {
			return runner.Transient(v1alpha1.SecretReadFailedReason, err)
		}
	}
	run.RequeueAt(link.Expires)
	return runner.Continue()
}

// publishConnect sets in obj's status what the connect route checks for
// link: its token's hash, its expiry, the OAuth client's id (read when a
// token is minted, while no id is published, and when a person asks),
// and, for a minted link, the reconnect value the stored grant was
// written for — the Grant phase publishes it too, but only after the
// link is shown, and a link opened in between would start a reconnect
// the callback then refuses.
func (p *Phases[T]) publishConnect(ctx context.Context, obj T, run *runner.Run, link oauth.ConnectLink) error {
	st := obj.GetOAuthConnect()
	st.ConnectSecretName, st.ConnectTokenHash = link.Name, capability.Hash(link.Token)
	st.ConnectExpiresAt = &metav1.Time{Time: link.Expires}
	if !link.Minted && st.ClientID != "" && !run.Requested {
		return nil
	}
	clientKey, tokenKey := oauth.Keys(obj.GetNamespace(), obj.GetOAuthCredentials())
	if link.Minted {
		var tok corev1.Secret
		switch err := p.Client.Get(ctx, tokenKey, &tok); {
		case err == nil:
			st.ReconnectedFor = tok.Annotations[v1alpha1.ReconnectedForAnnotation]
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("read OAuth token Secret %s: %w", tokenKey, err)
		}
	}
	var sec corev1.Secret
	err := p.Client.Get(ctx, clientKey, &sec)
	switch {
	case apierrors.IsNotFound(err):
		// The Grant phase stalls on it; the connect route says so.
		st.ClientID = ""
	case err != nil:
		return fmt.Errorf("read OAuth client Secret %s: %w", clientKey, err)
	default:
		st.ClientID = string(sec.Data[oauth.KeyClientID])
	}
	return nil
}

// Grant makes sure the grant works: refreshed when less than the object's
// refreshBefore (and the kind's lead, WithRefreshLead) remains, or when a
// person asked (requested-at). The access token is handed to the later
// phases (Of), never stored.
func (p *Phases[T]) Grant(ctx context.Context, obj T, run *runner.Run) runner.Outcome {
	clientKey, tokenKey := oauth.Keys(obj.GetNamespace(), obj.GetOAuthCredentials())
	margin := p.margin(obj)
	// A refresh the engine saves is recorded about obj.
	ctx = audit.WithSubject(ctx, audit.SubjectOf(obj))
	tok, err := p.Tokens.Ensure(ctx, p.providerOf(obj), clientKey, tokenKey, margin, run.Requested)
	switch {
	case errors.Is(err, oauth.ErrReauthRequired):
		// The Secret is kept (seed 000 §3.7.6); a person connects again and
		// the callback's new grant reconciles this object.
		return p.Reauth(obj, "Refresh", err)
	case oauth.IsMissingSecret(err):
		return runner.Stall(v1alpha1.SecretNotFoundReason, err).RecheckAfter(SecretRecheck)
	case err != nil:
		obj.GetTokenStatus().RefreshFailed()
		return runner.Transient(v1alpha1.TokenRefreshFailedReason, err)
	}
	status.Set(obj, v1alpha1.AuthenticatedCondition, metav1.ConditionTrue, v1alpha1.SucceededReason, "the grant works")
	Set(run, Grant{Token: tok.AccessToken, ID: tok.Extra[oauth.KeyGrantedAt]})
	obj.GetOAuthConnect().ReconnectedFor = tok.ReconnectedFor
	if !tok.Expiry.IsZero() {
		run.RequeueAt(oauth.RefreshAt(tok, margin))
	}
	obj.GetTokenStatus().Granted(tok.Expiry, tok.Refreshed, run.Now)
	if p.granted != nil {
		p.granted(obj, tok, run)
	}
	return runner.Continue()
}

// Reauth marks a grant the provider refused, at a token refresh or at an
// API call made with it (action names which): Authenticated=False and
// Stalled with reason ReauthRequired, and one Warning Event and one
// oauth.revoked audit fact when the object was not stalled for that
// already (the stall's recheck refuses again, and is not a new refusal).
// A grant never stored (oauth.ErrNotConnected: nobody has connected yet)
// is marked the same, without either: nothing was refused, and a fresh
// install's objects would each raise a Warning.
func (p *Phases[T]) Reauth(obj T, action string, err error) runner.Outcome {
	status.Set(obj, v1alpha1.AuthenticatedCondition, metav1.ConditionFalse, v1alpha1.ReauthRequiredReason, err.Error())
	if c := status.Get(obj, v1alpha1.StalledCondition); !errors.Is(err, oauth.ErrNotConnected) &&
		(c == nil || c.Reason != v1alpha1.ReauthRequiredReason) {
		if p.Recorder != nil {
			p.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, v1alpha1.ReauthRequiredReason, action, "connect again: %s", err.Error())
		}
		s := audit.SubjectOf(obj)
		// Record reads nothing of a context; Reauth is called without one.
		audit.Record(context.Background(), audit.Fact{Fact: audit.OAuthRevoked, Kind: s.Kind, Namespace: s.Namespace, Name: s.Name,
			Provider: p.providerOf(obj).Name, Action: action, TokenSecret: obj.GetOAuthCredentials().TokenSecretRef.Name})
	}
	return runner.Stall(v1alpha1.ReauthRequiredReason, err)
}
