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

package receivelink

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// loadCredentials reads the S3 key pair (blob.KeyAccessKeyID,
// blob.KeySecretAccessKey) from the Secret ref names in namespace: the
// controller reads Secrets, package blob is handed the Credentials. A
// missing Secret keeps its NotFound (apierrors.IsNotFound sees it); a
// missing or empty key wraps blob.ErrCredentialsIncomplete. The errors
// name the Secret and the key, never a value.
func loadCredentials(ctx context.Context, r client.Reader, namespace string, ref v1alpha1.SecretReference) (blob.Credentials, error) {
	var sec corev1.Secret
	if err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, &sec); err != nil {
		return blob.Credentials{}, fmt.Errorf("read S3 credentials Secret %s/%s: %w", namespace, ref.Name, err)
	}
	creds := blob.Credentials{AccessKeyID: string(sec.Data[blob.KeyAccessKeyID]), SecretAccessKey: string(sec.Data[blob.KeySecretAccessKey])}
	for _, kv := range [][2]string{{blob.KeyAccessKeyID, creds.AccessKeyID}, {blob.KeySecretAccessKey, creds.SecretAccessKey}} {
		if key, v := kv[0], kv[1]; v == "" {
			return blob.Credentials{}, fmt.Errorf("S3 credentials Secret %s/%s has no key %q: %w", namespace, ref.Name, key, blob.ErrCredentialsIncomplete)
		}
	}
	return creds, nil
}
