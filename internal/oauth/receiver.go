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
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/clocks"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete

// Receiver is the manager's side: it receives the handovers in the
// webhook's namespace, one reconcile each (leader-elected, so exactly one
// replica exchanges a code). grant.SetupReceiver registers it.
type Receiver struct {
	// Client reads Secrets from the API server (setup.ClientOptions) and
	// writes them.
	Client client.Client
	// Reader reads resources from the API server.
	Reader client.Reader
	// Engine exchanges codes.
	Engine *Engine
	// Targets are the kinds the OAuth routes connect.
	Targets []Target
	// Namespace holds the handovers (the webhook's --state-namespace).
	Namespace string
	// Shard selects the resources this manager reconciles (its
	// --watch-label-selector; nil: all). Every shard's receiver sees every
	// handover; each takes only those of its own resources, so one code
	// is exchanged once.
	Shard labels.Selector
	// SignUps are the targets' sign-ups, for the handovers of flows
	// started at a sign-up's public URL (Handover.SignUp).
	SignUps []SignUp
	// Keep is HandoverKeep when zero.
	Keep time.Duration
	// Clock is the wall clock when nil.
	Clock clock.PassiveClock
}

func (r *Receiver) now() time.Time {
	return clocks.Now(r.Clock)
}

func (r *Receiver) keep() time.Duration {
	if r.Keep > 0 {
		return r.Keep
	}
	return HandoverKeep
}

// Reconcile receives one handover, or deletes one received HandoverKeep ago.
func (r *Receiver) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var sec corev1.Secret
	if err := r.Client.Get(ctx, req.NamespacedName, &sec); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if sec.Labels[HandoverLabel] == "" {
		return reconcile.Result{}, nil
	}
	if outcomeFrom(&sec).Result != "" {
		at, _ := time.Parse(time.RFC3339Nano, string(sec.Data[handoverKeyOutcomeAt]))
		if left := at.Add(r.keep()).Sub(r.now()); left > 0 {
			return reconcile.Result{RequeueAfter: left}, nil
		}
		return reconcile.Result{}, deleteSecret(ctx, r.Client, &sec)
	}
	ho := handoverFrom(&sec)
	out, err := r.receive(ctx, ho)
	switch {
	case errors.Is(err, errOtherShard):
		return reconcile.Result{}, nil // another manager's to receive
	case err != nil:
		return reconcile.Result{}, err // nothing was exchanged: try again
	}
	logf.FromContext(ctx).Info("OAuth grant received", "target", ho.Target, "resource", ho.Namespace+"/"+ho.Name, "result", out.Result,
		"signUp", ho.SignUp, "to", out.Namespace+"/"+out.Name)
	if out.Namespace == "" {
		out.Namespace, out.Name = ho.Namespace, ho.Name
	}
	data := map[string][]byte{handoverKeyTarget: sec.Data[handoverKeyTarget], handoverKeyNamespace: []byte(out.Namespace),
		handoverKeyName: []byte(out.Name), handoverKeyOutcome: []byte(out.Result),
		handoverKeyOutcomeAt: []byte(r.now().UTC().Format(time.RFC3339Nano))}
	for k, v := range out.Extra {
		data[handoverExtraPrefix+k] = []byte(v)
	}
	// The outcome replaces the code: a received handover holds no code.
	sec.Data, sec.StringData = data, nil
	if err := r.Client.Update(ctx, &sec); err != nil {
		// The code may have been exchanged: it cannot be exchanged again,
		// so a retry would report Refused. Conflict cannot happen (only the
		// leader writes received handovers); any error is logged.
		return reconcile.Result{}, fmt.Errorf("record the OAuth grant's outcome: %w", err)
	}
	return reconcile.Result{RequeueAfter: r.keep()}, nil
}

// errOtherShard: the handover's resource is another shard's.
var errOtherShard = errors.New("the resource is another shard's")

