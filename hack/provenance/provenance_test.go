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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/signed"
)

const commit = "0123456789abcdef0123456789abcdef01234567"

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// TestWrite: the statement's subjects are the images, the chart and each
// file with its digest; the predicate names the source, its commit and
// dirtiness, the builder and the plugin's version and platforms.
func TestWrite(t *testing.T) {
	dir, files, args := release(t)
	if err := write(args); err != nil {
		t.Fatal(err)
	}
	var st signed.Statement
	b, _ := os.ReadFile(filepath.Join(dir, signed.StatementFile))
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ghcr.io/o/r/manager": "sha256:aa", "ghcr.io/o/r/charts/r": "sha256:bb"}
	for name, b := range files {
		want[name] = digestOf(b)
	}
	got := map[string]string{}
	for _, s := range st.Subject {
		got[s.Name] = "sha256:" + s.Digest["sha256"]
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("subjects %v, want %v", got, want)
	}
	p, err := st.Provenance()
	if err != nil {
		t.Fatal(err)
	}
	c, dirty := p.Revision()
	ext := p.BuildDefinition.ExternalParameters
	if c != commit || !dirty || p.RunDetails.Builder.ID != "https://example.com/builder" || ext.PluginVersion != "v1.2.3" ||
		!reflect.DeepEqual(ext.PluginPlatforms, []string{"darwin/amd64", "linux/arm64"}) || len(ext.Platforms) != 2 {
		t.Errorf("provenance: commit %s dirty %v builder %s plugin %s %v platforms %v", c, dirty, p.RunDetails.Builder.ID,
			ext.PluginVersion, ext.PluginPlatforms, ext.Platforms)
	}
	predicate, _ := os.ReadFile(filepath.Join(dir, "predicate.json"))
	if !bytes.Equal(bytes.TrimSpace(predicate), bytes.TrimSpace(mustIndent(t, st.Predicate))) {
		t.Errorf("predicate.json is not the statement's predicate")
	}
	rows, err := signed.ReadDigests(dir)
	if err != nil || len(rows) != 3+2+2*len(files)+1 {
		t.Errorf("%d rows in digests.txt (%v), want 3 for the image, 2 for the chart, 2 a file and 1 for the checksums", len(rows), err)
	}

	// A tarball of another plugin version (a stale one) is refused.
	stale := "kubectl-switchboard_v1.2.2_linux_arm64.tar.gz"
	if err := os.WriteFile(filepath.Join(dir, stale), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := write(append(args, "--blob", stale)); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Errorf("a stale tarball: %v, want an error naming it stale", err)
	}
}

// release is a release directory with files, and write's arguments for it.
func release(t *testing.T) (string, map[string][]byte, []string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{
		"kubectl-switchboard_v1.2.3_linux_arm64.tar.gz":  []byte("arm64"),
		"kubectl-switchboard_v1.2.3_darwin_amd64.tar.gz": []byte("darwin"),
		"sbom/manager_linux_amd64.spdx.json":             []byte("{}"),
	}
	args := []string{"--dir", dir, "--predicate", filepath.Join(dir, "predicate.json"),
		"--image", "ghcr.io/o/r/manager:1.2.3@sha256:aa", "--chart", "ghcr.io/o/r/charts/r:0.3.0@sha256:bb",
		"--builder-id", "https://example.com/builder", "--source", "https://github.com/o/r", "--ref", "refs/tags/v1.2.3",
		"--revision", commit, "--dirty", "--version", "1.2.3", "--chart-version", "0.3.0",
		"--platforms", "linux/amd64,linux/arm64", "--key", "cosign.pub"}
	for name, b := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--blob", name)
	}
	return dir, files, args
}

func mustIndent(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadLayout: an image index's platforms come from the index; a
// single image's from its config.
func TestReadLayout(t *testing.T) {
	config := []byte(`{"os":"linux","architecture":"arm","variant":"v7"}`)
	image := []byte(`{"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"digest":"` + digestOf(config) + `"}}`)
	index := []byte(`{"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[` +
		`{"digest":"sha256:01","platform":{"os":"linux","architecture":"amd64"}},` +
		`{"digest":"sha256:02","platform":{"os":"linux","architecture":"arm64"}},` +
		`{"digest":"sha256:03","platform":{"os":"unknown","architecture":"unknown"}}]}`)
	for _, c := range []struct {
		top  []byte
		want []string
	}{{index, []string{"linux/amd64", "linux/arm64"}}, {image, []string{"linux/arm/v7"}}} {
		file := filepath.Join(t.TempDir(), "layout.tar")
		writeTar(t, file, map[string][]byte{
			"index.json": []byte(`{"manifests":[{"digest":"` + digestOf(c.top) + `"}]}`),
			"blobs/sha256/" + strings.TrimPrefix(digestOf(c.top), "sha256:"):  c.top,
			"blobs/sha256/" + strings.TrimPrefix(digestOf(config), "sha256:"): config,
		})
		l, err := ReadLayout(file)
		if err != nil || l.Digest != digestOf(c.top) || !reflect.DeepEqual(l.Platforms, c.want) {
			t.Errorf("ReadLayout: %+v, %v; want %s %v", l, err, digestOf(c.top), c.want)
		}
	}
}

func writeTar(t *testing.T, file string, files map[string][]byte) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, b := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "./" + name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
