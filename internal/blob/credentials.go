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

package blob

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// The keys of a credentials Secret (spec.blob.credentialsSecretRef).
const (
	KeyAccessKeyID     = "access_key_id"
	KeySecretAccessKey = "secret_access_key"
)

// ErrCredentialsIncomplete means the credentials Secret lacks a key or
// holds an empty one: a person must fix the Secret.
var ErrCredentialsIncomplete = errors.New("S3 credentials Secret is incomplete")

// LoadCredentials reads the key pair from the Secret ref names in
// namespace. A missing Secret keeps its NotFound (apierrors.IsNotFound
// sees it); a missing or empty key wraps ErrCredentialsIncomplete. The
// errors name the Secret and the key, never a value.
func LoadCredentials(ctx context.Context, r client.Reader, namespace string, ref v1alpha1.SecretReference) (Credentials, error) {
	var sec corev1.Secret
	if err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, &sec); err != nil {
		return Credentials{}, fmt.Errorf("read S3 credentials Secret %s/%s: %w", namespace, ref.Name, err)
	}
	return CredentialsFrom(&sec)
}

// CredentialsFrom reads the key pair from a Secret already read (the
// webhook keeps them a while rather than read them per resolve).
func CredentialsFrom(sec *corev1.Secret) (Credentials, error) {
	namespace, ref := sec.Namespace, v1alpha1.SecretReference{Name: sec.Name}
	creds := Credentials{AccessKeyID: string(sec.Data[KeyAccessKeyID]), SecretAccessKey: string(sec.Data[KeySecretAccessKey])}
	for _, kv := range [][2]string{{KeyAccessKeyID, creds.AccessKeyID}, {KeySecretAccessKey, creds.SecretAccessKey}} {
		if key, v := kv[0], kv[1]; v == "" {
			return Credentials{}, fmt.Errorf("S3 credentials Secret %s/%s has no key %q: %w", namespace, ref.Name, key, ErrCredentialsIncomplete)
		}
	}
	return creds, nil
}

// SecretData is the credentials as a Secret's data, for the demo and tests
// that create the Secret a ReceiveLink names.
func (c Credentials) SecretData() map[string][]byte {
	return map[string][]byte{KeyAccessKeyID: []byte(c.AccessKeyID), KeySecretAccessKey: []byte(c.SecretAccessKey)}
}