// receive checks a handover against the resource it names and, when the
// grant may be written, exchanges the code and writes it. err is for a
// failure before any exchange, worth a retry.
func (r *Receiver) receive(ctx context.Context, ho Handover) (Outcome, error) {
	var t *Target
	for i := range r.Targets {
		if r.Targets[i].Name == ho.Target {
			t = &r.Targets[i]
		}
	}
	if t == nil {
		return Outcome{Result: Gone}, nil
	}
	if ho.SignUp {
		return r.receiveSignUp(ctx, t, ho)
	}
	key := types.NamespacedName{Namespace: ho.Namespace, Name: ho.Name}
	res, err := t.Resolve(ctx, r.Reader, key)
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || err == nil && res.Object.GetUID() != ho.ResourceUID:
		// Forbidden: a namespace a namespaced install does not watch.
		return Outcome{Result: Gone}, nil
	case err != nil:
		return Outcome{}, err
	case r.Shard != nil && !r.Shard.Matches(labels.Set(res.Object.GetLabels())):
		return Outcome{}, errOtherShard
	}
	connectSec, err := r.connectSecret(ctx, res, ho)
	switch {
	case err != nil:
		return Outcome{}, err
	case connectSec == nil:
		return Outcome{Result: Stale}, nil
	}
	_, tokenKey := Keys(key.Namespace, res.Credentials)
	g, err := r.Engine.Store.Grant(ctx, tokenKey)
	if err != nil {
		return Outcome{}, err
	}
	if GrantLocked(res, g) {
		return Outcome{Result: Locked}, nil
	}
	return r.exchange(ctx, t, res, ho, connectSec)
}

// exchange trades the handover's code for a grant with the resource's
// OAuth client, writes it to the resource's token Secret and rotates the
// connect token: the part of receive once the grant may be written.
func (r *Receiver) exchange(ctx context.Context, t *Target, res *Resource, ho Handover, connectSec *corev1.Secret) (Outcome, error) {
	clientKey, _ := Keys(ho.Namespace, res.Credentials)
	p := t.ProviderFor(res)
	tok, failed, err := r.exchangeCode(ctx, p, clientKey, ho)
	if failed != "" || err != nil {
		return Outcome{Result: failed}, err
	}
	if !r.saveGrant(ctx, res, tok, ho.Target, p.Name, "") {
		return Outcome{Result: Unsaved}, nil
	}
	r.rotateConnectToken(ctx, connectSec, ho)
	return Outcome{Result: Connected, Extra: publicExtra(tok)}, nil
}

// exchangeCode trades the handover's code for a grant with the OAuth
// client of the Secret clientKey, for a connect link's resource and a
// sign-up alike. failed is the outcome when there is no grant to save
// (the client Secret missing, the code refused, the provider not
// answering); err a failure to read before any exchange, worth a retry.
func (r *Receiver) exchangeCode(ctx context.Context, p Provider, clientKey types.NamespacedName, ho Handover) (_ Token, failed Result, _ error) {
	creds, err := r.Engine.Store.LoadClient(ctx, clientKey)
	switch {
	case IsMissingSecret(err):
		return Token{}, Misconfigured, nil
	case err != nil:
		return Token{}, "", err
	}
	tok, err := r.Engine.Exchange(ctx, p, creds, ho.Code, ho.RedirectURI, ho.Verifier)
	switch {
	case errors.Is(err, ErrReauthRequired):
		return Token{}, Refused, nil
	case err != nil:
		logf.FromContext(ctx).Error(err, "OAuth code exchange failed", "target", ho.Target, "resource", ho.Namespace+"/"+ho.Name)
		return Token{}, Unavailable, nil
	}
	return tok, "", nil
}

