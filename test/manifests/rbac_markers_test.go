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

package manifests

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// rbacPaths reads one of the Makefile's marker path lists
// (MANAGER_RBAC_PATHS, WEBHOOK_RBAC_PATHS) as directories.
func rbacPaths(t *testing.T, makefile, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` \?= (.+)$`).FindStringSubmatch(makefile)
	if m == nil {
		t.Fatalf("the Makefile sets no %s", name)
	}
	var dirs []string
	for _, p := range strings.Split(m[1], ";") {
		dirs = append(dirs, strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/..."))
	}
	return dirs
}

// Every +kubebuilder:rbac marker is read by one of the two role
// generations of `make manifests`: a marker elsewhere (a new package of
// the manager's outside its paths) would grant nothing, in silence, and
// its controller would be refused in the cluster. Each binary's markers
// are in its own paths only, so neither role holds the other's rights.
func TestEveryRBACMarkerIsGenerated(t *testing.T) {
	raw, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	manager, webhook := rbacPaths(t, string(raw), "MANAGER_RBAC_PATHS"), rbacPaths(t, string(raw), "WEBHOOK_RBAC_PATHS")
	within := func(dir string, roots []string) bool {
		for _, r := range roots {
			if dir == r || strings.HasPrefix(dir, r+"/") {
				return true
			}
		}
		return false
	}
	marker := regexp.MustCompile(`(?m)^// \+kubebuilder:rbac:`)
	found := 0
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil || !marker.Match(src) {
			return err
		}
		found++
		dir := filepath.ToSlash(filepath.Dir(strings.TrimPrefix(path, "../../")))
		switch m, w := within(dir, manager), within(dir, webhook); {
		case !m && !w:
			t.Errorf("%s has +kubebuilder:rbac markers that neither MANAGER_RBAC_PATHS nor WEBHOOK_RBAC_PATHS reads", path)
		case m && w:
			t.Errorf("%s is read by both role generations", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 10 {
		t.Errorf("only %d files with markers found: the walk is not reading the tree", found)
	}
}
