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

// Package layers fails on an import that runs upward. The layers are
// directories (docs/development.md, "Layers"), from the bottom:
//
//  1. the API types and pure helpers: api/v1alpha1, internal/capability,
//     internal/clocks, …;
//  2. internal/upstream/: everything that speaks outward and knows no
//     custom resource and no Kubernetes reader — the services' names and
//     URLs (the directory's own package), the one outbound policy
//     (outbound/), the syntax of the services' ids and links, and the
//     clients, one directory a service (a client is a package there that
//     links the outbound policy);
//  3. internal/contract/: what the webhook's routes and the controllers
//     agree on (paths, names, annotations, inbound payloads), calling no
//     upstream client;
//  4. internal/reconcile/ (the runner, status, children, grant, wiring)
//     and internal/controller/, one directory a kind and nothing else,
//     none importing another kind's;
//  5. the webhook, which links no upstream client of the manager's and no
//     reconcile framework; nor does the OAuth engine (internal/oauth),
//     which both sides share;
//  6. the binaries; the kubectl plugin (internal/cli) links no upstream
//     client and no reconcile framework.
//
// The emulator (internal/sandbox) shares no parser with the code it tests.
// No directory list is kept here: a new client, contract or kind is held
// to its layer by where it stands.
package layers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

const module = "github.com/switchboard-dev/switchboard/"

// The layers' directories.
const (
	upstreamDir   = "internal/upstream"
	outboundPkg   = "internal/upstream/outbound"
	contractDir   = "internal/contract"
	reconcileDir  = "internal/reconcile"
	controllerDir = "internal/controller"
	// shareLinkStore is the one client the webhook links: the share
	// link's redirect presigns its GET (seed 003).
	shareLinkStore = "internal/upstream/blob"
)

// framework is the reconcile side: what the webhook, the OAuth engine and
// the plugin must not link.
var framework = []string{reconcileDir, controllerDir}

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

// below reports whether path is a package under dir, not dir itself.
func below(path, dir string) bool { return strings.HasPrefix(path, dir+"/") }

func ours(paths []string) []string {
	var own []string
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, module); ok {
			own = append(own, rest)
		}
	}
	return own
}

// house is the module's packages sorted into their layers.
type house struct {
	pkgs    map[string]pkg
	clients []string
	kinds   map[string]bool // internal/controller/<kind> of every API kind
}

func newHouse(pkgs map[string]pkg, apiKinds []string) house {
	h := house{pkgs: pkgs, kinds: map[string]bool{}}
	for path, p := range pkgs {
		if below(path, upstreamDir) && path != outboundPkg && slices.Contains(ours(p.Deps), outboundPkg) {
			h.clients = append(h.clients, path)
		}
	}
	slices.Sort(h.clients)
	for _, k := range apiKinds {
		h.kinds[controllerDir+"/"+strings.ToLower(k)] = true
	}
	return h
}

// isClient reports whether path is an upstream client (or a package of one).
func (h house) isClient(path string) bool { return within(path, h.clients...) }

// violations are the imports that run upward, one sentence each, in
// package order.
func (h house) violations() []string {
	var out []string
	for _, path := range slices.Sorted(maps.Keys(h.pkgs)) {
		out = append(out, h.check(path, h.pkgs[path])...)
	}
	return append(out, h.shape()...)
}

// shape checks the directories themselves: internal/controller holds one
// directory for each API kind and nothing else, and every layer exists.
func (h house) shape() []string {
	var out []string
	for path := range h.pkgs {
		if below(path, controllerDir) && !h.kinds[path] && !within(path, slices.Collect(maps.Keys(h.kinds))...) {
			out = append(out, fmt.Sprintf("%s is no kind of the API: internal/controller holds one directory a kind (the framework is internal/reconcile)", path))
		}
	}
	for k := range h.kinds {
		if _, ok := h.pkgs[k]; !ok {
			out = append(out, fmt.Sprintf("the kind's controller %s is missing", k))
		}
	}
	if len(h.clients) == 0 {
		out = append(out, "no package under internal/upstream links the outbound policy: no client found")
	}
	slices.Sort(out)
	return out
}

