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
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// NewMapper is both binaries' REST mapper (their MapperProvider):
// controller-runtime's dynamic mapper, with each kind and version it has
// mapped remembered (memoMapper).
func NewMapper(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return &memoMapper{RESTMapper: m}, nil
}

// memoMapper answers RESTMapping for a kind and one version from what it
// answered before. A cache that serves more than one namespace (a
// namespaced install, the webhook's Secrets) asks the mapper whether a
// kind is namespaced on every Get and List, and the dynamic mapper walks
// every group it knows to answer: 8 µs a call on an idle machine, and
// about 0.025 ms of the 0.03 ms the connection-event handler spent on the
// cached Get of its one Secret in the Notion benchmark (hack/bench -suite
// notion), where the whole handler took about 0.155 ms. It remembers only
// mappings found: a kind not found (its CRD not installed yet) is asked
// again, and the dynamic mapper discovers it then.
// A mapping found stays as the dynamic mapper itself keeps it, which
// discovers a group again only when a kind is not found.
type memoMapper struct {
	meta.RESTMapper
	found sync.Map // mappingKey → meta.RESTMapping
}

// mappingKey is a kind and the one version it was asked for.
type mappingKey struct {
	gk      schema.GroupKind
	version string
}

// RESTMapping is the dynamic mapper's, remembered when it asked for one
// version and found it. Each caller gets its own copy.
func (m *memoMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) != 1 {
		return m.RESTMapper.RESTMapping(gk, versions...)
	}
	key := mappingKey{gk: gk, version: versions[0]}
	if v, ok := m.found.Load(key); ok {
		mapping := v.(meta.RESTMapping)
		return &mapping, nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.found.Store(key, *mapping)
	return mapping, nil
}
