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

package runner

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Written remembers, per object, what this manager last wrote of it until
// the informer cache shows it. A reconcile queued by the write's own
// side effects (a child's event) often reads a copy from before the
// write, and acting on that copy would do the work again: open a second
// channel, sync a second time. The zero value is ready to use.
type Written[V comparable] struct{ m sync.Map }

// Remember records v as written for uid.
func (w *Written[V]) Remember(uid types.UID, v V) { w.m.Store(uid, v) }

// Forget drops what was remembered for uid.
func (w *Written[V]) Forget(uid types.UID) { w.m.Delete(uid) }

// Ahead returns what was written for uid while the copy at hand does not
// show it (shown answers for the copy), and true; once a copy shows it,
// it is forgotten and Ahead answers false.
func (w *Written[V]) Ahead(uid types.UID, shown func(V) bool) (V, bool) {
	var none V
	v, ok := w.m.Load(uid)
	if !ok {
		return none, false
	}
	if shown(v.(V)) {
		w.m.CompareAndDelete(uid, v)
		return none, false
	}
	return v.(V), true
}
