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
	"maps"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
)

// Keys of the connect Secret.
const (
	// ConnectTokenKey holds the connect link's one-use token.
	ConnectTokenKey = "token"
	// ConnectURLKey holds the whole connect link, for a person to open
	// (only when the manager knows the webhook's public URL).
	ConnectURLKey = "url"
	// ConnectExpiresKey holds when the link stops starting a flow
	// (RFC 3339).
	ConnectExpiresKey = "expires_at"
	// ConnectPreviousKey and ConnectPreviousUntilKey hold the hex SHA-256
	// of the link an expiry replaced, and until when a flow it started may
	// still hand its code over (StateTTL after that expiry).
	ConnectPreviousKey      = "previous_token_sha256"
	ConnectPreviousUntilKey = "previous_until"
)

// ConnectTargetLabel, on a connect Secret, names the OAuth target (the
// route's {target}) it opens.
const ConnectTargetLabel = "switchboard.dev/oauth-connect"

// ConnectTTL is how long a connect link starts a flow. The link carries
// its token in the query string, so it can land in an ingress's access
// log: it works once, and only for this long. The manager mints the next
// one when it expires; a flow the old one started just before may still
// finish (ConnectPreviousKey).
const ConnectTTL = time.Hour

// connectTokenBytes is the connect token's entropy: 256 bits.
const connectTokenBytes = 32

// ErrConnectSecretConflict means a Secret with the name of one the
// resource owns (its connect Secret, a CalendarWatch's channel Secret)
// exists and the resource does not control it: the operator will not take
// over or overwrite a Secret it did not make. A person must rename or
// delete it.
var ErrConnectSecretConflict = errors.New("a Secret of that name exists and is not owned by this resource")

// ErrConnectSecretUnseen is EnsureConnectSecret's answer when the cache
// shows no connect Secret but the API server has one (a cache behind its
// own writes, or a concurrent reconcile): the token it would have minted
// was not written, so it must not be published. The next reconcile, once
// the cache shows the Secret, judges the one that won.
var ErrConnectSecretUnseen = errors.New("the connect Secret exists, but the cache does not show it yet")

// ConnectSecretName is the name of the Secret that holds a resource's
// connect link. The name is fixed by the resource's name so that the
// webhook finds it without reading the resource first (one API read for
// every refusal, whether the resource exists or not).
func ConnectSecretName(owner string) string { return owner + "-oauth-connect" }

// ConnectURL is the connect link of a resource: publicURL is the webhook
// server's public base URL, target the route's {target}.
func ConnectURL(publicURL, target, namespace, name, token string) string {
	q := url.Values{"namespace": {namespace}, "name": {name}, "token": {token}}
	return strings.TrimSuffix(publicURL, "/") + "/oauth/" + target + "/connect?" + q.Encode()
}

// ConnectLink is a resource's connect Secret as EnsureConnectSecret left
// it.
type ConnectLink struct {
	// Name is the Secret's, for status.connectSecretName.
	Name string
	// Token is the link's one-use token (its hash goes into status).
	Token string
	// Minted is set when this call wrote a new token.
	Minted bool
	// Expires is when the link stops starting a flow (ConnectTTL after it
	// was minted) and the next reconcile mints a new one.
	Expires time.Time

	// previousHash and previousUntil are the expired link's, whose flows
	// may still finish.
	previousHash  string
	previousUntil time.Time
}

