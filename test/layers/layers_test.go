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

// Package layers fails on an import that runs upward. The layers, from
// the bottom (docs/development.md, "Layers"):
//
//  1. the API types and pure helpers: api/v1alpha1, capability, upstream,
//     id and link parsers;
//  2. upstream clients, which speak one SaaS API and know no custom
//     resource and no Kubernetes reader;
//  3. contracts the webhook and the controllers share (paths, names,
//     annotations, inbound payloads), which call no upstream;
//  4. the reconcile framework (runner, status) and the controllers, one
//     package per kind, none importing another kind's;
//  5. the webhook, which links no upstream client of the manager's and
//     no reconcile framework; nor does the OAuth engine (internal/oauth),
//     which both sides share;
//  6. the binaries; the kubectl plugin (internal/cli) links no upstream
//     client and no reconcile framework.
//
// The emulator (internal/sandbox) shares no parser with the code it tests.
package layers

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

const module = "github.com/switchboard-dev/switchboard/"

// notClients are the packages under internal/ besides the framework that
// name an upstream (import internal/upstream) but are no client of one:
// the outbound policy, the OAuth engine, the emulator, the test
// environment and the webhook.
var notClients = []string{"internal/outbound", "internal/oauth", "internal/sandbox", "internal/testenv", "internal/webhook"}

// clientsOf are the upstream clients, which speak to one upstream each:
// every other package under internal/ that imports internal/upstream, so
// that a new kind's client is checked without a line here.
func clientsOf(pkgs map[string]pkg) []string {
	var clients []string
	for path, p := range pkgs {
		if within(path, "internal") && !within(path, notClients...) && !within(path, framework...) &&
			slices.Contains(ours(p.Imports), "internal/upstream") {
			clients = append(clients, path)
		}
	}
	slices.Sort(clients)
	return clients
}

// contracts are shared by the webhook and the controllers.
var contracts = []string{"internal/calendarpush", "internal/linktoken", "internal/papers", "internal/session", "internal/timesheet"}

// framework is the reconcile side: what the webhook must not link.
var framework = []string{"internal/runner", "internal/status", "internal/controller"}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// list is `go list` of every package of the module, with its direct
// imports and all its dependencies.
func list(t *testing.T) map[string]pkg {
	t.Helper()
	// The test runs in test/layers; ../.. is the module's root.
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("go list: %v\n%s", err, exit.Stderr)
	} else if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, module)] = p
	}
	return pkgs
}

// within reports whether path is dir or a package below it.
func within(path string, dirs ...string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

func ours(paths []string) []string {
	var own []string
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, module); ok {
			own = append(own, rest)
		}
	}
	return own
}

func TestImportsRunDownhill(t *testing.T) {
	pkgs := list(t)
	clients := clientsOf(pkgs)
	t.Logf("upstream clients: %v", clients)
	kindPackages := map[string]bool{}
	for _, k := range v1alpha1.Kinds() {
		kindPackages["internal/controller/"+strings.ToLower(k)] = true
	}
	for path, p := range pkgs {
		imports, deps := ours(p.Imports), p.Deps
		ownDeps := ours(deps)
		switch {
		case within(path, clients...):
			if i := slices.IndexFunc(deps, func(d string) bool {
				return d == module+"api/v1alpha1" || strings.HasPrefix(d, "sigs.k8s.io/controller-runtime") || strings.HasPrefix(d, "k8s.io/client-go")
			}); i >= 0 {
				t.Errorf("%s is an upstream client but depends on %s (through %v): clients know no custom resource and no Kubernetes reader", path, deps[i], ownDeps)
			}
		case within(path, contracts...):
			for _, d := range ownDeps {
				if within(d, clients...) || within(d, framework...) {
					t.Errorf("%s is a contract of the webhook and the controllers but depends on %s", path, d)
				}
			}
		case within(path, "internal/webhook", "cmd/webhook"):
			for _, d := range ownDeps {
				if within(d, framework...) || (within(d, clients...) && d != "internal/blob") {
					t.Errorf("%s depends on %s: the webhook links no reconcile framework and no upstream client but the share link's store", path, d)
				}
			}
		case within(path, "internal/cli", "cmd/kubectl-switchboard"):
			for _, d := range ownDeps {
				if within(d, framework...) || within(d, clients...) {
					t.Errorf("%s depends on %s: the kubectl plugin speaks only to the API server, and links no reconcile framework and no upstream client", path, d)
				}
			}
		case within(path, "internal/oauth"):
			for _, d := range ownDeps {
				if within(d, framework...) {
					t.Errorf("%s depends on %s: the OAuth engine is shared by the webhook and the controllers and links no reconcile framework (runner, status, controllers)", path, d)
				}
			}
		case within(path, "internal/sandbox", "cmd/sandbox"):
			for _, d := range ownDeps {
				if !within(d, "internal/sandbox", "internal/capability", "internal/upstream") {
					t.Errorf("the emulator %s depends on %s: it must share no parser with the code it tests", path, d)
				}
			}
		}
		if kindPackages[path] {
			for _, d := range imports {
				if kindPackages[d] {
					t.Errorf("%s imports %s: a kind's controller reaches another kind's only through the API", path, d)
				}
			}
		}
		if within(path, "internal", "api") {
			if i := slices.IndexFunc(ownDeps, func(d string) bool { return within(d, "cmd", "hack", "test") }); i >= 0 {
				t.Errorf("%s depends on %s", path, ownDeps[i])
			}
		}
	}
	if len(clients) == 0 {
		t.Errorf("no package imports internal/upstream: update this test's layers")
	}
	for _, want := range append(append([]string{}, notClients...), "internal/cli") {
		if _, ok := pkgs[want]; !ok {
			t.Errorf("the package %s is gone: update this test's layers", want)
		}
	}
}
