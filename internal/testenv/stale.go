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

package testenv

import (
	"context"
	"reflect"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StaleReads answers Gets of one object with a copy read earlier, as an
// informer cache that has not seen the last writes yet (a slow informer,
// a new leader); every other read goes to Client.
type StaleReads struct {
	client.Client
	Stale client.Object
}

// Get answers for Stale's key, asked with Stale's type, with a copy of
// Stale.
func (s StaleReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if reflect.TypeOf(obj) == reflect.TypeOf(s.Stale) && key == client.ObjectKeyFromObject(s.Stale) {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(s.Stale.DeepCopyObject()).Elem())
		return nil
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

// ListCounting is an informer cache that counts the Lists it answers: a
// test's way to see which reads reach the cache's List.
type ListCounting struct {
	cache.Cache
	Lists atomic.Int64
}

// List counts the List and asks Cache.
func (c *ListCounting) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.Lists.Add(1)
	return c.Cache.List(ctx, list, opts...)
}
