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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
)

// A sign-up lets anyone who holds an account at the provider make a
// resource of a target for themselves (seed 000 §1.1): its public URL
// starts the provider's consent with no connect token, and the grant makes
// (or reconnects) the resource of the account it is for. The webhook
// still creates no object and reads no Secret outside its namespace:
//
//  1. The sign-up's controller publishes what the start route needs (the
//     client id, whether it is open) in a Secret in the webhook's
//     namespace (PublishSignUp), where the webhook reads its own Secrets.
//  2. The start route keeps a state marked SignUp, bound to the browser,
//     and sends the person to the consent page; the callback hands the
//     code over as for a connect link (Handover.SignUp).
//  3. The Receiver exchanges the code with the sign-up's client, asks the
//     sign-up for the resource of the grant's account (Admit: found by
//     label, or made when the sign-up has room), and writes the grant into
//     that resource's token Secret. The outcome names the resource.

// SignUp is a target's sign-up: how the manager reads one and turns a
// grant into a resource. A kind opts in by giving one to the Receiver
// (wire.SignUps).
type SignUp struct {
	// Target is the oauth.Target the sign-up makes resources of.
	Target string
	// Resolve reads the sign-up (from the API server). A missing one must
	// be an error for which apierrors.IsNotFound is true.
	Resolve func(ctx context.Context, r client.Reader, key types.NamespacedName) (*SignUpResource, error)
	// Account is the provider's id of the account a grant is for (Notion's
	// workspace_id): a sign-up makes one resource per account. "" is a
	// grant the sign-up cannot place, refused.
	Account func(Token) string
	// Admit returns the resource the sign-up made for account, or makes
	// it, with its token Secret named, when the sign-up has room:
	// ErrSignUpFull when it has none. It reads from r (the API server: a
	// cache may not yet show a resource made a moment ago) and writes
	// with c. Names are derived from the account, so two admits of one
	// account make one resource.
	Admit func(ctx context.Context, c client.Client, r client.Reader, su *SignUpResource, account string) (*Resource, error)
}

// SignUpResource is what the Receiver needs of a sign-up.
type SignUpResource struct {
	// Object is the sign-up.
	Object client.Object
	// ClientSecret names its OAuth client Secret, in its namespace.
	ClientSecret string
	// Closed: it takes no new sign-up, and no reconnect either.
	Closed bool
}

// ErrSignUpFull is Admit's answer for a new account past the sign-up's
// bound.
var ErrSignUpFull = errors.New("the sign-up has made as many resources as it may")

// receiveSignUp is receive for a flow a sign-up started: the sign-up must
// still exist (the same one) and be open; the code is exchanged with its
// client; the grant goes to the resource of its account.
func (r *Receiver) receiveSignUp(ctx context.Context, t *Target, ho Handover) (Outcome, error) {
	var su *SignUp
	for i := range r.SignUps {
		if r.SignUps[i].Target == t.Name {
			su = &r.SignUps[i]
		}
	}
	if su == nil {
		return Outcome{Result: Gone}, nil
	}
	key := types.NamespacedName{Namespace: ho.Namespace, Name: ho.Name}
	s, err := su.Resolve(ctx, r.Reader, key)
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || err == nil && s.Object.GetUID() != ho.ResourceUID:
		return Outcome{Result: Gone}, nil
	case err != nil:
		return Outcome{}, err
	case r.Shard != nil && !r.Shard.Matches(labels.Set(s.Object.GetLabels())):
		return Outcome{}, errOtherShard
	case s.Closed:
		return Outcome{Result: Closed}, nil
	}
	tok, failed, err := r.exchangeCode(ctx, t.Provider, types.NamespacedName{Namespace: key.Namespace, Name: s.ClientSecret}, ho)
	if failed != "" || err != nil {
		return Outcome{Result: failed}, err
	}
	log := logf.FromContext(ctx).WithValues("target", ho.Target, "signUp", key.String())
	account := su.Account(tok)
	if account == "" {
		log.Info("the grant names no account; nothing was created")
		return Outcome{Result: Refused}, nil
	}
	res, err := su.Admit(ctx, r.Client, r.Reader, s, account)
	switch {
	case errors.Is(err, ErrSignUpFull):
		return Outcome{Result: Full}, nil
	case err != nil:
		// Nothing is lost by a retry but this exchanged code: the person
		// signs up again.
		log.Error(err, "the sign-up could not make its resource")
		return Outcome{Result: Unsaved}, nil
	}
	if !r.saveGrant(ctx, res, tok, t.Name, t.Provider.Name, key.Name) {
		return Outcome{Result: Unsaved}, nil
	}
	return Outcome{Result: Connected, Extra: publicExtra(tok), Namespace: res.Object.GetNamespace(), Name: res.Object.GetName()}, nil
}