// saveGrant writes tok into res's token Secret and records it on the
// audit record (signUp names the sign-up it came through, "" for a
// connect link); false when it could not be written (logged).
func (r *Receiver) saveGrant(ctx context.Context, res *Resource, tok Token, target, provider, signUp string) bool {
	_, tokenKey := Keys(res.Object.GetNamespace(), res.Credentials)
	if err := r.Engine.Store.SaveConnected(ctx, tokenKey, tok, res.Reconnect()); err != nil {
		logf.FromContext(ctx).Error(err, "the OAuth grant could not be saved", "resource", res.Object.GetNamespace()+"/"+res.Object.GetName())
		return false
	}
	recordConnected(ctx, res.Object, target, provider, signUp, tokenKey.Name)
	return true
}

// recordConnected records a grant saved in the token Secret of obj, from
// a connect link (signUp "") or a sign-up, on the audit record. A handover
// is received once: a retried one finds the code spent or the grant
// locked, and records nothing.
func recordConnected(ctx context.Context, obj client.Object, target, provider, signUp, tokenSecret string) {
	audit.Record(ctx, audit.Fact{Fact: audit.OAuthConnected, Kind: audit.KindOf(obj), Namespace: obj.GetNamespace(), Name: obj.GetName(),
		Target: target, Provider: provider, SignUp: signUp, TokenSecret: tokenSecret})
}

// publicExtra is what a page may show of a new grant: the provider's
// fields that are not secret.
func publicExtra(tok Token) map[string]string {
	extra := map[string]string{}
	for _, k := range extraKeys {
		if v := tok.Extra[k]; v != "" {
			extra[k] = v
		}
	}
	return extra
}

// GrantLocked reports whether the resource's stored grant works and may
// not be replaced: its token Secret holds a refresh token, its
// Authenticated condition is not False, and its reconnect annotation is
// absent or the value the grant was written for.
func GrantLocked(res *Resource, g GrantState) bool {
	works := g.HasRefreshToken && res.Authenticated != metav1.ConditionFalse
	reconnect := res.Reconnect()
	asked := reconnect != "" && reconnect != g.ReconnectedFor
	return works && !asked
}

// StatusLocked is GrantLocked as the resource's status tells it: a grant
// its controller found working, and no new reconnect value. The webhook
// server answers such a resource's connect link 409 (the manager checks
// again against the token Secret when a grant arrives), and
// `kubectl switchboard connect` warns of it.
func StatusLocked(res *Resource) bool {
	return GrantLocked(res, GrantState{HasRefreshToken: res.Authenticated == metav1.ConditionTrue,
		ReconnectedFor: res.Connect.ReconnectedFor})
}

// connectSecret is the resource's connect Secret while the token that
// started the flow is current (ConnectTokenCurrent), else nil: a link
// works once, even when the resource's status still shows the old token's
// hash for a moment.
func (r *Receiver) connectSecret(ctx context.Context, res *Resource, ho Handover) (*corev1.Secret, error) {
	var sec corev1.Secret
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: ho.Namespace, Name: ConnectSecretName(ho.Name)}, &sec)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read connect Secret: %w", err)
	}
	if !metav1.IsControlledBy(&sec, res.Object) || !ConnectTokenCurrent(&sec, ho.ConnectTokenHash, r.now()) {
		return nil, nil
	}
	return &sec, nil
}

// rotateConnectToken makes the used link worthless: it deletes the connect
// Secret that held the flow's token (the UID precondition spares a newer
// one) and the resource's other outstanding states. The controller owns
// the connect Secret and mints a new token when it is gone. The grant is
// saved by now, so a failure here is logged: a working grant already
// refuses the old link without the reconnect annotation.
func (r *Receiver) rotateConnectToken(ctx context.Context, connectSec *corev1.Secret, ho Handover) {
	log := logf.FromContext(ctx)
	if err := deleteSecret(ctx, r.Client, connectSec); err != nil {
		log.Error(err, "could not rotate the connect token", "resource", ho.Namespace+"/"+ho.Name)
	}
	states := &States{Reader: r.Client, Writer: r.Client, Namespace: r.Namespace}
	if err := states.DeleteFor(ctx, ho.Namespace, ho.Name); err != nil {
		log.Error(err, "could not drop the resource's other OAuth states", "resource", ho.Namespace+"/"+ho.Name)
	}
}
