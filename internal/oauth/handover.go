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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
)

// The handover is how an OAuth callback reaches its resource without the
// webhook server holding any right in the resource's namespace (issue 17):
//
//  1. The webhook consumes the flow's state and writes the authorization
//     code (RFC 6749 §1.3.1: itself a grant, usable once, for minutes) into
//     a handover Secret in its own namespace — the only Secrets it may
//     write.
//  2. The manager's Receiver, watching that namespace, reads the resource
//     and the Secrets it names, checks that the grant may be replaced,
//     exchanges the code with the client secret (which the webhook never
//     sees), writes the token Secret in the resource's namespace (whose
//     change reconciles the resource), rotates the connect token, and
//     writes the outcome into the handover Secret in place of the code.
//  3. The webhook, watching its own namespace, shows the page that
//     outcome calls for. The manager deletes the handover Secret HandoverKeep
//     after the outcome.
//
// A handover carries no token and, once received, no code.

// HandoverLabel marks a handover Secret; its value is the OAuth target.
const HandoverLabel = "switchboard.dev/oauth-handover"

// HandoverKeep is how long a received handover (its outcome, no code) is
// kept for the webhook to read before the manager deletes it.
const HandoverKeep = time.Minute

// DefaultHandoverWait is how long the callback waits for the manager's
// outcome before it answers that the grant is on its way.
const DefaultHandoverWait = 10 * time.Second

// Keys of a handover Secret.
const (
	handoverKeyTarget      = "target"
	handoverKeyNamespace   = "namespace"
	handoverKeyName        = "name"
	handoverKeyUID         = "resource-uid"
	handoverKeyConnectHash = "connect-token-hash"
	handoverKeyCode        = "code"
	handoverKeyVerifier    = "verifier"
	handoverKeyRedirectURI = "redirect-uri"
	handoverKeyOutcome     = "outcome"
	handoverKeyOutcomeAt   = "outcome-at"
	handoverExtraPrefix    = "extra."
)

// Handover is one callback's code, for the manager to exchange.
type Handover struct {
	Target, Namespace, Name string
	ResourceUID             types.UID
	// ConnectTokenHash is the hash of the connect token that started the
	// flow: the manager rotates the connect Secret only while it still
	// holds that token.
	ConnectTokenHash string
	Code, Verifier   string
	RedirectURI      string
}

// Result is what became of a handover.
type Result string

// The results of a handover.
const (
	// Connected: the grant is in the token Secret.
	Connected Result = "Connected"
	// Gone: the resource no longer exists (or is another of that name).
	Gone Result = "Gone"
	// Locked: the resource has a grant that works, and no new reconnect
	// value asks to replace it.
	Locked Result = "Locked"
	// Misconfigured: the OAuth client Secret is missing or incomplete.
	Misconfigured Result = "Misconfigured"
	// Refused: the provider did not accept the code.
	Refused Result = "Refused"
	// Unavailable: the provider did not answer the exchange.
	Unavailable Result = "Unavailable"
	// Unsaved: the grant could not be written.
	Unsaved Result = "Unsaved"
	// Stale: the connect token that started the flow is no longer the
	// resource's (a flow finished with it already, or it was rotated).
	Stale Result = "Stale"
)

// Outcome is the manager's answer to a handover. Extra holds the provider's
// fields of the new grant that are not secret (Notion's workspace name), for
// the page the person sees.
type Outcome struct {
	Result Result
	Extra  map[string]string
}

// HandoverSecretName is the Secret of a handover: a hash of the state it
// came from, so a replayed callback cannot create a second one.
func HandoverSecretName(state string) string {
	return "oauth-handover-" + capability.Hash(state)[:32]
}

// Handovers is the webhook's side: it writes a handover and waits for the
// manager's outcome.
type Handovers struct {
	// Reader should be the webhook's informer cache of its own namespace:
	// waiting then costs no API call.
	Reader client.Reader
	Writer client.Client
	// Namespace is the webhook's own (where the states live).
	Namespace string
	// Wait is DefaultHandoverWait when zero.
	Wait time.Duration
}

// Create writes the handover of a consumed state (state is the value the
// provider echoed, which names the Secret).
func (h *Handovers) Create(ctx context.Context, state string, ho Handover) (types.NamespacedName, error) {
	key := types.NamespacedName{Namespace: h.Namespace, Name: HandoverSecretName(state)}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace,
			Labels: map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue, HandoverLabel: ho.Target}},
		Type: corev1.SecretTypeOpaque,
		StringData: map[string]string{handoverKeyTarget: ho.Target, handoverKeyNamespace: ho.Namespace, handoverKeyName: ho.Name,
			handoverKeyUID: string(ho.ResourceUID), handoverKeyConnectHash: ho.ConnectTokenHash,
			handoverKeyCode: ho.Code, handoverKeyVerifier: ho.Verifier, handoverKeyRedirectURI: ho.RedirectURI},
	}
	if err := h.Writer.Create(ctx, sec); err != nil {
		return key, fmt.Errorf("hand the grant over: %w", err)
	}
	return key, nil
}

// Await waits for the manager's outcome of the handover in key. answered
// is false when the manager has not answered within the wait: the code is
// handed over and will be received when the manager runs.
func (h *Handovers) Await(ctx context.Context, key types.NamespacedName) (out Outcome, answered bool) {
	d := h.Wait
	if d <= 0 {
		d = DefaultHandoverWait
	}
	// A read of the cache every handoverPoll. A failed read (not in the
	// cache yet, or cut short by the deadline) is no answer yet.
	err := wait.PollUntilContextTimeout(ctx, handoverPoll, d, true, func(ctx context.Context) (bool, error) {
		var sec corev1.Secret
		if err := h.Reader.Get(ctx, key, &sec); err != nil {
			return false, nil
		}
		out = outcomeFrom(&sec)
		return out.Result != "", nil
	})
	return out, err == nil
}

