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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// Secret keys of the token store (documented on OAuthCredentials in the
// API): the grant, and what the provider said about it.
const (
	KeyAccessToken  = "access_token"
	KeyRefreshToken = "refresh_token"
	KeyTokenType    = "token_type"
	KeyExpiry       = "expiry" // RFC 3339
	// KeyIssuedAt is when the access token was issued (RFC 3339): with the
	// expiry it gives the token's life, which bounds how early a refresh
	// may come (RefreshAt).
	KeyIssuedAt     = "issued_at"
	KeyClientID     = "client_id"
	KeyClientSecret = "client_secret"
	// KeyGrantedAt is when the OAuth callback stored the grant (RFC 3339).
	// Refreshes keep it, so it names one grant: a resource can remember
	// that the provider refused this grant without holding any token.
	KeyGrantedAt = "granted_at"
	// KeySubject is the account the grant belongs to, when the provider
	// says (Google: the id_token's sub claim, with the openid scope).
	KeySubject = "sub"
	// KeyScope is the scope the provider granted, when it says (Discord).
	KeyScope = "scope"
)

// Token is a grant. Extra holds provider fields kept beside it (Notion's
// workspace_id, workspace_name, bot_id, duplicated_template_id); they are
// not secret but belong to the grant, so they live in the same Secret.
type Token struct {
	AccessToken, RefreshToken, TokenType string
	Expiry                               time.Time
	// Issued is when the access token was issued; zero for a grant stored
	// before Switchboard kept it.
	Issued time.Time
	Extra  map[string]string
	// Refreshed is set by Engine.Ensure when this call (or the flight it
	// joined) refreshed the grant; it is not stored.
	Refreshed bool
	// ReconnectedFor is the switchboard.dev/reconnect value the grant was
	// written for (an annotation of the Secret, kept by refreshes); it is
	// not stored with the grant's keys.
	ReconnectedFor string
}

// ClientCredentials are an OAuth client's id and secret.
type ClientCredentials struct{ ID, Secret string }

// Store reads and writes grants in Secrets. It reads from the API server,
// never a cache, so a refresh always starts from the newest pair.
type Store struct {
	Reader client.Reader
	Writer client.Client
}

// stored is a token with the Secret's resourceVersion, for optimistic
// concurrency, and the metadata an update must keep.
type stored struct {
	Token
	resourceVersion     string
	exists              bool
	labels, annotations map[string]string
	owners              []metav1.OwnerReference
}

func (s *Store) load(ctx context.Context, key types.NamespacedName) (stored, error) {
	var sec corev1.Secret
	if err := s.Reader.Get(ctx, key, &sec); err != nil {
		if apierrors.IsNotFound(err) {
			return stored{}, nil
		}
		return stored{}, fmt.Errorf("read token Secret %s: %w", key, err)
	}
	return storedFrom(&sec), nil
}

// storedFrom reads a grant out of its Secret.
func storedFrom(sec *corev1.Secret) stored {
	t := Token{Extra: map[string]string{}}
	for k, v := range sec.Data {
		switch k {
		case KeyAccessToken:
			t.AccessToken = string(v)
		case KeyRefreshToken:
			t.RefreshToken = string(v)
		case KeyTokenType:
			t.TokenType = string(v)
		case KeyExpiry:
			t.Expiry, _ = time.Parse(time.RFC3339, string(v))
		case KeyIssuedAt:
			t.Issued, _ = time.Parse(time.RFC3339, string(v))
		default:
			t.Extra[k] = string(v)
		}
	}
	t.ReconnectedFor = sec.Annotations[v1alpha1.ReconnectedForAnnotation]
	return stored{Token: t, resourceVersion: sec.ResourceVersion, exists: true, labels: sec.Labels, annotations: sec.Annotations,
		owners: sec.OwnerReferences}
}

// Load reads a grant; ok is false when the Secret does not exist.
func (s *Store) Load(ctx context.Context, key types.NamespacedName) (Token, bool, error) {
	st, err := s.load(ctx, key)
	return st.Token, st.exists, err
}

