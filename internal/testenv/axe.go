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

package testenv

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// The accessibility checker the browser tests run on every page: axe-core
// from the npm registry, pinned by version and by the registry's own
// integrity digest (the tarball's sha512, as package-lock.json records
// it), and cached in the user's cache directory like the envtest pair.
const (
	AxeVersion   = "4.14.1"
	axeTarball   = "https://registry.npmjs.org/axe-core/-/axe-core-" + AxeVersion + ".tgz"
	axeIntegrity = "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="
)

// Axe is the source of axe-core's axe.min.js, fetched once into
// $XDG_CACHE_HOME/switchboard/npm/axe-core-<version>/ (or the platform's
// user cache directory) and read from there after.
func Axe() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(base, "switchboard", "npm", "axe-core-"+AxeVersion, "axe.min.js")
	if src, err := os.ReadFile(path); err == nil { //nolint:gosec // our own cache path
		return string(src), nil
	}
	src, err := fetchAxe()
	if err != nil {
		return "", fmt.Errorf("axe-core %s: %w", AxeVersion, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return "", err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, src, 0o600); err != nil {
		return "", err
	}
	return string(src), os.Rename(tmp, path)
}

// fetchAxe downloads the pinned tarball, checks its integrity and takes
// package/axe.min.js out of it.
func fetchAxe() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, axeTarball, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", axeTarball, resp.Status)
	}
	tgz, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	sum := sha512.Sum512(tgz)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != axeIntegrity {
		return nil, fmt.Errorf("%s has integrity %s, want %s", axeTarball, got, axeIntegrity)
	}
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("no package/axe.min.js in the tarball")
		}
		if err != nil {
			return nil, err
		}
		if h.Name == "package/axe.min.js" {
			return io.ReadAll(io.LimitReader(tr, 16<<20))
		}
	}
}
