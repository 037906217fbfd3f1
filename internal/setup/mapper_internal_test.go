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
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper maps the kinds it was given and counts the RESTMapping
// calls that reach it.
type countingMapper struct {
	meta.RESTMapper
	calls int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.calls++
	return c.RESTMapper.RESTMapping(gk, versions...)
}

// A kind found once is answered from memory after; a kind not found is
// asked again each time (its CRD may be installed since), and so is a
// call that names no version or several.
func TestTheMapperRemembersOnlyTheMappingsItFound(t *testing.T) {
	secrets := schema.GroupVersion{Version: "v1"}.WithKind("Secret")
	known := meta.NewDefaultRESTMapper(nil)
	known.Add(secrets, meta.RESTScopeNamespace)
	under := &countingMapper{RESTMapper: known}
	m := &memoMapper{RESTMapper: under}

	for range 3 {
		got, err := m.RESTMapping(secrets.GroupKind(), "v1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Scope.Name() != meta.RESTScopeNameNamespace || got.Resource.Resource != "secrets" {
			t.Fatalf("mapping %+v, want the namespaced resource secrets", got)
		}
		got.Resource.Resource = "changed by a caller"
	}
	if under.calls != 1 {
		t.Errorf("three calls for one kind reached the dynamic mapper %d times, want 1", under.calls)
	}

	widgets := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	for range 2 {
		if _, err := m.RESTMapping(widgets, "v1"); !meta.IsNoMatchError(err) {
			t.Fatalf("an unknown kind: %v, want a no-match error", err)
		}
	}
	if under.calls != 3 {
		t.Errorf("two calls for a kind not found reached the dynamic mapper %d times in all, want 3", under.calls)
	}
	known.Add(widgets.WithVersion("v1"), meta.RESTScopeRoot)
	if got, err := m.RESTMapping(widgets, "v1"); err != nil || got.Scope.Name() != meta.RESTScopeNameRoot {
		t.Errorf("the kind once installed: %+v, %v; want its cluster-scoped mapping", got, err)
	}

	before := under.calls
	_, _ = m.RESTMapping(secrets.GroupKind())
	_, _ = m.RESTMapping(secrets.GroupKind(), "v1", "v1beta1")
	if under.calls != before+2 {
		t.Errorf("calls with no version and with two reached the dynamic mapper %d times, want 2", under.calls-before)
	}
}
