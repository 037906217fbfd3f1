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
	"slices"
	"strings"
)

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Platform  *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		Variant      string `json:"variant,omitempty"`
	} `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// index is an OCI image index (index.json, or an index blob).
type index struct {
	MediaType string       `json:"mediaType"`
	Manifests []descriptor `json:"manifests"`
}

// PlatformImage is one platform's image in an index.
type PlatformImage struct {
	// Platform is os/arch; Digest the image manifest's digest.
	Platform, Digest string
}

const (
	ociIndex     = "application/vnd.oci.image.index.v1+json"
	dockerList   = "application/vnd.docker.distribution.manifest.list.v2+json"
	ociManifest  = "application/vnd.oci.image.manifest.v1+json"
	dockerImage  = "application/vnd.docker.distribution.manifest.v2+json"
	refNameKey   = "org.opencontainers.image.ref.name"
	ctrdNameKey  = "io.containerd.image.name"
	blobsSHA256  = "blobs/sha256"
	digestPrefix = "sha256:"
)

// Platforms reads the OCI image layout dir: its index.json must list one
// image index, named ref (the annotations podman load and ctr images
// import read), whose images are exactly the platforms want (os/arch, in
// any order) and each of whose configs says the platform its descriptor
// does, so a runtime that picks by descriptor runs what the image says
// it is. It returns each platform's image.
func Platforms(dir, ref string, want []string) ([]PlatformImage, error) {
	var top index
	if err := readJSON(filepath.Join(dir, "index.json"), &top); err != nil {
		return nil, err
	}
	if len(top.Manifests) != 1 {
		return nil, fmt.Errorf("index.json lists %d manifests, want one image index", len(top.Manifests))
	}
	d := top.Manifests[0]
	if d.MediaType != ociIndex && d.MediaType != dockerList {
		return nil, fmt.Errorf("index.json lists a %s, want an image index", d.MediaType)
	}
	for _, key := range []string{refNameKey, ctrdNameKey} {
		if got := d.Annotations[key]; got != ref {
			return nil, fmt.Errorf("index.json's %s is %q, want %q", key, got, ref)
		}
	}
	var idx index
	if err := readBlob(dir, d.Digest, &idx); err != nil {
		return nil, err
	}
	var images []PlatformImage
	for _, m := range idx.Manifests {
		p, err := platformOf(dir, m)
		if err != nil {
			return nil, err
		}
		images = append(images, PlatformImage{p, m.Digest})
	}
	var got []string
	for _, im := range images {
		got = append(got, im.Platform)
	}
	slices.Sort(got)
	if want != nil && !slices.Equal(got, sorted(want)) {
		return nil, fmt.Errorf("the index holds %s, want %s", strings.Join(got, ","), strings.Join(sorted(want), ","))
	}
	if len(slices.Compact(got)) != len(images) {
		return nil, fmt.Errorf("the index holds a platform twice: %s", strings.Join(got, ","))
	}
	return images, nil
}

// platformOf is an index entry's os/arch, checked against its config.
func platformOf(dir string, m descriptor) (string, error) {
	if m.MediaType != ociManifest && m.MediaType != dockerImage {
		return "", fmt.Errorf("the index lists a %s (%s), want only images", m.MediaType, m.Digest)
	}
	if m.Platform == nil || m.Platform.OS == "" || m.Platform.Architecture == "" {
		return "", fmt.Errorf("image %s has no platform in the index", m.Digest)
	}
	var manifest struct {
		Config descriptor `json:"config"`
	}
	if err := readBlob(dir, m.Digest, &manifest); err != nil {
		return "", err
	}
	var config struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		Variant      string `json:"variant"`
	}
	if err := readBlob(dir, manifest.Config.Digest, &config); err != nil {
		return "", err
	}
	p := m.Platform.OS + "/" + m.Platform.Architecture
	if c := config.OS + "/" + config.Architecture; c != p || config.Variant != m.Platform.Variant {
		return "", fmt.Errorf("image %s is %s in the index but its config says %s (variant %q)", m.Digest, p, c, config.Variant)
	}
	return p, nil
}

// readBlob decodes the layout's blob digest after checking its bytes
// hash to it.
func readBlob(dir, digest string, v any) error {
	hexDigest, ok := strings.CutPrefix(digest, digestPrefix)
	if !ok || len(hexDigest) != sha256.Size*2 {
		return fmt.Errorf("digest %q is not sha256:<64 hex>", digest)
	}
	path := filepath.Join(dir, blobsSHA256, hexDigest)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hexDigest {
		return fmt.Errorf("blob %s does not hash to its digest", digest)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("blob %s: %w", digest, err)
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
