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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	ref      = "ghcr.io/switchboard-dev/switchboard/manager:0.1.0"
	ociIndex = "application/vnd.oci.image.index.v1+json"
	ociImage = "application/vnd.oci.image.manifest.v1+json"
)

// blob writes b into the layout and returns its descriptor's JSON.
func blob(t *testing.T, dir, mediaType, b string, extra string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(b))
	if err := os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "blobs", "sha256", hex.EncodeToString(sum[:])), []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`{"mediaType":%q,"digest":"sha256:%x","size":%d%s}`, mediaType, sum, len(b), extra)
}

// koLayout writes the layout crane pulls of a ko build on base: an index
// of two images, each and the index annotated with the base's name.
func koLayout(t *testing.T, base string) string {
	t.Helper()
	dir := t.TempDir()
	ann := `"annotations":{"org.opencontainers.image.base.name":"` + base + `","org.opencontainers.image.base.digest":"sha256:` + strings.Repeat("0", 64) + `"}`
	var images []string
	for _, arch := range []string{"amd64", "arm64"} {
		config := blob(t, dir, "application/vnd.oci.image.config.v1+json", `{"architecture":"`+arch+`","os":"linux"}`, "")
		m := `{"schemaVersion":2,"mediaType":"` + ociImage + `","config":` + config + `,"layers":[],` + ann + `}`
		images = append(images, blob(t, dir, ociImage, m, `,"platform":{"architecture":"`+arch+`","os":"linux"}`))
	}
	idx := `{"schemaVersion":2,"mediaType":"` + ociIndex + `","manifests":[` + strings.Join(images, ",") + `],` + ann + `}`
	top := blob(t, dir, ociIndex, idx, `,`+ann)
	return layout(t, dir, top)
}

// layout writes dir's index.json listing manifests.
func layout(t *testing.T, dir, manifests string) string {
	t.Helper()
	index := `{"schemaVersion":2,"mediaType":"` + ociIndex + `","manifests":[` + manifests + `]}`
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

type desc struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int               `json:"size"`
	Platform    map[string]string `json:"platform"`
	Annotations map[string]string `json:"annotations"`
}

// read decodes the layout's blob d after checking it hashes to d.
func read(t *testing.T, dir string, d desc, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(d.Digest, "sha256:")))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); "sha256:"+hex.EncodeToString(sum[:]) != d.Digest || len(b) != d.Size {
		t.Fatalf("blob %s does not hash to its digest or size", d.Digest)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// TestAnIndexIsNamedForBothLoaders: a multi-platform image's layout lists
// one image index; it gets both names, loses the loopback base's
// annotations everywhere, and every rewritten blob hashes to its new
// digest, the old ones gone.
func TestAnIndexIsNamedForBothLoaders(t *testing.T) {
	dir := koLayout(t, "127.0.0.1:40081/base:build")
	if err := tag(dir, ref); err != nil {
		t.Fatal(err)
	}
	var top struct{ Manifests []desc }
	b, _ := os.ReadFile(filepath.Join(dir, "index.json"))
	if err := json.Unmarshal(b, &top); err != nil || len(top.Manifests) != 1 {
		t.Fatalf("index.json: %s, %v", b, err)
	}
	d := top.Manifests[0]
	if len(d.Annotations) != 2 || d.Annotations[refName] != ref || d.Annotations[containerdName] != ref || d.MediaType != ociIndex {
		t.Errorf("index.json's descriptor %+v, want the index with both names only", d)
	}
	var idx struct {
		Manifests   []desc
		Annotations map[string]string
	}
	read(t, dir, d, &idx)
	if len(idx.Manifests) != 2 || idx.Annotations != nil {
		t.Fatalf("the index: %+v", idx)
	}
	for _, m := range idx.Manifests {
		var image struct{ Annotations map[string]string }
		read(t, dir, m, &image)
		if image.Annotations != nil || m.Platform["os"] != "linux" {
			t.Errorf("image %s: annotations %v, platform %v", m.Digest, image.Annotations, m.Platform)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "blobs", "sha256"))
	if len(entries) != 5 { // two configs, two images, the index
		t.Errorf("%d blobs, want 5: the replaced ones are left behind", len(entries))
	}
}

// TestTheBuildsRegistryDoesNotReachTheDigest: two builds on registries at
// different ports give the same index digest.
func TestTheBuildsRegistryDoesNotReachTheDigest(t *testing.T) {
	var digests []string
	for _, base := range []string{"127.0.0.1:40081/base:build", "127.0.0.1:38463/base:build"} {
		dir := koLayout(t, base)
		if err := tag(dir, ref); err != nil {
			t.Fatal(err)
		}
		var top struct{ Manifests []desc }
		b, _ := os.ReadFile(filepath.Join(dir, "index.json"))
		if err := json.Unmarshal(b, &top); err != nil {
			t.Fatal(err)
		}
		digests = append(digests, top.Manifests[0].Digest)
	}
	if digests[0] != digests[1] {
		t.Errorf("digests %v differ", digests)
	}
}

// TestALayoutNotOfOneImageIsRefused: two manifests would carry one name
// (podman load refuses such a layout), none has nothing to name, and a
// descriptor of another kind is no image.
func TestALayoutNotOfOneImageIsRefused(t *testing.T) {
	dir := t.TempDir()
	image := blob(t, dir, ociImage, `{"schemaVersion":2,"mediaType":"`+ociImage+`"}`, "")
	for name, manifests := range map[string]string{
		"two manifests": image + "," + image,
		"none":          "",
		"not an image":  blob(t, dir, "application/vnd.oci.image.layer.v1.tar", "layer", ""),
	} {
		if err := tag(layout(t, dir, manifests), ref); err == nil {
			t.Errorf("%s: tagged", name)
		}
	}
	if err := tag(layout(t, dir, image), ref); err != nil {
		t.Errorf("one image: %v", err)
	}
}

// TestImagesSharingAManifestAreRewrittenOnce: two entries of one index
// may point at one manifest; both end at its one rewritten blob.
func TestImagesSharingAManifestAreRewrittenOnce(t *testing.T) {
	dir := t.TempDir()
	m := blob(t, dir, ociImage, `{"schemaVersion":2,"mediaType":"`+ociImage+`","annotations":{"org.opencontainers.image.base.name":"127.0.0.1:1/base"}}`, "")
	idx := blob(t, dir, ociIndex, `{"schemaVersion":2,"mediaType":"`+ociIndex+`","manifests":[`+m+`,`+m+`]}`, "")
	if err := tag(layout(t, dir, idx), ref); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "blobs", "sha256"))
	if len(entries) != 2 {
		t.Errorf("%d blobs, want the rewritten image and index", len(entries))
	}
}
