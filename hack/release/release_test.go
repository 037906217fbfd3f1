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
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// TestTheManifestNamesTheTarballThatHoldsThePlugin builds the release for
// this machine's platform only (the others differ in GOOS and GOARCH
// alone, and cost minutes): the manifest's sha256 is the tarball's and
// sha256sums.txt agrees, the tarball holds the executable and the docs,
// and the binary in it runs and reports the release's version.
func TestTheManifestNamesTheTarballThatHoldsThePlugin(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	host := Platform{runtime.GOOS, runtime.GOARCH}
	out := t.TempDir()
	o := Options{Version: "v0.0.0-test.1", Root: root, Out: out, Platforms: []Platform{host},
		BaseURL: "https://example.com/releases/v0.0.0-test.1/", Date: time.Unix(1_700_000_000, 0)}
	archives, err := Release(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	name := "kubectl-switchboard_v0.0.0-test.1_" + host.OS + "_" + host.Arch + ".tar.gz"
	if len(archives) != 1 || archives[0].Name != name {
		t.Fatalf("archives %+v, want one named %s", archives, name)
	}
	tgz, err := os.ReadFile(filepath.Join(out, name))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(tgz)
	want := hex.EncodeToString(sum[:])

	b, err := os.ReadFile(filepath.Join(out, "switchboard.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		t.Fatalf("the manifest: %v\n%s", err, b)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "switchboard" ||
		m.Spec.Version != o.Version || m.Spec.ShortDescription == "" || m.Spec.Description == "" || m.Spec.Homepage == "" {
		t.Errorf("the manifest's header or documentation fields:\n%s", b)
	}
	if len(m.Spec.Platforms) != 1 {
		t.Fatalf("%d platforms, want 1:\n%s", len(m.Spec.Platforms), b)
	}
	p := m.Spec.Platforms[0]
	if p.SHA256 != want {
		t.Errorf("the manifest's sha256 is %s, the tarball's %s", p.SHA256, want)
	}
	if p.URI != "https://example.com/releases/v0.0.0-test.1/"+name || p.Bin != "kubectl-switchboard" ||
		p.Selector.MatchLabels["os"] != host.OS || p.Selector.MatchLabels["arch"] != host.Arch || len(p.Selector.MatchLabels) != 2 {
		t.Errorf("the platform entry: %+v", p)
	}
	sums, err := os.ReadFile(filepath.Join(out, "sha256sums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(sums) != want+"  "+name+"\n" {
		t.Errorf("sha256sums.txt is %q", sums)
	}

	files := untar(t, tgz)
	docs, err := os.ReadFile(filepath.Join(root, "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := files["README.md"]; !ok || !bytes.Equal(f.data, docs) {
		t.Errorf("the tarball's README.md is not docs/cli.md")
	}
	bin, ok := files["kubectl-switchboard"]
	if !ok || bin.mode != 0o755 {
		t.Fatalf("the tarball holds %v; want kubectl-switchboard, mode 0755", files)
	}
	exe := filepath.Join(t.TempDir(), "kubectl-switchboard")
	if err := os.WriteFile(exe, bin.data, 0o755); err != nil {
		t.Fatal(err)
	}
	version, err := exec.CommandContext(t.Context(), exe, "--version").Output()
	if err != nil || !strings.Contains(string(version), "v0.0.0-test.1") {
		t.Errorf("kubectl-switchboard --version: %q, %v", version, err)
	}
	sbomDescribes(t, filepath.Join(out, strings.TrimSuffix(name, ".tar.gz")+".spdx.json"), bin.data)
}

// sbomDescribes checks the SBOM at path describes exe, built from the
// checkout's HEAD with the VCS stamp on.
func sbomDescribes(t *testing.T, path string, exe []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no SBOM beside the tarball: %v", err)
	}
	d := decode(t, b)
	sum := sha256.Sum256(exe)
	if p := d.Packages[0]; p.Name != Binary || len(p.Checksums) != 1 || p.Checksums[0].ChecksumValue != hex.EncodeToString(sum[:]) {
		t.Errorf("the SBOM's first package %+v is not the tarball's binary", p)
	}
	// The revision is HEAD, or one of its ancestors when a commit lands
	// in the checkout while the test builds.
	rev, ok := strings.CutPrefix(d.Packages[1].DownloadLocation, "git+https://github.com/switchboard-dev/switchboard@")
	if !ok || len(rev) != 40 {
		t.Fatalf("the main module's download location %q names no revision", d.Packages[1].DownloadLocation)
	}
	if out, err := exec.CommandContext(t.Context(), "git", "merge-base", "--is-ancestor", rev, "HEAD").CombinedOutput(); err != nil {
		t.Errorf("revision %s is not HEAD or an ancestor: %v %s", rev, err, out)
	}
}

// untar reads a tarball's regular files by name.
func untar(t *testing.T, tgz []byte) map[string]file {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string]file{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		} else if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = file{name: h.Name, mode: h.Mode, data: data}
	}
}

// TestTarballsAreReproducible: the same files and date make the same
// bytes, so a tarball's sha256 depends on its contents alone.
func TestTarballsAreReproducible(t *testing.T) {
	files := []file{{"kubectl-switchboard", 0o755, []byte("binary")}, {"README.md", 0o644, []byte("docs")}}
	date := time.Unix(1_700_000_000, 0)
	a, err := tarball(files, date)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tarball(files, date)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two tarballs of the same files differ")
	}
	if c, _ := tarball(files, date.Add(time.Second)); bytes.Equal(a, c) {
		t.Error("the date does not reach the tarball")
	}
}

// TestAVersionKrewWouldRefuseIsRefused before anything is built: krew
// wants a semantic version with a v.
func TestAVersionKrewWouldRefuseIsRefused(t *testing.T) {
	for _, v := range []string{"11b5919", "0.1.0", "v1.2", "v1.02.3"} {
		if _, err := Release(t.Context(), Options{Version: v, Out: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "not a semantic version") {
			t.Errorf("version %q: %v", v, err)
		}
	}
}
