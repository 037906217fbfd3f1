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

package release

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/signed"
)

// digestsCommands: every command digests.txt gives a platform team passes,
// run in the release directory with the images and chart moved to the
// loopback registry; and digests.txt covers every subject of the
// provenance.
func (r *release) digestsCommands(ctx context.Context, t *testing.T) {
	rows, err := signed.ReadDigests(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, row := range rows {
		named[row.Repository()] = true
		args := append([]string{}, row.Command...)
		if args[0] != "cosign" {
			t.Errorf("%s: %q is no cosign command", row.Name, row.Command)
			continue
		}
		for i, a := range args {
			if row.Kind != signed.KindFile && strings.HasPrefix(a, row.Repository()+"@") {
				args[i] = r.reg.Local(a)
			}
		}
		if err := runIn(ctx, r.dir, r.cosign, args[1:]...); err != nil {
			t.Errorf("%s: %v", strings.Join(row.Command, " "), err)
		}
	}
	for _, s := range r.statement.Subject {
		if !named[s.Name] {
			t.Errorf("%s has no command in %s", s.Name, signed.DigestsFile)
		}
	}
	t.Logf("%d commands run", len(rows))
}

// checksums: sha256sums.txt's signature verifies, and it lists every file
// of the release but itself and its signature, with its real digest.
func (r *release) checksums(ctx context.Context, t *testing.T) {
	sums := filepath.Join(r.dir, signed.ChecksumsFile)
	if err := r.verifyBlob(ctx, r.pubKey, sums, sums); err != nil {
		t.Error(err)
	}
	listed := checksums(t, r.dir)
	err := filepath.WalkDir(r.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(r.dir, p)
		rel = filepath.ToSlash(rel)
		if rel == signed.ChecksumsFile || rel == signed.ChecksumsFile+signed.SignatureSuffix {
			return nil
		}
		if got, want := listed[rel], fileDigest(t, p); got != want {
			t.Errorf("%s: %q in %s, really %s", rel, got, signed.ChecksumsFile, want)
		}
		delete(listed, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for f := range listed {
		t.Errorf("%s lists %s, which is not in the release", signed.ChecksumsFile, f)
	}
}

// checksums reads the release's sha256sums.txt: path → sha256:hex.
func checksums(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(readFile(t, filepath.Join(dir, signed.ChecksumsFile)))), "\n") {
		sum, name, ok := strings.Cut(l, "  ")
		if !ok {
			t.Fatalf("%s: line %q", signed.ChecksumsFile, l)
		}
		sums[name] = "sha256:" + sum
	}
	return sums
}

// releaseFiles are the files the provenance must name: the plugin's
// tarballs and SBOMs, the krew manifest, the image layouts, the images'
// SBOMs and the chart package (paths relative to dir).
func releaseFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	for _, p := range []string{"*.tar.gz", "*.spdx.json", "switchboard.yaml", "images/*.tar", "sbom/*.spdx.json", "charts/*.tgz"} {
		m, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(p)))
		for _, f := range m {
			rel, _ := filepath.Rel(dir, f)
			files = append(files, filepath.ToSlash(rel))
		}
	}
	if len(files) == 0 {
		t.Fatalf("no release files in %s", dir)
	}
	return files
}

// layoutDigest is the digest of the one manifest an OCI layout tarball's
// index.json lists.
func layoutDigest(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s has no index.json", file)
		}
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Clean(h.Name) != "index.json" {
			continue
		}
		var index struct{ Manifests []struct{ Digest string } }
		if err := json.NewDecoder(tr).Decode(&index); err != nil || len(index.Manifests) != 1 {
			t.Fatalf("%s: index.json lists %d manifests (%v), want 1", file, len(index.Manifests), err)
		}
		return index.Manifests[0].Digest
	}
}

func fileDigest(t *testing.T, file string) string {
	t.Helper()
	sum := sha256.Sum256(readFile(t, file))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func readFile(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decode is JSON decoded loosely, for comparing documents whatever their
// spacing and key order.
func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %.200s", err, b)
	}
	return v
}

// sameElements reports whether a and b hold the same documents, in any
// order.
func sameElements(a, b []any) bool {
	canon := func(vs []any) []string {
		out := make([]string, len(vs))
		for i, v := range vs {
			j, _ := json.Marshal(v)
			out[i] = string(j)
		}
		sort.Strings(out)
		return out
	}
	ca, cb := canon(a), canon(b)
	if len(ca) != len(cb) {
		return false
	}
	for i := range ca {
		if ca[i] != cb[i] {
			return false
		}
	}
	return true
}

// repository is an artifact's repository as the release names it (its
// provenance subject's name).
func repository(a signed.Artifact) string { return signed.Row{Name: a.Name}.Repository() }