// write stores the whole grant in one update, failing with a Conflict when
// the Secret changed since prev was read (or exists when prev says not).
// The Secret's labels are kept, and the annotations given are written: a
// refresh keeps what a callback recorded (ReconnectedForAnnotation).
func (s *Store) write(ctx context.Context, key types.NamespacedName, t Token, prev stored, annotations map[string]string) error {
	data := map[string][]byte{}
	for k, v := range t.Extra {
		data[k] = []byte(v)
	}
	data[KeyAccessToken] = []byte(t.AccessToken)
	data[KeyRefreshToken] = []byte(t.RefreshToken)
	data[KeyTokenType] = []byte(t.TokenType)
	if !t.Expiry.IsZero() {
		data[KeyExpiry] = []byte(t.Expiry.UTC().Format(time.RFC3339))
	}
	if !t.Issued.IsZero() {
		data[KeyIssuedAt] = []byte(t.Issued.UTC().Format(time.RFC3339))
	}
	labels := map[string]string{}
	for k, v := range prev.labels {
		labels[k] = v
	}
	// The label puts the Secret in the operator's caches, so that a new
	// grant reconciles its resource at once.
	labels[v1alpha1.ManagedByLabel] = v1alpha1.ManagedByValue
	sec := &corev1.Secret{
		// Its owners are kept: a Secret its resource owns (a sign-up's
		// integration) goes with it.
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace,
			Labels: labels, Annotations: annotations, OwnerReferences: prev.owners},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
	if !prev.exists {
		return s.Writer.Create(ctx, sec)
	}
	// Update with the resourceVersion read: a concurrent writer makes this
	// a Conflict instead of a silent overwrite.
	sec.ResourceVersion = prev.resourceVersion
	return s.Writer.Update(ctx, sec)
}

// Save writes a new grant (after an OAuth callback), replacing any.
func (s *Store) Save(ctx context.Context, key types.NamespacedName, t Token) error {
	return s.saveNew(ctx, key, t, func(prev map[string]string) map[string]string { return prev })
}

// SaveConnected is Save for the OAuth callback: it records on the Secret
// the switchboard.dev/reconnect value the grant was written for (none when
// reconnectedFor is empty), so that the same value cannot replace it again.
func (s *Store) SaveConnected(ctx context.Context, key types.NamespacedName, t Token, reconnectedFor string) error {
	return s.saveNew(ctx, key, t, func(prev map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range prev {
			out[k] = v
		}
		delete(out, v1alpha1.ReconnectedForAnnotation)
		if reconnectedFor != "" {
			out[v1alpha1.ReconnectedForAnnotation] = reconnectedFor
		}
		return out
	})
}

func (s *Store) saveNew(ctx context.Context, key types.NamespacedName, t Token, annotate func(map[string]string) map[string]string) error {
	for {
		prev, err := s.load(ctx, key)
		if err != nil {
			return err
		}
		err = s.write(ctx, key, t, prev, annotate(prev.annotations))
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("write token Secret %s: %w", key, err)
		}
		return nil
	}
}

// GrantState is what the OAuth routes must know of a stored grant to decide
// whether a callback may replace it.
type GrantState struct {
	// HasRefreshToken: the Secret holds a refresh token (it may still be
	// refused by the provider; the resource's Authenticated condition says).
	HasRefreshToken bool
	// ReconnectedFor is the switchboard.dev/reconnect value the grant was
	// written for.
	ReconnectedFor string
}

// Grant reads what the OAuth routes need of a grant; a missing Secret is
// the zero GrantState.
func (s *Store) Grant(ctx context.Context, key types.NamespacedName) (GrantState, error) {
	st, err := s.load(ctx, key)
	if err != nil {
		return GrantState{}, err
	}
	return GrantState{HasRefreshToken: st.RefreshToken != "", ReconnectedFor: st.annotations[v1alpha1.ReconnectedForAnnotation]}, nil
}

// LoadClient reads client_id and client_secret.
func (s *Store) LoadClient(ctx context.Context, key types.NamespacedName) (ClientCredentials, error) {
	var sec corev1.Secret
	if err := s.Reader.Get(ctx, key, &sec); err != nil {
		return ClientCredentials{}, fmt.Errorf("read OAuth client Secret %s: %w", key, err)
	}
	c := ClientCredentials{ID: string(sec.Data[KeyClientID]), Secret: string(sec.Data[KeyClientSecret])}
	if c.ID == "" || c.Secret == "" {
		return ClientCredentials{}, fmt.Errorf("%w: %s needs keys %s and %s", ErrClientIncomplete, key, KeyClientID, KeyClientSecret)
	}
	return c, nil
}

// Forget deletes the token Secret, if its grant is still the one in t: a
// newer grant written since (a callback) is kept. A missing Secret is
// success.
func (s *Store) Forget(ctx context.Context, key types.NamespacedName, t Token) error {
	st, err := s.load(ctx, key)
	if err != nil || !st.exists {
		return err
	}
	if st.RefreshToken != t.RefreshToken {
		return nil
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	rv := st.resourceVersion
	err = s.Writer.Delete(ctx, sec, client.Preconditions{ResourceVersion: &rv})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone already, or rewritten: a newer grant is not ours to delete
	}
	if err != nil {
		return fmt.Errorf("delete token Secret %s: %w", key, err)
	}
	return nil
}
