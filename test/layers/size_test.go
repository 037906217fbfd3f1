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

package layers

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The size rules (docs/development.md, "Size."), for the Go files a
// person writes: no function or method over maxFuncLines, from its func
// line to its closing brace, and no file over maxFileLines, or
// maxSandboxFileLines in the emulators (internal/sandbox), whose files
// follow one service's reference each. Tests (_test.go) and generated
// files (zz_generated*, or a "Code generated ... DO NOT EDIT." line) are
// not held: the rules are the production code's, hack/ included.
const (
	maxFuncLines        = 60
	maxFileLines        = 400
	maxSandboxFileLines = 600
	sandboxDir          = "internal/sandbox/"
)

// oversize is one function or file over its limit.
type oversize struct {
	path  string // slash-separated, relative to the root walked
	line  int
	name  string // the function's, or "file"
	lines int
	limit int
}

func (o oversize) String() string {
	return fmt.Sprintf("%s:%d %s %d lines (limit %d)", o.path, o.line, o.name, o.lines, o.limit)
}

// oversized walks root and answers every function and file of the Go
// files it holds (tests and generated files aside) over its limit, in
// path and line order. Directories Go ignores (testdata, vendor, and
// those starting with "." or "_") are skipped.
func oversized(root string) ([]oversize, error) {
	var out []oversize
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		found, err := oversizedFile(path, filepath.ToSlash(rel))
		out = append(out, found...)
		return err
	})
	return out, err
}

// oversizedFile parses one file (rel names it) and answers what of it is
// over its limit; nothing for a generated file.
func oversizedFile(path, rel string) ([]oversize, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	if ast.IsGenerated(f) {
		return nil, nil
	}
	var out []oversize
	limit := maxFileLines
	if strings.HasPrefix(rel, sandboxDir) {
		limit = maxSandboxFileLines
	}
	lines := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		lines++
	}
	if lines > limit {
		out = append(out, oversize{path: rel, line: 1, name: "file", lines: lines, limit: limit})
	}
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		first, last := fset.Position(fd.Type.Func).Line, fset.Position(fd.Body.Rbrace).Line
		if n := last - first + 1; n > maxFuncLines {
			out = append(out, oversize{path: rel, line: first, name: funcName(fd), lines: n, limit: maxFuncLines})
		}
	}
	return out, nil
}

// funcName is fd's name as a reader finds it: F, T.M or (*T).M.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	recv := fd.Recv.List[0].Type
	star := false
	if s, ok := recv.(*ast.StarExpr); ok {
		recv, star = s.X, true
	}
	switch r := recv.(type) { // a generic receiver, T[K] or T[K, V]
	case *ast.IndexExpr:
		recv = r.X
	case *ast.IndexListExpr:
		recv = r.X
	}
	typ := fmt.Sprint(recv)
	if id, ok := recv.(*ast.Ident); ok {
		typ = id.Name
	}
	if star {
		return "(*" + typ + ")." + fd.Name.Name
	}
	return typ + "." + fd.Name.Name
}

// TestSizes holds the module (../.. from here) to the size rules, naming
// every function and file over its limit.
func TestSizes(t *testing.T) {
	found, err := oversized("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range found {
		t.Errorf("%s: split it (docs/development.md, \"Size.\")", o)
	}
}

// TestSizesFindEachCase runs the walk TestSizes runs on a tree written
// here, one case a file, and checks it names exactly the oversized ones.
func TestSizesFindEachCase(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		// Over: a file of 401 lines, a 61-line function and method, an
		// emulator's file of 601 lines.
		"a/long.go":                    goFile(401, nil),
		"a/funcs.go":                   goFile(0, []string{"func F() {", bodyOf(59), "}", "type T struct{}", "func (*T) M() {", bodyOf(59), "}"}),
		"internal/sandbox/long.go":     goFile(601, nil),
		"internal/sandbox/nested/x.go": goFile(0, []string{"func G[K any](k K) {", bodyOf(59), "}"}),
		"b/generic.go":                 goFile(0, []string{"type P[K any] struct{ k K }", "func (p P[K]) N() {", bodyOf(59), "}"}),
		"b/nolf.go":                    strings.TrimSuffix(goFile(401, nil), "\n"),
		// Within, or not held: exactly at the limits, tests, generated
		// files, and directories Go ignores.
		"a/limits.go":                goFile(400, []string{"func Fine() {", bodyOf(58), "}"}),
		"internal/sandbox/limit.go":  goFile(600, nil),
		"a/long_test.go":             goFile(900, []string{"func TestX() {", bodyOf(100), "}"}),
		"a/zz_generated.deepcopy.go": goFile(900, nil),
		"a/gen.go":                   "// Code generated by hand. DO NOT EDIT.\n\n" + goFile(900, nil),
		"a/testdata/long.go":         goFile(900, nil),
		"a/vendor/long.go":           goFile(900, nil),
		"a/.hidden/long.go":          goFile(900, nil),
		"a/_ignored/long.go":         goFile(900, nil),
		"a/notgo.txt":                strings.Repeat("x\n", 900),
	}
	for name, src := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	found, err := oversized(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range found {
		got = append(got, o.String())
	}
	want := []string{
		"a/funcs.go:3 F 61 lines (limit 60)",
		"a/funcs.go:65 (*T).M 61 lines (limit 60)",
		"a/long.go:1 file 401 lines (limit 400)",
		"b/generic.go:4 P.N 61 lines (limit 60)",
		"b/nolf.go:1 file 401 lines (limit 400)",
		"internal/sandbox/long.go:1 file 601 lines (limit 600)",
		"internal/sandbox/nested/x.go:3 G 61 lines (limit 60)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("oversized found\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// goFile is a Go file of package x holding decls, padded with comment
// lines to total lines when total is more than it would have (a final
// newline ends each line).
func goFile(total int, decls []string) string {
	src := strings.Join(append([]string{"package x", ""}, decls...), "\n") + "\n"
	if pad := total - strings.Count(src, "\n"); pad > 0 {
		src += strings.Repeat("// padding\n", pad)
	}
	return src
}

// bodyOf is n statements, one a line.
func bodyOf(n int) string {
	return strings.TrimSuffix(strings.Repeat("\t_ = 0\n", n), "\n")
}