// SignUpLabel marks the Secret in the webhook's namespace where a
// sign-up's controller publishes it (PublishSignUp); its value is the
// OAuth target.
const SignUpLabel = "switchboard.dev/oauth-signup"

// Keys of a published sign-up.
const (
	signUpKeyTarget    = "target"
	signUpKeyNamespace = "namespace"
	signUpKeyName      = "name"
	signUpKeyUID       = "uid"
	signUpKeyClientID  = "client_id"
	signUpKeyClosed    = "closed"
)

// PublishedSignUp is what the webhook's start route reads of a sign-up:
// nothing secret (the client id is in every consent page's URL).
type PublishedSignUp struct {
	Target, Namespace, Name string
	UID                     types.UID
	ClientID                string
	Closed                  bool
}

// SignUpSecretName is where the sign-up of target namespace/name is
// published in the webhook's namespace: a hash, as a label value cannot
// hold the three.
func SignUpSecretName(target, namespace, name string) string {
	return "oauth-signup-" + capability.Hash(target + "/" + namespace + "/" + name)[:32]
}

// PublishSignUp writes p into the webhook's namespace ns (created, or
// updated when it changed). Only the sign-up's controller calls it; the
// Secret carries the managed-by label, so both binaries' caches hold it.
func PublishSignUp(ctx context.Context, c client.Client, ns string, p PublishedSignUp) error {
	data := map[string][]byte{signUpKeyTarget: []byte(p.Target), signUpKeyNamespace: []byte(p.Namespace),
		signUpKeyName: []byte(p.Name), signUpKeyUID: []byte(p.UID), signUpKeyClientID: []byte(p.ClientID),
		signUpKeyClosed: []byte(signUpFlag(p.Closed))}
	key := types.NamespacedName{Namespace: ns, Name: SignUpSecretName(p.Target, p.Namespace, p.Name)}
	var sec corev1.Secret
	err := c.Get(ctx, key, &sec)
	switch {
	case apierrors.IsNotFound(err):
		sec = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns,
			Labels: map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue, SignUpLabel: p.Target}},
			Type: corev1.SecretTypeOpaque, Data: data}
		if err := c.Create(ctx, &sec); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("publish sign-up %s: %w", key, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read published sign-up %s: %w", key, err)
	case publishedFrom(&sec) == p:
		return nil
	}
	sec.Data = data
	if err := c.Update(ctx, &sec); err != nil {
		return fmt.Errorf("publish sign-up %s: %w", key, err)
	}
	return nil
}

// UnpublishSignUp deletes the published sign-up of target
// namespace/name: its start URL then answers that there is no sign-up.
func UnpublishSignUp(ctx context.Context, c client.Client, ns, target, namespace, name string) error {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SignUpSecretName(target, namespace, name)}}
	if err := c.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("unpublish sign-up %s/%s: %w", namespace, name, err)
	}
	return nil
}

// ReadSignUp reads the published sign-up of target namespace/name from
// r (the webhook's cache of its namespace ns). found is false when there
// is none, or what is there is not that sign-up's.
func ReadSignUp(ctx context.Context, r client.Reader, ns, target, namespace, name string) (p PublishedSignUp, found bool, _ error) {
	var sec corev1.Secret
	err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: SignUpSecretName(target, namespace, name)}, &sec)
	switch {
	case apierrors.IsNotFound(err):
		return PublishedSignUp{}, false, nil
	case err != nil:
		return PublishedSignUp{}, false, fmt.Errorf("read sign-up %s/%s: %w", namespace, name, err)
	}
	p = publishedFrom(&sec)
	if sec.Labels[SignUpLabel] != target || p.Target != target || p.Namespace != namespace || p.Name != name || p.ClientID == "" {
		return PublishedSignUp{}, false, nil
	}
	return p, true, nil
}

func publishedFrom(sec *corev1.Secret) PublishedSignUp {
	d := func(k string) string { return string(sec.Data[k]) }
	return PublishedSignUp{Target: d(signUpKeyTarget), Namespace: d(signUpKeyNamespace), Name: d(signUpKeyName),
		UID: types.UID(d(signUpKeyUID)), ClientID: d(signUpKeyClientID), Closed: d(signUpKeyClosed) == "true"}
}
