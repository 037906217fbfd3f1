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
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

func TestLoadCredentials(t *testing.T) {
	secret := func(name string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: data}
	}
	good := blob.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG"}
	r := fake.NewClientBuilder().WithObjects(
		secret("good", good.SecretData()),
		secret("no-secret", map[string][]byte{blob.KeyAccessKeyID: []byte("AKIDEXAMPLE")}),
		secret("empty-id", map[string][]byte{blob.KeyAccessKeyID: {}, blob.KeySecretAccessKey: []byte("wJalrXUtnFEMI/K7MDENG")}),
	).Build()
	ctx := context.Background()

	t.Run("reads both keys", func(t *testing.T) {
		got, err := loadCredentials(ctx, r, "ns", v1alpha1.SecretReference{Name: "good"})
		if err != nil || got != good {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("a missing Secret stays NotFound", func(t *testing.T) {
		_, err := loadCredentials(ctx, r, "ns", v1alpha1.SecretReference{Name: "absent"})
		if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), "ns/absent") {
			t.Fatalf("got %v, want NotFound naming ns/absent", err)
		}
	})
	for name, key := range map[string]string{"no-secret": blob.KeySecretAccessKey, "empty-id": blob.KeyAccessKeyID} {
		t.Run("a Secret without "+key+" is incomplete", func(t *testing.T) {
			_, err := loadCredentials(ctx, r, "ns", v1alpha1.SecretReference{Name: name})
			if !errors.Is(err, blob.ErrCredentialsIncomplete) || !strings.Contains(err.Error(), key) {
				t.Fatalf("got %v, want ErrCredentialsIncomplete naming %s", err, key)
			}
			if strings.Contains(err.Error(), "wJalr") {
				t.Fatalf("the error shows the secret: %v", err)
			}
		})
	}
}
