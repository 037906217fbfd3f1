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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// Layout is what an OCI image layout tarball holds: one image or image
// index, its digest and its platforms.
type Layout struct {
	Digest    string
	Platforms []string
}

// PlatformList is the platforms, comma-separated.
func (l Layout) PlatformList() string { return strings.Join(l.Platforms, ",") }

type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Platform  *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		Variant      string `json:"variant"`
	} `json:"platform"`
}

type manifest struct {
	MediaType string       `json:"mediaType"`
	Manifests []descriptor `json:"manifests"`
	Config    descriptor   `json:"config"`
}

// ReadLayout reads the tarball at file: its index.json must list one
// manifest (an image index, or an image), whose digest and platforms it
// returns. It reads the JSON files only; the layers are skipped.
func ReadLayout(file string) (Layout, error) {
	blobs, err := readJSONFiles(file)
	if err != nil {
		return Layout{}, err
	}
	var index manifest
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil {
		return Layout{}, fmt.Errorf("%s: index.json: %w", file, err)
	}
	if len(index.Manifests) != 1 {
		return Layout{}, fmt.Errorf("%s: index.json lists %d manifests, want 1", file, len(index.Manifests))
	}
	l := Layout{Digest: index.Manifests[0].Digest}
	var top manifest
	if err := json.Unmarshal(blobs[blobPath(l.Digest)], &top); err != nil {
		return l, fmt.Errorf("%s: manifest %s: %w", file, l.Digest, err)
	}
	if len(top.Manifests) > 0 {
		for _, m := range top.Manifests {
			if m.Platform != nil && m.Platform.OS != "unknown" {
				l.Platforms = append(l.Platforms, platform(m.Platform.OS, m.Platform.Architecture, m.Platform.Variant))
			}
		}
		return l, nil
	}
	var config struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		Variant      string `json:"variant"`
	}
	if err := json.Unmarshal(blobs[blobPath(top.Config.Digest)], &config); err != nil {
		return l, fmt.Errorf("%s: config %s: %w", file, top.Config.Digest, err)
	}
	l.Platforms = []string{platform(config.OS, config.Architecture, config.Variant)}
	return l, nil
}

func platform(goos, arch, variant string) string {
	if variant != "" {
		return goos + "/" + arch + "/" + variant
	}
	return goos + "/" + arch
}

func blobPath(digest string) string {
	return path.Join("blobs", strings.Replace(digest, ":", "/", 1))
}

// readJSONFiles reads the tarball's index.json and every blob small enough
// to be a manifest or a config (layers are larger, and skipped).
func readJSONFiles(file string) (map[string][]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		name := path.Clean(h.Name)
		if h.Typeflag != tar.TypeReg || h.Size > 1<<20 || (name != "index.json" && !strings.HasPrefix(name, "blobs/")) {
			continue
		}
		if files[name], err = io.ReadAll(tr); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", file, name, err)
		}
	}
}
