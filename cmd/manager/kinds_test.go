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

package main

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/controller"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
)

// Every kind of the API has its controller in the manager's list, with a
// --<kind>-workers flag (the chart's manager.workers renders them), and
// no two controllers share a name.
func TestEveryKindIsListedWithItsWorkersFlag(t *testing.T) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	names := map[string]bool{}
	for _, k := range controller.All("default") {
		if names[k.Name()] {
			t.Errorf("two controllers are named %s", k.Name())
		}
		names[k.Name()] = true
		k.BindFlags(fs)
	}
	for _, kind := range v1alpha1.Kinds() {
		name := strings.ToLower(kind)
		if !names[name] {
			t.Errorf("%s has no controller in controller.All (internal/controller/controller.go)", kind)
		}
		if fs.Lookup(name+"-workers") == nil {
			t.Errorf("%s's controller binds no --%s-workers", kind, name)
		}
	}
}

// The cache holds the namespaces the kinds read beyond the watched ones:
// --link-namespace, as the flag sets it.
func TestTheKindsOwnNamespacesFollowTheirFlags(t *testing.T) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	all := controller.All("pod-ns")
	for _, k := range all {
		k.BindFlags(fs)
	}
	if got := wire.Namespaces(all); !slices.Equal(got, []string{"pod-ns"}) {
		t.Errorf("by default: %v, want [pod-ns]", got)
	}
	if err := fs.Parse([]string{"--link-namespace=links"}); err != nil {
		t.Fatal(err)
	}
	if got := wire.Namespaces(all); !slices.Equal(got, []string{"links"}) {
		t.Errorf("with --link-namespace=links: %v, want [links]", got)
	}
}
