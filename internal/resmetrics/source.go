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

package resmetrics

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/index"
)

// source is where a scrape reads the objects: the cache, and the
// namespaces it holds.
type source struct {
	c          client.Reader
	namespaces []string
}

// objects are the cached objects of kind k: the informer's own where
// the cache gives its store, else lists' items (copied by value, not
// deep), a namespace at a time. They are only read.
func (s source) objects(ctx context.Context, k kind) ([]runtime.Object, error) {
	if infs, ok := s.c.(cache.Informers); ok {
		inf, err := infs.GetInformer(ctx, k.obj())
		if err != nil {
			return nil, fmt.Errorf("list %ss: %w", k.name, err)
		}
		if idx := index.OwnIndexer(inf); idx != nil {
			items := idx.List()
			out := make([]runtime.Object, 0, len(items))
			for _, o := range items {
				if o, ok := o.(runtime.Object); ok {
					out = append(out, o)
				}
			}
			return out, nil
		}
	}
	namespaces := s.namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	var out []runtime.Object
	for _, ns := range namespaces {
		l := k.list()
		if err := s.c.List(ctx, l, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("list %ss: %w", k.name, err)
		}
		objs, err := meta.ExtractList(l)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}
