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
	"context"
	"reflect"
	"strings"
	"sync"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/switchboard-dev/switchboard/internal/index"
)

// indexedLists answers the webhook's routes' one kind of List, the
// objects whose indexed field holds a value in any namespace, read
// without copies (client.MatchingFields of one field, and
// client.UnsafeDisableDeepCopy): every request a route takes begins
// with one. It asks the informer's own index, as the cache's List does
// in the end, without the way there: the client and each layer of the
// cache find the list's kind again by reflection, the cache makes an
// empty object of it to find its informer, and parses the options into a
// field selector. Timed inside the webhook in the Notion benchmark at one
// client (hack/bench -suite notion, medians), the List took about 55 µs
// of a route's request, as much as the rest of the route before its
// create; read from the index, 25–30 µs in the same stretches of the run.
//
// It answers only what the cache's List would: the same objects, of the
// same index (index.RegisterFor keeps it, in the keys that List reads).
// It leaves to that List (answering false) a list that is not typed, a
// kind whose informer keeps no index of its own to ask (the cache of
// several watched namespaces), and every value the index has no object
// for, so a request to a path nobody listens on costs what it did.
type indexedLists struct {
	informers cache.Informers
	scheme    *runtime.Scheme
	// indexers holds, by the list's type, its kind's informer's index, or
	// a nil Indexer where there is none to ask.
	indexers sync.Map
}

// list fills out with the objects whose field holds value, if it can
// (true); false leaves the List to the cache.
func (l *indexedLists) list(ctx context.Context, out client.ObjectList, field, value string) (bool, error) {
	idx := l.indexer(ctx, out)
	if idx == nil {
		return false, nil
	}
	found, err := index.AcrossNamespaces(idx, field, value)
	if err != nil || len(found) == 0 {
		return false, nil
	}
	objs := make([]runtime.Object, 0, len(found))
	for _, f := range found {
		obj, ok := f.(runtime.Object)
		if !ok {
			return false, nil
		}
		objs = append(objs, obj)
	}
	return true, apimeta.SetList(out, objs)
}

// indexer is the index of out's kind's informer, found at the kind's
// first List; nil where there is none to ask.
func (l *indexedLists) indexer(ctx context.Context, out client.ObjectList) toolscache.Indexer {
	switch out.(type) {
	case runtime.Unstructured, *metav1.PartialObjectMetadataList:
		return nil // one Go type for every kind
	}
	t := reflect.TypeOf(out)
	if v, ok := l.indexers.Load(t); ok {
		idx, _ := v.(toolscache.Indexer)
		return idx
	}
	gvk, err := apiutil.GVKForObject(out, l.scheme)
	if err != nil {
		return nil
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	obj, err := l.scheme.New(gvk)
	if err != nil {
		return nil
	}
	cobj, ok := obj.(client.Object)
	if !ok {
		return nil
	}
	// The cache's own informer of the kind, which its List would start
	// too; not remembered when it cannot be had now.
	inf, err := l.informers.GetInformer(ctx, cobj)
	if err != nil {
		return nil
	}
	idx := index.OwnIndexer(inf)
	l.indexers.Store(t, idx)
	return idx
}

// indexedQuery is the field and value of a List the index can answer:
// one exact field in every namespace, read without copies, and nothing
// else.
func indexedQuery(opts []client.ListOption) (field, value string, ok bool) {
	uncopied := false
	for _, o := range opts {
		switch o := o.(type) {
		case client.MatchingFields:
			if len(o) != 1 || ok {
				return "", "", false
			}
			for f, v := range o {
				field, value, ok = f, v, true
			}
		case client.UnsafeDisableDeepCopyOption:
			uncopied = bool(o)
		default:
			return "", "", false
		}
	}
	return field, value, ok && uncopied
}
