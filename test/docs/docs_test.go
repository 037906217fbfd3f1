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

// Package docs holds the developer's guide (docs/development.md) and the
// per-kind pages to the code: a path it names exists, a `pkg.Name` it
// names is declared in that package, every kind has its page and its
// lines, and the idempotency rule names every kind. A guide that drifts
// from the code fails here, not in a new developer's hands.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// root is the module's root, from test/docs.
const root = "../.."

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// codeSpans are the `…` spans of a Markdown text, fenced blocks aside.
func codeSpans(doc string) []string {
	var spans []string
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		parts := strings.Split(line, "`")
		for i := 1; i < len(parts); i += 2 {
			spans = append(spans, parts[i])
		}
	}
	return spans
}

// docPages are the README and every page under docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, p := range pages {
		out = append(out, filepath.ToSlash(strings.TrimPrefix(p, root+"/")))
	}
	return out
}

// pathLike is a span naming a file or directory of the tree.
var pathLike = regexp.MustCompile(`^(internal|api|cmd|config|test|hack|charts|docs)/[\w./-]*$`)

// TestGuidePathsExist: every path the guide names in code spans is in the
// tree (a package moved or a file renamed fails here).
func TestGuidePathsExist(t *testing.T) {
	for _, doc := range docPages(t) {
		for _, span := range codeSpans(read(t, doc)) {
			p := strings.TrimSuffix(span, "/")
			if !pathLike.MatchString(span) || strings.ContainsAny(p, "<>*{") {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("%s names %s, which is not in the tree", doc, span)
			}
		}
	}
}

// declared maps each package name under internal/ and api/ to the names
// its non-test files declare: functions, types, variables, constants, and
// methods as Type.Method. A name two packages share maps to the union.
func declared(t *testing.T) map[string]map[string]bool {
	t.Helper()
	decls := map[string]map[string]bool{}
	add := func(pkg, name string) {
		if decls[pkg] == nil {
			decls[pkg] = map[string]bool{}
		}
		decls[pkg][name] = true
	}
	fset := token.NewFileSet()
	for _, dir := range []string{"internal", "api"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				for _, name := range declNames(decl) {
					add(f.Name.Name, name)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return decls
}

// declNames are the names one declaration makes.
func declNames(decl ast.Decl) []string {
	var names []string
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			return []string{d.Name.Name}
		}
		recv := d.Recv.List[0].Type
		for {
			switch r := recv.(type) {
			case *ast.StarExpr:
				recv = r.X
				continue
			case *ast.IndexExpr:
				recv = r.X
				continue
			case *ast.IndexListExpr:
				recv = r.X
				continue
			case *ast.Ident:
				return []string{r.Name + "." + d.Name.Name}
			}
			return nil
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
				if st, ok := s.Type.(*ast.StructType); ok {
					for _, f := range st.Fields.List {
						for _, n := range f.Names {
							names = append(names, s.Name.Name+"."+n.Name)
						}
					}
				}
				if it, ok := s.Type.(*ast.InterfaceType); ok {
					for _, m := range it.Methods.List {
						for _, n := range m.Names {
							names = append(names, s.Name.Name+"."+n.Name)
						}
					}
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			}
		}
	}
	return names
}

// qualified is a span that starts pkg.Name or pkg.Type.Member.
var qualified = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)

// TestGuideNamesAreDeclared: every `pkg.Name` (or `pkg.Type.Member`) the
// guide's code spans name, for a package of the operator's, is declared
// there.
func TestGuideNamesAreDeclared(t *testing.T) {
	decls := declared(t)
	checked := 0
	for _, doc := range docPages(t) {
		for _, span := range codeSpans(read(t, doc)) {
			m := qualified.FindStringSubmatch(span)
			if m == nil || decls[m[1]] == nil {
				continue
			}
			name := m[2]
			if m[3] != "" {
				name += "." + m[3]
			}
			checked++
			if !decls[m[1]][name] {
				t.Errorf("%s names `%s`: package %s declares no %s", doc, span, m[1], name)
			}
		}
	}
	t.Logf("%d qualified names checked", checked)
	if checked < 20 {
		t.Errorf("only %d qualified names checked: the guide's spans are not read as meant", checked)
	}
}

// TestEveryKindIsDocumented: each kind has its page, its line in
// docs/api.md and the README's list, and a line in the guide's
// idempotency rule.
func TestEveryKindIsDocumented(t *testing.T) {
	api, readme := read(t, "docs/api.md"), read(t, "README.md")
	guide := read(t, "docs/development.md")
	start := strings.Index(guide, "## Idempotent external writes")
	end := strings.Index(guide[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("docs/development.md has no section Idempotent external writes")
	}
	rule := guide[start : start+1+end]
	for _, kind := range v1alpha1.Kinds() {
		page := "docs/" + strings.ToLower(kind) + ".md"
		if _, err := os.Stat(filepath.Join(root, page)); err != nil {
			t.Errorf("%s has no page %s", kind, page)
		}
		if !strings.Contains(api, kind) {
			t.Errorf("docs/api.md does not name %s", kind)
		}
		if !strings.Contains(readme, page) {
			t.Errorf("README.md does not link %s", page)
		}
		if !slices.ContainsFunc(strings.Split(rule, "\n"), func(l string) bool { return strings.Contains(l, "| "+kind+" |") }) {
			t.Errorf("the idempotency rule of docs/development.md has no row for %s", kind)
		}
	}
}
