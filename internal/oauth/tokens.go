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
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// TokenSource is the part of the engine controllers use: a grant, refreshed
// first when less than margin remains or when force is set. *Engine is
// the one implementation; unit tests of phase logic use a fake
// (testenv.FakeTokens).
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

// ErrClientIncomplete means the OAuth client Secret lacks a key.
var ErrClientIncomplete = errors.New("OAuth client Secret is incomplete")

// IsMissingSecret reports a Secret or key a person must create: NotFound,
// or an incomplete client Secret. Any other error reading a Secret is
// transient.
func IsMissingSecret(err error) bool {
	return apierrors.IsNotFound(err) || errors.Is(err, ErrClientIncomplete)
}
