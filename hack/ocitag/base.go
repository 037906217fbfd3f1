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
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// baseAnnotations are the annotations ko writes on each image and index
// it builds naming its base image: hack/images.sh's base is on a loopback
// registry at a port the kernel picked, so they name an address that
// exists only during the build and change the digests from one build of
// the same source to the next.
var baseAnnotations = []string{"org.opencontainers.image.base.name", "org.opencontainers.image.base.digest"}

// unbase removes baseAnnotations from the manifest desc points at and,
// for an index, from every manifest it lists, rewriting each changed
// blob under its new digest and desc with it. The replaced blobs' paths
// are added to replaced, for the caller to remove once every manifest
// (two may share a blob) is rewritten.
func unbase(dir string, desc map[string]any, replaced map[string]bool) error {
	digest, _ := desc["digest"].(string)
	old, err := blobPath(dir, digest)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(old)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", digest, err)
	}
	changed := dropAnnotations(m)
	if children, ok := m["manifests"].([]any); ok {
		for _, c := range children {
			child, ok := c.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: a manifest is not an object", digest)
			}
			before := child["digest"]
			if err := unbase(dir, child, replaced); err != nil {
				return err
			}
			changed = changed || child["digest"] != before
		}
	}
	if !changed {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	sum := sha256.Sum256(out)
	desc["digest"], desc["size"] = "sha256:"+hex.EncodeToString(sum[:]), len(out)
	replaced[old] = true
	return os.WriteFile(filepath.Join(dir, "blobs", "sha256", hex.EncodeToString(sum[:])), out, 0o644)
}

// dropAnnotations removes baseAnnotations from m's annotations (an
// index.json descriptor's or a manifest's), and says whether it did.
func dropAnnotations(m map[string]any) bool {
	ann, _ := m["annotations"].(map[string]any)
	changed := false
	for _, k := range baseAnnotations {
		if _, ok := ann[k]; ok {
			delete(ann, k)
			changed = true
		}
	}
	if changed && len(ann) == 0 {
		delete(m, "annotations")
	}
	return changed
}

func blobPath(dir, digest string) (string, error) {
	hexDigest, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hexDigest) != 64 || strings.Trim(hexDigest, "0123456789abcdef") != "" {
		return "", fmt.Errorf("digest %q is not sha256:<64 hex>", digest)
	}
	return filepath.Join(dir, "blobs", "sha256", hexDigest), nil
}