// handoverPoll is how often Await looks at the cache.
const handoverPoll = 20 * time.Millisecond

func handoverFrom(sec *corev1.Secret) Handover {
	d := func(k string) string { return string(sec.Data[k]) }
	return Handover{Target: d(handoverKeyTarget), Namespace: d(handoverKeyNamespace), Name: d(handoverKeyName),
		ResourceUID: types.UID(d(handoverKeyUID)), ConnectTokenHash: d(handoverKeyConnectHash),
		Code: d(handoverKeyCode), Verifier: d(handoverKeyVerifier), RedirectURI: d(handoverKeyRedirectURI)}
}

func outcomeFrom(sec *corev1.Secret) Outcome {
	out := Outcome{Result: Result(sec.Data[handoverKeyOutcome]), Extra: map[string]string{}}
	for k, v := range sec.Data {
		if name, ok := strings.CutPrefix(k, handoverExtraPrefix); ok {
			out.Extra[name] = string(v)
		}
	}
	return out
}

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete

// Receiver is the manager's side: it receives the handovers in the
// webhook's namespace, one reconcile each (leader-elected, so exactly one
// replica exchanges a code).
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
	// Keep is HandoverKeep when zero.
	Keep time.Duration
	// Clock is the wall clock when nil.
	Clock clock.PassiveClock
}

func (r *Receiver) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

func (r *Receiver) keep() time.Duration {
	if r.Keep > 0 {
		return r.Keep
	}
	return HandoverKeep
}

// SetupWithManager registers the receiver: handover Secrets carry the
// managed-by label, so the manager's cache holds and watches them.
func (r *Receiver) SetupWithManager(mgr ctrl.Manager) error {
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == r.Namespace && o.GetLabels()[HandoverLabel] != ""
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.Secret{}, builder.WithPredicates(ours)).
		Named("oauth-handover").
		Complete(r)
}

// Reconcile receives one handover, or deletes one received HandoverKeep ago.
func (r *Receiver) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var sec corev1.Secret
	if err := r.Client.Get(ctx, req.NamespacedName, &sec); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if sec.Labels[HandoverLabel] == "" {
		return ctrl.Result{}, nil
	}
	if outcomeFrom(&sec).Result != "" {
		at, _ := time.Parse(time.RFC3339Nano, string(sec.Data[handoverKeyOutcomeAt]))
		if left := at.Add(r.keep()).Sub(r.now()); left > 0 {
			return ctrl.Result{RequeueAfter: left}, nil
		}
		return ctrl.Result{}, deleteSecret(ctx, r.Client, &sec)
	}
	ho := handoverFrom(&sec)
	out, err := r.receive(ctx, ho)
	if err != nil {
		return ctrl.Result{}, err // nothing was exchanged: try again
	}
	logf.FromContext(ctx).Info("OAuth grant received", "target", ho.Target, "resource", ho.Namespace+"/"+ho.Name, "result", out.Result)
	data := map[string][]byte{handoverKeyTarget: sec.Data[handoverKeyTarget], handoverKeyNamespace: sec.Data[handoverKeyNamespace],
		handoverKeyName: sec.Data[handoverKeyName], handoverKeyOutcome: []byte(out.Result),
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
		return ctrl.Result{}, fmt.Errorf("record the OAuth grant's outcome: %w", err)
	}
	return ctrl.Result{RequeueAfter: r.keep()}, nil
}

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
	key := types.NamespacedName{Namespace: ho.Namespace, Name: ho.Name}
	res, err := t.Resolve(ctx, r.Reader, key)
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || err == nil && res.Object.GetUID() != ho.ResourceUID:
		// Forbidden: a namespace a namespaced install does not watch.
		return Outcome{Result: Gone}, nil
	case err != nil:
		return Outcome{}, err
	}
	connectSec, err := r.connectSecret(ctx, res, ho)
	switch {
	case err != nil:
		return Outcome{}, err
	case connectSec == nil:
		return Outcome{Result: Stale}, nil
	}
	store := r.Engine.Store
	clientKey, tokenKey := Keys(key.Namespace, res.Credentials)
	g, err := store.Grant(ctx, tokenKey)
	if err != nil {
		return Outcome{}, err
	}
	if GrantLocked(res, g) {
		return Outcome{Result: Locked}, nil
	}
	creds, err := store.LoadClient(ctx, clientKey)
	switch {
	case IsMissingSecret(err):
		return Outcome{Result: Misconfigured}, nil
	case err != nil:
		return Outcome{}, err
	}
	tok, err := r.Engine.Exchange(ctx, t.ProviderFor(res), creds, ho.Code, ho.RedirectURI, ho.Verifier)
	log := logf.FromContext(ctx)
	switch {
	case errors.Is(err, ErrReauthRequired):
		return Outcome{Result: Refused}, nil
	case err != nil:
		log.Error(err, "OAuth code exchange failed", "target", ho.Target, "resource", key.String())
		return Outcome{Result: Unavailable}, nil
	}
	if err := store.SaveConnected(ctx, tokenKey, tok, res.Reconnect()); err != nil {
		log.Error(err, "the OAuth grant could not be saved", "resource", key.String())
		return Outcome{Result: Unsaved}, nil
	}
	r.rotateConnectToken(ctx, connectSec, ho)
	extra := map[string]string{}
	for _, k := range extraKeys {
		if v := tok.Extra[k]; v != "" {
			extra[k] = v
		}
	}
	return Outcome{Result: Connected, Extra: extra}, nil
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
