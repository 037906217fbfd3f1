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
	if len(manifests) == 0 {
		return fmt.Errorf("%s lists no manifest", path)
	}
	for _, m := range manifests {
		desc, ok := m.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: a manifest is not an object", path)
		}
		ann, _ := desc["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
		}
		ann[refName], ann[containerdName] = ref, ref
		desc["annotations"] = ann
	}
	out, err := json.Marshal(index)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}
