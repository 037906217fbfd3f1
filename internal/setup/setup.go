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

// Package setup holds what both binaries configure the same way: the
// scheme and the cache scoping that keeps unrelated Secrets out of memory.
package setup

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// ManagedByLabel and ManagedByValue are v1alpha1's, kept here for the
// callers that configure caches; the API package owns them so that
// internal/oauth needs no import of this package.
const (
	ManagedByLabel = v1alpha1.ManagedByLabel
	ManagedByValue = v1alpha1.ManagedByValue
)

// Scheme returns a scheme with client-go's kinds and the Switchboard API.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// CacheOptions scope the informer cache: Secrets are cached only when they
// carry the managed-by label, so a cluster's thousands of unrelated Secrets
// are never listed into memory, and controllers can still watch the Secrets
// they own.
func CacheOptions(scheme *runtime.Scheme) cache.Options {
	return cache.Options{
		Scheme: scheme,
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Label: labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedByValue})},
		},
	}
}

// ClientOptions make the client read Secrets from the API server, not the
// cache: the Secrets a person creates (OAuth client credentials, webhook
// tokens) do not carry the label, and a cached read would wrongly answer
// NotFound for them.
func ClientOptions() client.CacheOptions {
	return client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}
}
