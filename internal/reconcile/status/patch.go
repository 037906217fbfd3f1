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

package status

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Patcher writes an object's status once per reconcile. Take it right
// after reading the object, edit the object in memory during the
// reconcile, and call Patch once (deferred): it sends a merge patch of the
// status subresource when the status changed, and nothing when it did not.
type Patcher struct {
	c      client.Client
	before client.Object
	// Writes counts status patches sent, for tests and benchmarks.
	Writes int
}

// NewPatcher snapshots obj.
func NewPatcher(c client.Client, obj client.Object) *Patcher {
	return &Patcher{c: c, before: obj.DeepCopyObject().(client.Object)}
}

// Patch writes obj's status if it differs from the snapshot, then takes a
// new snapshot so that a second call writes only what changed since.
func (p *Patcher) Patch(ctx context.Context, obj client.Object) error {
	if statusEqual(p.before, obj) {
		return nil
	}
	if err := p.c.Status().Patch(ctx, obj, client.MergeFrom(p.before)); err != nil {
		return fmt.Errorf("patch status of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	p.Writes++
	p.before = obj.DeepCopyObject().(client.Object)
	return nil
}

// statusEqual compares the status fields of two objects of one kind.
func statusEqual(a, b client.Object) bool {
	ua, err1 := runtime.DefaultUnstructuredConverter.ToUnstructured(a)
	ub, err2 := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return equality.Semantic.DeepEqual(ua["status"], ub["status"])
}

// Each runs f over items, n at a time, and waits for all: a batch's status
// writes go out together, since the API server, not the upstream, sets
// how fast a batch drains.
func Each[T any](n int, items []T, f func(T)) {
	sem := make(chan struct{}, max(n, 1))
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(it)
		}()
	}
	wg.Wait()
}
