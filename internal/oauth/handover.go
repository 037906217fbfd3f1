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
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	handoverKeySignup      = "signup"
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
	// SignUp: the flow started at the sign-up Namespace/Name names, and
	// the grant makes or reconnects the resource of its account.
	SignUp bool
}

// Result is what became of a handover.
type Result string

// The results of a handover that reached the resource's grant.
const (
	// Connected: the grant is in the token Secret.
	Connected Result = "Connected"
	// Locked: the resource has a grant that works, and no new reconnect
	// value asks to replace it.
	Locked Result = "Locked"
)

// The results of a handover whose resource is no longer the one the flow
// started for, or takes no more grants.
const (
	// Gone: the resource no longer exists (or is another of that name).
	Gone Result = "Gone"
	// Stale: the connect token that started the flow is no longer the
	// resource's (a flow finished with it already, or it was rotated).
	Stale Result = "Stale"
	// Closed: the sign-up is closed (spec.closed) since the flow started.
	Closed Result = "Closed"
	// Full: the sign-up made as many resources as it may, and the grant's
	// account has none yet; nothing was created.
	Full Result = "Full"
)

// The results of a handover that failed on the way: the person may start
// again once the cause is gone.
const (
	// Misconfigured: the OAuth client Secret is missing or incomplete.
	Misconfigured Result = "Misconfigured"
	// Refused: the provider did not accept the code.
	Refused Result = "Refused"
	// Unavailable: the provider did not answer the exchange.
	Unavailable Result = "Unavailable"
	// Unsaved: the grant could not be written.
	Unsaved Result = "Unsaved"
)

// Outcome is the manager's answer to a handover. Extra holds the provider's
// fields of the new grant that are not secret (Notion's workspace name), for
// the page the person sees. Namespace and Name are the resource the grant
// was written for: the handover's, or, for a sign-up, the resource it made
// or reconnected.
type Outcome struct {
	Result          Result
	Extra           map[string]string
	Namespace, Name string
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
			handoverKeyCode: ho.Code, handoverKeyVerifier: ho.Verifier, handoverKeyRedirectURI: ho.RedirectURI,
			handoverKeySignup: signUpFlag(ho.SignUp)},
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
		Code: d(handoverKeyCode), Verifier: d(handoverKeyVerifier), RedirectURI: d(handoverKeyRedirectURI),
		SignUp: d(handoverKeySignup) == "true"}
}

func outcomeFrom(sec *corev1.Secret) Outcome {
	out := Outcome{Result: Result(sec.Data[handoverKeyOutcome]), Extra: map[string]string{},
		Namespace: string(sec.Data[handoverKeyNamespace]), Name: string(sec.Data[handoverKeyName])}
	for k, v := range sec.Data {
		if name, ok := strings.CutPrefix(k, handoverExtraPrefix); ok {
			out.Extra[name] = string(v)
		}
	}
	return out
}
