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

// Command imagecheck checks what a release ships against what it says it
// is (hack/check-images.sh runs it):
//
//	imagecheck platforms --layout DIR --ref REPOSITORY:TAG [--want linux/amd64,linux/arm64]
//
// reads an OCI image layout (an image tarball, untarred): index.json names
// one image index ref, which holds exactly the platforms wanted, each
// image's config saying the platform its index entry does. It prints one
// "os/arch sha256:…" line a platform.
//
//	imagecheck binary --binary FILE --platform os/arch --sbom FILE.spdx.json [--image sha256:…]
//	imagecheck tarball --tarball FILE.tar.gz --platform os/arch --sbom FILE.spdx.json
//
// checks one binary (or the kubectl plugin's, taken out of its release
// tarball): its header says the platform's machine (debug/elf: EM_X86_64,
// EM_AARCH64, static; debug/macho for darwin), its build info says the
// platform's GOOS and GOARCH, and the SBOM's package list equals its build
// info (debug/buildinfo): the same main module, modules and versions, the
// same toolchain and revision; --image is the platform image's digest the
// SBOM must name. Every difference is printed; any makes the exit status 1.
package main

import (
	"archive/tar"
	"compress/gzip"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// PluginBinary is the executable in the kubectl plugin's tarballs.
const PluginBinary = "kubectl-switchboard"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: imagecheck platforms|binary|tarball FLAGS")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "platforms":
		err = platformsMain(os.Args[2:])
	case "binary", "tarball":
		err = binaryMain(os.Args[1], os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "imagecheck:", err)
		os.Exit(1)
	}
}

func platformsMain(args []string) error {
	fs := flag.NewFlagSet("imagecheck platforms", flag.ContinueOnError)
	dir := fs.String("layout", "", "the OCI image layout directory")
	ref := fs.String("ref", "", "the name index.json must give the index, REPOSITORY:TAG")
	want := fs.String("want", "", "the platforms the index must hold, comma-separated os/arch (default: any)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var platforms []string
	if *want != "" {
		platforms = strings.Split(*want, ",")
	}
	images, err := Platforms(*dir, *ref, platforms)
	if err != nil {
		return fmt.Errorf("%s: %w", *dir, err)
	}
	for _, im := range images {
		fmt.Println(im.Platform, im.Digest)
	}
	return nil
}

func binaryMain(kind string, args []string) error {
	fs := flag.NewFlagSet("imagecheck "+kind, flag.ContinueOnError)
	path := fs.String(kind, "", "the binary, or the release tarball holding "+PluginBinary)
	platform := fs.String("platform", "", "the platform it is for, os/arch")
	sbom := fs.String("sbom", "", "its SPDX JSON SBOM")
	image := fs.String("image", "", "the digest of the platform image it is in (binary only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	goos, goarch, ok := strings.Cut(*platform, "/")
	if *path == "" || *sbom == "" || !ok {
		return errors.New("needs --" + kind + ", --platform os/arch and --sbom")
	}
	bin := *path
	if kind == "tarball" {
		dir, err := os.MkdirTemp("", "imagecheck-")
		if err != nil {
			return err
		}
		defer func() { _ = os.RemoveAll(dir) }()
		if bin, err = extract(*path, PluginBinary, dir); err != nil {
			return err
		}
	}
	diffs, err := CheckBinary(bin, goos, goarch, *sbom, *image)
	if err != nil {
		return err
	}
	for _, d := range diffs {
		fmt.Fprintf(os.Stderr, "imagecheck: %s (%s): %s\n", *path, *sbom, d)
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%s: %d problems", *path, len(diffs))
	}
	return nil
}

// CheckBinary is every problem with the binary at bin for goos/goarch and
// its SBOM at sbom (image, when set, the digest of the image holding it).
func CheckBinary(bin, goos, goarch, sbom, image string) ([]string, error) {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	doc, err := os.ReadFile(sbom)
	if err != nil {
		return nil, err
	}
	var diffs []string
	if err := CheckExecutable(bin, goos, goarch); err != nil {
		diffs = append(diffs, err.Error())
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return append(diffs, "no Go build info: "+err.Error()), nil
	}
	if got := setting(bi, "GOOS") + "/" + setting(bi, "GOARCH"); got != goos+"/"+goarch {
		diffs = append(diffs, fmt.Sprintf("its build info says %s, want %s/%s", got, goos, goarch))
	}
	return append(diffs, CompareSBOM(doc, bi, Want{Exe: exe, Image: image, Arch: goarch})...), nil
}

// extract writes the tarball's (gzip) entry name into dir.
func extract(tarball, name, dir string) (string, error) {
	f, err := os.Open(tarball)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", tarball, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("%s holds no %s", tarball, name)
		} else if err != nil {
			return "", fmt.Errorf("%s: %w", tarball, err)
		}
		if h.Name != name || h.Typeflag != tar.TypeReg {
			continue
		}
		out := filepath.Join(dir, name)
		b, err := io.ReadAll(tr)
		if err != nil {
			return "", err
		}
		return out, os.WriteFile(out, b, 0o755)
	}
}
