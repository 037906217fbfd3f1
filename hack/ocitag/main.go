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

// Command ocitag names the image of an OCI image layout: it sets, on each
// manifest its index.json lists, the two annotations loaders read for an
// image's name, so that a loaded image is tagged instead of <none>:
//
//   - org.opencontainers.image.ref.name (OCI image-spec, annotations.md),
//     which `podman load` (containers/image's oci-archive transport) takes
//     as the image's name;
//   - io.containerd.image.name, which containerd's importer
//     (`ctr -n k8s.io images import`) takes as the image's name before
//     ref.name, as `docker save` writes it.
//
// The one manifest index.json lists may be an image or an image index
// (a multi-platform image, hack/images.sh): both loaders name what that
// descriptor points at, and take the platform they run on from the index.
// A layout listing more than one manifest is refused: podman load refuses
// it ("more than one image"), and one name on two images would tag only
// one of them.
//
// It also removes the org.opencontainers.image.base.* annotations ko
// writes (base.go): they name the loopback registry hack/images.sh built
// on, at a random port, which no reader can pull from and which would
// change the images' digests from one build of the same commit to the
// next. The manifests that held them are rewritten under new digests.
//
// Usage: ocitag LAYOUT_DIR REGISTRY/REPOSITORY:TAG
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	refName        = "org.opencontainers.image.ref.name"
	containerdName = "io.containerd.image.name"
)

// named are the media types a loader names: OCI's and Docker's image
// manifest and image index.
var named = map[string]bool{
	"application/vnd.oci.image.manifest.v1+json":                true,
	"application/vnd.oci.image.index.v1+json":                   true,
	"application/vnd.docker.distribution.manifest.v2+json":      true,
	"application/vnd.docker.distribution.manifest.list.v2+json": true,
}

func main() {
	if len(os.Args) != 3 || !strings.Contains(os.Args[2], ":") {
		fmt.Fprintln(os.Stderr, "usage: ocitag LAYOUT_DIR REGISTRY/REPOSITORY:TAG")
		os.Exit(2)
	}
	if err := tag(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "ocitag:", err)
		os.Exit(1)
	}
}

func tag(dir, ref string) error {
	path := filepath.Join(dir, "index.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	// Decoded loosely, so every other field is written back unchanged.
	var index map[string]any
	if err := json.Unmarshal(b, &index); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	manifests, _ := index["manifests"].([]any)
	if len(manifests) != 1 {
		return fmt.Errorf("%s lists %d manifests, want one image or image index", path, len(manifests))
	}
	desc, ok := manifests[0].(map[string]any)
	if !ok {
		return fmt.Errorf("%s: the manifest is not an object", path)
	}
	if mt, _ := desc["mediaType"].(string); !named[mt] {
		return fmt.Errorf("%s lists a %q, not an image or image index", path, mt)
	}
	dropAnnotations(desc)
	replaced := map[string]bool{}
	if err := unbase(dir, desc, replaced); err != nil {
		return err
	}
	for old := range replaced {
		if err := os.Remove(old); err != nil {
			return err
		}
	}
	ann, _ := desc["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	ann[refName], ann[containerdName] = ref, ref
	desc["annotations"] = ann
	out, err := json.Marshal(index)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}