// check is path's own rules, by the layer it stands in.
func (h house) check(path string, p pkg) []string {
	own := ours(p.Deps)
	var out []string
	refuse := func(bad func(d string) bool, why string) {
		for _, d := range own {
			if bad(d) {
				out = append(out, fmt.Sprintf("%s depends on %s: %s", path, d, why))
			}
		}
	}
	switch {
	case within(path, upstreamDir):
		for _, d := range p.Deps {
			if d == module+"api/v1alpha1" || strings.HasPrefix(d, "sigs.k8s.io/controller-runtime") || strings.HasPrefix(d, "k8s.io/client-go") {
				out = append(out, fmt.Sprintf("%s depends on %s: what speaks outward knows no custom resource and no Kubernetes reader", path, d))
			}
		}
		refuse(func(d string) bool { return !within(d, upstreamDir) && d != "internal/reqmetrics" },
			"internal/upstream stands on nothing of the operator's but its request metrics")
	case within(path, contractDir):
		refuse(func(d string) bool { return h.isClient(d) || within(d, framework...) },
			"a contract of the webhook and the controllers calls no upstream client and no reconcile framework")
	case within(path, "internal/webhook", "cmd/webhook"):
		refuse(func(d string) bool { return within(d, framework...) || (h.isClient(d) && !within(d, shareLinkStore)) },
			"the webhook links no reconcile framework and no upstream client but the share link's store")
	case within(path, "internal/cli", "cmd/kubectl-switchboard"):
		refuse(func(d string) bool { return within(d, framework...) || h.isClient(d) },
			"the kubectl plugin speaks only to the API server, and links no reconcile framework and no upstream client")
	case within(path, "internal/oauth"):
		refuse(func(d string) bool { return within(d, framework...) },
			"the OAuth engine is shared by the webhook and the controllers and links no reconcile framework")
	case within(path, reconcileDir):
		refuse(func(d string) bool { return within(d, controllerDir) },
			"the reconcile framework knows no kind's controller")
	case within(path, "internal/sandbox", "cmd/sandbox"):
		refuse(func(d string) bool { return !within(d, "internal/sandbox", "internal/capability") && d != upstreamDir },
			"the emulator shares no parser with the code it tests")
	}
	if h.kinds[path] {
		for _, d := range ours(p.Imports) {
			if h.kinds[d] {
				out = append(out, fmt.Sprintf("%s imports %s: a kind's controller reaches another kind's only through the API", path, d))
			}
		}
	}
	if within(path, "internal", "api") {
		refuse(func(d string) bool { return within(d, "cmd", "hack", "test") }, "the operator's code links no binary, tool or test")
	}
	return out
}

func TestImportsRunDownhill(t *testing.T) {
	h := newHouse(list(t), v1alpha1.Kinds())
	t.Logf("upstream clients: %v", h.clients)
	for _, v := range h.violations() {
		t.Error(v)
	}
}

// TestEachRuleFails breaks each rule in a copy of the module's packages
// (one import added, or one directory) and expects the rule's sentence:
// a rule that cannot fail holds nothing.
func TestEachRuleFails(t *testing.T) {
	real := list(t)
	some := func(dir string) string {
		for _, p := range slices.Sorted(maps.Keys(real)) {
			if within(p, dir) {
				return p
			}
		}
		t.Fatalf("no package under %s", dir)
		return ""
	}
	base := newHouse(real, v1alpha1.Kinds())
	client := base.clients[0]
	cases := []struct{ from, imports, want string }{
		{client, "api/v1alpha1", "knows no custom resource"},
		{"internal/upstream/outbound", "internal/audit", "stands on nothing of the operator's"},
		{some(contractDir), client, "calls no upstream client"},
		{some(contractDir), "internal/reconcile/runner", "calls no upstream client and no reconcile framework"},
		{"internal/webhook", "internal/reconcile/status", "links no reconcile framework"},
		{"internal/webhook", client, "links no reconcile framework and no upstream client"},
		{"internal/cli", client, "kubectl plugin"},
		{"internal/oauth", "internal/reconcile/status", "OAuth engine"},
		{"internal/reconcile/runner", "internal/controller/slidestock", "knows no kind's controller"},
		{"internal/sandbox", "internal/upstream/notionid", "shares no parser"},
		{"internal/controller/papersync", "internal/controller/notionintegration", "only through the API"},
		{"internal/oauth", "test/layers", "links no binary"},
		{"internal/controller/notakind", "", "is no kind of the API"},
	}
	for _, c := range cases {
		pkgs := maps.Clone(real)
		p := pkgs[c.from]
		if c.imports != "" {
			p.Imports = append(slices.Clone(p.Imports), module+c.imports)
			p.Deps = append(slices.Clone(p.Deps), module+c.imports)
		}
		pkgs[c.from] = p
		got := strings.Join(newHouse(pkgs, v1alpha1.Kinds()).violations(), "\n")
		if !strings.Contains(got, c.from) || !strings.Contains(got, c.want) {
			t.Errorf("%s importing %q: want a violation saying %q, got:\n%s", c.from, c.imports, c.want, got)
		}
	}
	if got := newHouse(real, append(v1alpha1.Kinds(), "NotAKind")).violations(); !slices.Contains(got, "the kind's controller internal/controller/notakind is missing") {
		t.Errorf("a kind without a controller directory: got %v", got)
	}
}