// EnsureConnectSecret makes sure owner has its connect Secret: a random
// one-use token (key `token`) and, when publicURL is known, the whole link
// (key `url`). The Secret is controlled by owner (deleted with it; its
// deletion reconciles owner when the controller Owns Secrets) and carries
// the managed-by label, so the manager's cache holds and watches it. The
// manager deletes it after a successful callback (Receiver); the next
// reconcile mints a new token.
//
// An existing Secret is kept as it is unless its link is stale (publicURL
// changed), its token is missing, or it has expired (ConnectTTL after it
// was minted, as of now): then a new token is minted, and the expired
// one's hash is kept for StateTTL so that a flow it started just before
// can finish (ConnectTokenCurrent). One that a restore brought back
// without owner (ClaimSecret) is taken back with a new token; one that
// another object controls, or that the operator did not write, is
// ErrConnectSecretConflict.
//
// The link is handed to publish, when given, before the Secret shows it:
// the caller publishes its token's hash where the connect route checks
// it, so that a link is never shown before it works (a person, or a
// script, may open it the moment it appears; make e2e did, and was
// refused). When publish fails, no link is written.
func EnsureConnectSecret(ctx context.Context, c client.Client, owner client.Object, target, publicURL string, now time.Time, publish func(ConnectLink) error) (ConnectLink, error) {
	name := ConnectSecretName(owner.GetName())
	key := types.NamespacedName{Namespace: owner.GetNamespace(), Name: name}
	var sec corev1.Secret
	err := c.Get(ctx, key, &sec)
	switch {
	case apierrors.IsNotFound(err):
		return createConnectSecret(ctx, c, owner, key, target, publicURL, now, publish)
	case err != nil:
		return ConnectLink{}, fmt.Errorf("read connect Secret %s: %w", key, err)
	}
	claim, err := ClaimSecret(ctx, c, owner, &sec)
	switch {
	case err != nil:
		return ConnectLink{}, err
	case claim == Foreign:
		return ConnectLink{}, fmt.Errorf("connect Secret %s: %w", key, ErrConnectSecretConflict)
	case claim == Claimed:
		// Restored from a backup (or planted): its token is not trusted,
		// and no flow it started can still be finishing. A new one is
		// minted below.
		sec.Data = nil
	}
	link := ConnectLink{Name: name, Token: string(sec.Data[ConnectTokenKey]), previousHash: string(sec.Data[ConnectPreviousKey])}
	link.Expires, _ = time.Parse(time.RFC3339, string(sec.Data[ConnectExpiresKey]))
	link.previousUntil, _ = time.Parse(time.RFC3339, string(sec.Data[ConnectPreviousUntilKey]))
	// A link without an expiry (written by an older manager) or past it is
	// minted anew.
	expired := link.Expires.IsZero() || !now.Before(link.Expires)
	if link.Token != "" && !expired && string(sec.Data[ConnectURLKey]) == connectURLOrEmpty(publicURL, target, owner, link.Token) {
		return link, nil // nothing changed: write nothing
	}
	if link.Token != "" && expired {
		link.previousHash, link.previousUntil = capability.Hash(link.Token), link.Expires.Add(StateTTL)
	}
	if link.Token == "" || expired {
		link.Token, link.Minted, link.Expires = capability.Random(connectTokenBytes), true, expiry(now)
	}
	// Published again when only the link moved: a no-op for a caller that
	// published this token already, and the order holds after a failure.
	if err := publishLink(publish, link); err != nil {
		return ConnectLink{}, err
	}
	sec.Data = connectData(publicURL, target, owner, link)
	if err := c.Update(ctx, &sec); err != nil {
		return ConnectLink{}, fmt.Errorf("update connect Secret %s: %w", key, err)
	}
	return link, nil
}

// createConnectSecret is EnsureConnectSecret for an owner whose cache
// shows no connect Secret. With publish, the Secret is created empty, the
// token published, and the token and link written: a Secret that already
// exists (a cache behind the API server) is then found before anything is
// published, so the hash of a link people may be reading is not replaced
// by that of a token no Secret holds, and no token is shown before its
// hash is published.
func createConnectSecret(ctx context.Context, c client.Client, owner client.Object, key types.NamespacedName, target, publicURL string, now time.Time, publish func(ConnectLink) error) (ConnectLink, error) {
	link := ConnectLink{Name: key.Name, Token: capability.Random(connectTokenBytes), Minted: true, Expires: expiry(now)}
	var data map[string][]byte
	if publish == nil {
		data = connectData(publicURL, target, owner, link)
	}
	sec, created, err := createOwned(ctx, c, owner, key, map[string]string{ConnectTargetLabel: target}, data)
	switch {
	case err != nil:
		return ConnectLink{}, err
	case !created:
		return ConnectLink{}, fmt.Errorf("connect Secret %s: %w", key, ErrConnectSecretUnseen)
	case publish == nil:
		return link, nil
	}
	if err := publishLink(publish, link); err != nil {
		return ConnectLink{}, err
	}
	sec.Data = connectData(publicURL, target, owner, link)
	if err := c.Update(ctx, sec); err != nil {
		return ConnectLink{}, fmt.Errorf("write the link into connect Secret %s: %w", key, err)
	}
	return link, nil
}

