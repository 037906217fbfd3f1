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

package setup

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// Compact is the transform every object takes on its way into a binary's
// informer cache. It drops managedFields (cache.TransformStripManagedFields)
// and keeps one copy of the strings that thousands of cached objects hold
// alike, where each decoded object had its own: the namespace, finalizers,
// label and annotation keys, owner references' group and kind, a Secret's
// type and data keys, and each condition's type, status and reason. A
// condition's message, which holds object names, is only shared among the
// conditions of one object (Ready and Stalled often say the same thing),
// and the conditions are kept in a slice of their length.
//
// The strings are interned in a pool of at most maxInterned entries of at
// most maxInternedLen bytes, which never shrinks; once it is full, new
// strings are kept as decoded. Only fields whose values come from a small
// set (constants of the code and of the API) are interned, so the pool
// does not fill with names.
//
// A label map whose every key is one of sharedLabelKeys (labels whose
// values are the code's constants, such as a connect Secret's managed-by
// and target) is kept once for every object that holds it alike: tens of
// thousands of connect Secrets held one small map each. At most
// maxSharedLabelSets such maps are kept.
//
// Like the managed-fields transform it changes the object in place: the
// informer hands it the object it decoded and will keep. Nothing changes
// what the object says: Go strings are immutable, so sharing one is
// invisible to a reader, and the deep copies the cache hands out share
// them as they shared the decoded ones. A shared label map is never
// written: the cache's readers get deep copies, with maps of their own,
// and nothing writes to the objects the informers hold.
func Compact() toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	p := &internPool{}
	return func(in any) (any, error) {
		out, err := strip(in)
		if err != nil {
			return out, err
		}
		p.object(out)
		return out, nil
	}
}

const (
	maxInterned        = 4096
	maxInternedLen     = 128
	maxSharedLabelSets = 256
)

// sharedLabelKeys are the labels whose values come from a small set of
// the code's constants: a label map of these alone is shared.
var sharedLabelKeys = map[string]bool{
	v1alpha1.ManagedByLabel:   true,
	v1alpha1.ShardLabel:       true,
	oauth.ConnectTargetLabel:  true,
	linktoken.TokenLabel:      true,
	linktoken.KeysMirrorLabel: true,
}

// internPool keeps each interned string's one copy, and each shared label
// set's (labelSetKey) one map.
type internPool struct {
	strings   bounded[string]
	labelSets bounded[map[string]string]
}

// bounded keeps one value per key, at most max of them, and never
// shrinks.
type bounded[V any] struct {
	m sync.Map
	n atomic.Int64
}

// share gives the value kept for key; else it keeps build()'s while fewer
// than max are kept, and gives it either way.
func (b *bounded[V]) share(key string, max int64, build func() V) V {
	if v, ok := b.m.Load(key); ok {
		return v.(V)
	}
	v := build()
	if b.n.Load() >= max {
		return v
	}
	kept, loaded := b.m.LoadOrStore(key, v)
	if !loaded {
		b.n.Add(1)
	}
	return kept.(V)
}

func (p *internPool) intern(s string) string {
	if s == "" || len(s) > maxInternedLen {
		return s
	}
	return p.strings.share(s, maxInterned, func() string { return s })
}

// keys gives m with its keys interned (a new map: a key cannot be
// replaced in place), or m itself when it is empty.
func keys[V any](p *internPool, m map[string]V) map[string]V {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[p.intern(k)] = v
	}
	return out
}

func (p *internPool) object(o any) {
	if a, ok := o.(metav1.ObjectMetaAccessor); ok {
		if m, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			p.meta(m)
		}
	}
	if s, ok := o.(*corev1.Secret); ok {
		s.Type = corev1.SecretType(p.intern(string(s.Type)))
		s.Data = keys(p, s.Data)
	}
	if so, ok := o.(v1alpha1.StatusObject); ok {
		st := so.GetReconcileStatus()
		st.Conditions = p.conditions(st.Conditions)
	}
}

func (p *internPool) meta(m *metav1.ObjectMeta) {
	m.Namespace = p.intern(m.Namespace)
	for i := range m.Finalizers {
		m.Finalizers[i] = p.intern(m.Finalizers[i])
	}
	m.Labels = p.labels(m.Labels)
	m.Annotations = keys(p, m.Annotations)
	for i := range m.OwnerReferences {
		r := &m.OwnerReferences[i]
		r.APIVersion, r.Kind = p.intern(r.APIVersion), p.intern(r.Kind)
	}
}

// labels gives m's one shared copy when every key of m is one of
// sharedLabelKeys (and the pool has room), or else m with its keys
// interned.
func (p *internPool) labels(m map[string]string) map[string]string {
	key, ok := labelSetKey(m)
	if !ok {
		return keys(p, m)
	}
	return p.labelSets.share(key, maxSharedLabelSets, func() map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[p.intern(k)] = p.intern(v)
		}
		return out
	})
}

// labelSetKey is m's entries in key order, each "key=value" and newline
// separated (neither a label key nor a value holds a newline), when every
// key is one of sharedLabelKeys; ok is false otherwise.
func labelSetKey(m map[string]string) (key string, ok bool) {
	if len(m) == 0 || len(m) > len(sharedLabelKeys) {
		return "", false
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		if !sharedLabelKeys[k] {
			return "", false
		}
		ks = append(ks, k)
	}
	slices.Sort(ks)
	var b strings.Builder
	for _, k := range ks {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(m[k])
		b.WriteByte('\n')
	}
	return b.String(), true
}

// conditions interns cs's strings, and gives cs back in a slice of its
// length: decoding grows it by doubling, and three conditions held room
// for four.
func (p *internPool) conditions(cs []metav1.Condition) []metav1.Condition {
	if cap(cs) > len(cs) {
		cs = append(make([]metav1.Condition, 0, len(cs)), cs...)
	}
	for i := range cs {
		c := &cs[i]
		c.Type, c.Reason = p.intern(c.Type), p.intern(c.Reason)
		c.Status = metav1.ConditionStatus(p.intern(string(c.Status)))
		for j := range i {
			if cs[j].Message == c.Message {
				c.Message = cs[j].Message
				break
			}
		}
	}
	return cs
}

// chain is the transform that runs first, then second.
func chain(first, second toolscache.TransformFunc) toolscache.TransformFunc {
	return func(in any) (any, error) {
		out, err := first(in)
		if err != nil {
			return out, err
		}
		return second(out)
	}
}

// dropConditionMessages is the transform of Scope.ConditionStatusOnly:
// each condition of a Switchboard object loses its message, in place.
func dropConditionMessages(in any) (any, error) {
	if so, ok := in.(v1alpha1.StatusObject); ok {
		cs := so.GetReconcileStatus().Conditions
		for i := range cs {
			cs[i].Message = ""
		}
	}
	return in, nil
}
