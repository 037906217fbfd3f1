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

// Command kindgen writes what every kind of an API package has in the same
// shape, so that a kind's type file holds only what is its own (its spec,
// its status, its root type with the markers its CRD comes from): the List
// type, the status accessors its embedded statuses call for
// (GetReconcileStatus, GetOAuthConnect, GetChildStatus) and its line in the
// scheme. A kind is a struct with a +kubebuilder:object:root=true marker
// and a Status field; `make generate` runs it before controller-gen, which
// then writes the lists' deep copies.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// rootMarker marks a type as a Kubernetes object (kubebuilder's marker).
const rootMarker = "+kubebuilder:object:root=true"

// Output is the file kindgen writes in the package's directory.
const Output = "zz_generated.kinds.go"

// accessor is a method a kind gets when its status embeds a struct.
type accessor struct {
	embedded, method, doc string
}

// accessors are the shared statuses a kind's status may embed and what the
// routes, runner and children read them through.
var accessors = []accessor{
	{"ReconcileStatus", "GetReconcileStatus", "implements StatusObject: the status every kind shares."},
	{"OAuthConnectStatus", "GetOAuthConnect", "implements OAuthObject: what the OAuth routes read of the status."},
	{"ChildStatus", "GetChildStatus", "implements ChildObject: the status every child shares."},
}

// kind is one root type found and the accessors its status calls for.
type kind struct {
	name    string
	methods []accessor
}

func main() {
	dir := flag.String("dir", "api/v1alpha1", "The API package's directory.")
	header := flag.String("header", "hack/boilerplate.go.txt", "The licence header of generated files.")
	flag.Parse()
	if err := run(*dir, *header); err != nil {
		fmt.Fprintln(os.Stderr, "kindgen:", err)
		os.Exit(1)
	}
}

func run(dir, headerPath string) error {
	header, err := os.ReadFile(headerPath)
	if err != nil {
		return err
	}
	kinds, pkg, err := findKinds(dir)
	if err != nil {
		return err
	}
	if len(kinds) == 0 {
		return fmt.Errorf("%s: no type carries %s", dir, rootMarker)
	}
	src, err := render(header, pkg, kinds)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, Output), src, 0o644)
}

// findKinds parses the package's hand-written files (not tests, not
// generated ones) and returns its kinds, sorted, and the package's name.
func findKinds(dir string) ([]kind, string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, "", err
	}
	fset := token.NewFileSet()
	pkgName := ""
	structs := map[string]*ast.StructType{}
	var roots []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || strings.HasPrefix(n, "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, "", err
		}
		if pkgName != "" && f.Name.Name != pkgName {
			return nil, "", fmt.Errorf("%s: want one package, found %s and %s", dir, pkgName, f.Name.Name)
		}
		pkgName = f.Name.Name
		roots = append(roots, collect(f, structs)...)
	}
	var kinds []kind
	for _, root := range roots {
		k, err := kindOf(root, structs)
		if err != nil {
			return nil, "", err
		}
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].name < kinds[j].name })
	return kinds, pkgName, nil
}

// collect records the file's struct types and returns those of them that
// carry the root marker in a comment between the previous declaration and
// theirs (kubebuilder writes markers as a comment group of their own, above
// the doc comment).
func collect(f *ast.File, structs map[string]*ast.StructType) []string {
	var roots []string
	prevEnd := f.Name.End()
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if ok && gen.Tok == token.TYPE {
			for _, spec := range gen.Specs {
				ts := spec.(*ast.TypeSpec)
				st, isStruct := ts.Type.(*ast.StructType)
				if !isStruct {
					continue
				}
				structs[ts.Name.Name] = st
				if hasMarker(f.Comments, prevEnd, gen.Pos()) {
					roots = append(roots, ts.Name.Name)
				}
			}
		}
		prevEnd = decl.End()
	}
	return roots
}

func hasMarker(groups []*ast.CommentGroup, after, before token.Pos) bool {
	for _, g := range groups {
		if g.Pos() <= after || g.End() >= before {
			continue
		}
		for _, c := range g.List {
			if strings.TrimSpace(strings.TrimPrefix(c.Text, "//")) == rootMarker {
				return true
			}
		}
	}
	return false
}

// kindOf reads the root type's Status field and the shared statuses that
// struct embeds.
func kindOf(root string, structs map[string]*ast.StructType) (kind, error) {
	k := kind{name: root}
	status := ""
	for _, field := range structs[root].Fields.List {
		if len(field.Names) == 1 && field.Names[0].Name == "Status" {
			if id, ok := field.Type.(*ast.Ident); ok {
				status = id.Name
			}
		}
	}
	st := structs[status]
	if st == nil {
		return k, fmt.Errorf("%s carries %s but has no Status field of a struct type of this package", root, rootMarker)
	}
	embedded := map[string]bool{}
	for _, field := range st.Fields.List {
		if id, ok := field.Type.(*ast.Ident); ok && len(field.Names) == 0 {
			embedded[id.Name] = true
		}
	}
	for _, a := range accessors {
		if embedded[a.embedded] {
			k.methods = append(k.methods, a)
		}
	}
	return k, nil
}

func render(header []byte, pkg string, kinds []kind) ([]byte, error) {
	var b bytes.Buffer
	b.Write(header)
	fmt.Fprintf(&b, "\n// Code generated by hack/kindgen. DO NOT EDIT.\n\npackage %s\n\n", pkg)
	b.WriteString("import metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, "\n// +kubebuilder:object:root=true\n\n// %[1]sList contains a list of %[1]s.\n", k.name)
		fmt.Fprintf(&b, "type %[1]sList struct {\n\tmetav1.TypeMeta `json:\",inline\"`\n\tmetav1.ListMeta `json:\"metadata,omitempty\"`\n\tItems []%[1]s `json:\"items\"`\n}\n", k.name)
		for _, a := range k.methods {
			fmt.Fprintf(&b, "\n// %s %s\nfunc (in *%s) %s() *%s { return &in.Status.%s }\n",
				a.method, a.doc, k.name, a.method, a.embedded, a.embedded)
		}
		fmt.Fprintf(&b, "\nfunc init() { register(&%[1]s{}, &%[1]sList{}) }\n", k.name)
	}
	return format.Source(b.Bytes())
}