// publishLink hands link to publish, when there is one.
func publishLink(publish func(ConnectLink) error, link ConnectLink) error {
	if publish == nil {
		return nil
	}
	if err := publish(link); err != nil {
		return fmt.Errorf("publish the connect token's hash: %w", err)
	}
	return nil
}

// ConnectTokenCurrent reports whether a flow started with the token whose
// hash is tokenHash may still hand its code over, by the connect Secret as
// it is at now: the Secret still holds that token, or it is the link an
// expiry replaced less than StateTTL ago. A link is one-use: a successful
// connect deletes the Secret (and the resource's other states).
func ConnectTokenCurrent(sec *corev1.Secret, tokenHash string, now time.Time) bool {
	if tokenHash == "" {
		return false
	}
	if capability.Equal(capability.Hash(string(sec.Data[ConnectTokenKey])), tokenHash) {
		return true
	}
	until, err := time.Parse(time.RFC3339, string(sec.Data[ConnectPreviousUntilKey]))
	return err == nil && now.Before(until) && capability.Equal(string(sec.Data[ConnectPreviousKey]), tokenHash)
}

// CreateOwnedSecret creates a Secret that owner controls (deleted with it;
// its changes reconcile owner when the controller Owns Secrets), with the
// managed-by label and extra labels, so the manager's cache holds and
// watches it. created is false when a Secret of that name already
// existed: a cache behind the API server, or a concurrent reconcile; the
// next reconcile judges the Secret that won.
func CreateOwnedSecret(ctx context.Context, c client.Client, owner client.Object, key types.NamespacedName, labels map[string]string, data map[string][]byte) (created bool, _ error) {
	_, created, err := createOwned(ctx, c, owner, key, labels, data)
	return created, err
}

// createOwned is CreateOwnedSecret, returning the Secret it created.
func createOwned(ctx context.Context, c client.Client, owner client.Object, key types.NamespacedName, labels map[string]string, data map[string][]byte) (*corev1.Secret, bool, error) {
	all := map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue}
	maps.Copy(all, labels)
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: all},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
	if err := controllerutil.SetControllerReference(owner, sec, c.Scheme()); err != nil {
		return nil, false, fmt.Errorf("own Secret %s: %w", key, err)
	}
	err := c.Create(ctx, sec)
	if apierrors.IsAlreadyExists(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("create Secret %s: %w", key, err)
	}
	return sec, true, nil
}

// expiry is a link's, minted at now: whole seconds, as status shows it.
func expiry(now time.Time) time.Time { return now.Add(ConnectTTL).UTC().Truncate(time.Second) }

func connectData(publicURL, target string, owner client.Object, link ConnectLink) map[string][]byte {
	data := map[string][]byte{ConnectTokenKey: []byte(link.Token), ConnectExpiresKey: []byte(link.Expires.Format(time.RFC3339))}
	if link.previousHash != "" {
		data[ConnectPreviousKey] = []byte(link.previousHash)
		data[ConnectPreviousUntilKey] = []byte(link.previousUntil.UTC().Format(time.RFC3339))
	}
	if u := connectURLOrEmpty(publicURL, target, owner, link.Token); u != "" {
		data[ConnectURLKey] = []byte(u)
	}
	return data
}

func connectURLOrEmpty(publicURL, target string, owner client.Object, token string) string {
	if publicURL == "" {
		return ""
	}
	return ConnectURL(publicURL, target, owner.GetNamespace(), owner.GetName(), token)
}
