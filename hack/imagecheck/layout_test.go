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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const ref = "ghcr.io/switchboard-dev/switchboard/manager:0.1.0"

// put writes b as a blob of dir and returns its descriptor's JSON.
func put(t *testing.T, dir, mediaType, b, extra string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(b))
	if err := os.MkdirAll(filepath.Join(dir, blobsSHA256), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, blobsSHA256, fmt.Sprintf("%x", sum)), []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`{"mediaType":%q,"digest":"sha256:%x","size":%d%s}`, mediaType, sum, len(b), extra)
}

// indexLayout writes a layout of one index named name, with an image for
// each platform whose config says configs[platform] (the platform itself
// when absent).
func indexLayout(t *testing.T, name string, platforms []string, configs map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	var images []string
	for _, p := range platforms {
		c := p
		if configs[p] != "" {
			c = configs[p]
		}
		cos, carch, _ := strings.Cut(c, "/")
		config := put(t, dir, "application/vnd.oci.image.config.v1+json", `{"os":"`+cos+`","architecture":"`+carch+`"}`, "")
		m := put(t, dir, ociManifest, `{"schemaVersion":2,"config":`+config+`,"layers":[]}`, "")
		pos, parch, _ := strings.Cut(p, "/")
		images = append(images, strings.TrimSuffix(m, "}")+`,"platform":{"os":"`+pos+`","architecture":"`+parch+`"}}`)
	}
	idx := put(t, dir, ociIndex, `{"schemaVersion":2,"manifests":[`+strings.Join(images, ",")+`]}`,
		`,"annotations":{"`+refNameKey+`":"`+name+`","`+ctrdNameKey+`":"`+name+`"}`)
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(`{"schemaVersion":2,"manifests":[`+idx+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAnIndexOfThePlatformsAskedForPasses, and lists each platform's
// image.
func TestAnIndexOfThePlatformsAskedForPasses(t *testing.T) {
	dir := indexLayout(t, ref, []string{"linux/arm64", "linux/amd64"}, nil)
	images, err := Platforms(dir, ref, []string{"linux/amd64", "linux/arm64"})
	if err != nil {
		t.Fatal(err)
	}
	if len(images) != 2 || images[0].Platform != "linux/arm64" || images[1].Platform != "linux/amd64" || !strings.HasPrefix(images[0].Digest, "sha256:") {
		t.Errorf("images %+v", images)
	}
}

// TestAnIndexThatIsNotWhatItSaysFails: a missing platform, a config
// that says another architecture than its index entry, a name the
// loaders would not tag, a corrupted blob.
func TestAnIndexThatIsNotWhatItSaysFails(t *testing.T) {
	both := []string{"linux/amd64", "linux/arm64"}
	cases := map[string]struct {
		dir  string
		want string
	}{
		"a missing platform":  {indexLayout(t, ref, []string{"linux/amd64"}, nil), "the index holds linux/amd64, want linux/amd64,linux/arm64"},
		"a mislabelled image": {indexLayout(t, ref, both, map[string]string{"linux/arm64": "linux/amd64"}), "is linux/arm64 in the index but its config says linux/amd64"},
		"another name":        {indexLayout(t, "switchboard/manager:latest", both, nil), "want \"" + ref + "\""},
	}
	corrupt := indexLayout(t, ref, both, nil)
	entries, _ := os.ReadDir(filepath.Join(corrupt, blobsSHA256))
	for _, e := range entries {
		if err := os.WriteFile(filepath.Join(corrupt, blobsSHA256, e.Name()), []byte(`{}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases["a corrupted blob"] = struct{ dir, want string }{corrupt, "does not hash to its digest"}
	for name, c := range cases {
		if _, err := Platforms(c.dir, ref, both); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// TestASinglePlatformImageIsNotAnIndex: index.json listing an image, not
// an index, is refused: every release tarball holds an index.
func TestASinglePlatformImageIsNotAnIndex(t *testing.T) {
	dir := t.TempDir()
	m := put(t, dir, ociManifest, `{"schemaVersion":2}`, `,"annotations":{"`+refNameKey+`":"`+ref+`","`+ctrdNameKey+`":"`+ref+`"}`)
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(`{"manifests":[`+m+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Platforms(dir, ref, nil); err == nil || !strings.Contains(err.Error(), "want an image index") {
		t.Errorf("%v, want an image index", err)
	}
}

// TestThePluginIsTakenOutOfItsTarball: extract finds kubectl-switchboard
// among the tarball's files, and says so when it is not there.
func TestThePluginIsTakenOutOfItsTarball(t *testing.T) {
	dir := t.TempDir()
	tgz := filepath.Join(dir, "kubectl-switchboard_v0.1.0_linux_amd64.tar.gz")
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{"README.md": "docs", PluginBinary: "the binary"} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tgz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, err := extract(tgz, PluginBinary, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(bin); string(b) != "the binary" {
		t.Errorf("extracted %q", b)
	}
	if _, err := extract(tgz, "other", t.TempDir()); err == nil || !strings.Contains(err.Error(), "holds no other") {
		t.Errorf("a missing file: %v", err)
	}
}
