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

// Command release builds the kubectl plugin's release: for each platform
// a tarball kubectl-switchboard_<version>_<os>_<arch>.tar.gz holding the
// binary (CGO_ENABLED=0, -trimpath, its version set with -ldflags), the
// plugin's docs as README.md and the LICENSE when the repository has one;
// beside each tarball its binary's SBOM kubectl-switchboard_<version>_<os>_<arch>.spdx.json
// (SPDX 2.3 JSON, sbom.go: every module and the toolchain from the
// binary's build info, and the git revision it was built from);
// a sha256sums.txt of the tarballs (`sha256sum -c` reads it); and the krew
// plugin manifest switchboard.yaml with each tarball's URL and sha256
// (krew's manifest format: apiVersion krew.googlecontainertools.github.com/v1alpha2).
//
// The tarballs are reproducible: entries in a fixed order, owned by root,
// dated SOURCE_DATE_EPOCH (the Makefile passes the commit's time).
//
// Usage: release --version v0.1.0 --out dist/release [--platforms linux/amd64,...] [--base-url URL]
//
//	release sbom --binary FILE --out FILE.spdx.json --name NAME [--version V]
//	        [--image REPOSITORY:TAG --digest sha256:… --platform os/arch]
//
// writes one binary's SBOM (hack/images.sh, for each image's platform).
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Binary is the plugin's executable: kubectl runs kubectl-switchboard as
// `kubectl switchboard`.
const Binary = "kubectl-switchboard"

// PluginName is the krew plugin's name (the manifest's metadata.name and
// file name).
const PluginName = "switchboard"

// Homepage is the project's repository.
const Homepage = "https://github.com/switchboard-dev/switchboard"

// DefaultPlatforms are the platforms a release is built for.
var DefaultPlatforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

// Platform is a GOOS and GOARCH.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Options are one release's.
type Options struct {
	// Version is the release's semantic version with its v (krew wants
	// one): v0.1.0, or v0.0.0-g1a2b3c4 between tags.
	Version string
	// Root is the repository's root; Out the directory written.
	Root, Out string
	// Platforms to build.
	Platforms []Platform
	// BaseURL is where the tarballs are downloaded from; the manifest's
	// URIs are BaseURL/<tarball>.
	BaseURL string
	// Date dates the tarballs' entries.
	Date time.Time
}

// Archive is one platform's tarball.
type Archive struct {
	Platform Platform
	Name     string
	SHA256   string
}

// semver is krew's rule for spec.version: a semantic version with a v.
var semver = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// Release builds every platform's tarball, the checksums and the krew
// manifest into o.Out.
func Release(ctx context.Context, o Options) ([]Archive, error) {
	if !semver.MatchString(o.Version) {
		return nil, fmt.Errorf("version %q is not a semantic version with a v (krew needs one)", o.Version)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	docs, err := os.ReadFile(filepath.Join(o.Root, "docs", "cli.md"))
	if err != nil {
		return nil, err
	}
	license, err := os.ReadFile(filepath.Join(o.Root, "LICENSE"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var archives []Archive
	var sums strings.Builder
	for _, p := range o.Platforms {
		a, err := build(ctx, o, p, docs, license)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		archives = append(archives, a)
		fmt.Fprintf(&sums, "%s  %s\n", a.SHA256, a.Name)
	}
	if err := os.WriteFile(filepath.Join(o.Out, "sha256sums.txt"), []byte(sums.String()), 0o644); err != nil {
		return nil, err
	}
	m, err := manifest(o, archives)
	if err != nil {
		return nil, err
	}
	return archives, os.WriteFile(filepath.Join(o.Out, PluginName+".yaml"), m, 0o644)
}

// build compiles the plugin for p and writes its tarball.
func build(ctx context.Context, o Options, p Platform, docs, license []byte) (Archive, error) {
	tmp, err := os.MkdirTemp("", "release-")
	if err != nil {
		return Archive{}, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	bin := filepath.Join(tmp, Binary)
	// -buildvcs=true: the binary names the revision it was built from
	// (vcs.revision, vcs.time, vcs.modified), and its SBOM with it; outside
	// a git checkout the build fails rather than leave them out.
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=true", "-ldflags", "-s -w -X main.version="+o.Version, "-o", bin, "./cmd/"+Binary)
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return Archive{}, fmt.Errorf("go build: %w\n%s", err, out)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return Archive{}, err
	}
	files := []file{{Binary, 0o755, exe}, {"README.md", 0o644, docs}}
	if license != nil {
		files = append(files, file{"LICENSE", 0o644, license})
	}
	tgz, err := tarball(files, o.Date)
	if err != nil {
		return Archive{}, err
	}
	base := fmt.Sprintf("%s_%s_%s_%s", Binary, o.Version, p.OS, p.Arch)
	name := base + ".tar.gz"
	if err := os.WriteFile(filepath.Join(o.Out, name), tgz, 0o644); err != nil {
		return Archive{}, err
	}
	s := Subject{Name: base, Binary: Binary, Version: o.Version, Created: o.Date}
	if err := WriteSBOM(bin, filepath.Join(o.Out, base+".spdx.json"), s); err != nil {
		return Archive{}, fmt.Errorf("SBOM: %w", err)
	}
	sum := sha256.Sum256(tgz)
	return Archive{Platform: p, Name: name, SHA256: hex.EncodeToString(sum[:])}, nil
}

// file is one tarball entry.
type file struct {
	name string
	mode int64
	data []byte
}

// tarball is files, in order, as a gzip-compressed tar dated date.
func tarball(files []file, date time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: date, Typeflag: tar.TypeReg,
			Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Manifest is a krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2
// Plugin): the fields this plugin uses.
type Manifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string             `json:"version"`
		Homepage         string             `json:"homepage"`
		ShortDescription string             `json:"shortDescription"`
		Description      string             `json:"description"`
		Platforms        []ManifestPlatform `json:"platforms"`
	} `json:"spec"`
}

// ManifestPlatform is one platform's download in a krew manifest.
type ManifestPlatform struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	URI    string `json:"uri"`
	SHA256 string `json:"sha256"`
	Bin    string `json:"bin"`
}

// description is krew's description: what the plugin is for, not a list
// of its options (its --help has those).
const description = `Works with the custom resources of Switchboard, the Kubernetes operator
that runs SaaS integrations (Notion, Google Calendar and Sheets, slide
decks, expiring share links). It prints the one-use OAuth connect link of a
resource, asks for a reconcile and waits until the resource is Ready or
says why not, suspends and resumes, lists every Switchboard resource with
its Ready reason and message, shows an integration with its child syncs,
and lists a resource's events.
`

func manifest(o Options, archives []Archive) ([]byte, error) {
	var m Manifest
	m.APIVersion = "krew.googlecontainertools.github.com/v1alpha2"
	m.Kind = "Plugin"
	m.Metadata.Name = PluginName
	m.Spec.Version = o.Version
	m.Spec.Homepage = Homepage
	m.Spec.ShortDescription = "Connect, reconcile and inspect Switchboard resources"
	m.Spec.Description = description
	for _, a := range archives {
		var p ManifestPlatform
		p.Selector.MatchLabels = map[string]string{"os": a.Platform.OS, "arch": a.Platform.Arch}
		p.URI = strings.TrimSuffix(o.BaseURL, "/") + "/" + a.Name
		p.SHA256 = a.SHA256
		p.Bin = Binary
		m.Spec.Platforms = append(m.Spec.Platforms, p)
	}
	return yaml.Marshal(m)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "sbom" {
		if err := sbomMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "release sbom:", err)
			os.Exit(1)
		}
		return
	}
	var o Options
	var platforms string
	flag.StringVar(&o.Version, "version", "", "the release's version, a semantic version with a v")
	flag.StringVar(&o.Out, "out", "dist/release", "directory to write the tarballs, sha256sums.txt and "+PluginName+".yaml into")
	flag.StringVar(&o.Root, "root", ".", "the repository's root")
	flag.StringVar(&platforms, "platforms", "", "comma-separated os/arch list (default: linux and darwin, amd64 and arm64)")
	flag.StringVar(&o.BaseURL, "base-url", "", "where the tarballs are published (default: the GitHub release of --version)")
	flag.Parse()
	if o.BaseURL == "" {
		o.BaseURL = Homepage + "/releases/download/" + o.Version
	}
	o.Platforms = DefaultPlatforms
	if platforms != "" {
		o.Platforms = nil
		for _, p := range strings.Split(platforms, ",") {
			goos, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
			if !ok {
				fmt.Fprintf(os.Stderr, "release: platform %q is not os/arch\n", p)
				os.Exit(2)
			}
			o.Platforms = append(o.Platforms, Platform{goos, arch})
		}
	}
	o.Date = time.Unix(0, 0).UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "release: SOURCE_DATE_EPOCH:", err)
			os.Exit(2)
		}
		o.Date = time.Unix(sec, 0).UTC()
	}
	archives, err := Release(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	for _, a := range archives {
		fmt.Println(filepath.Join(o.Out, a.Name))
		fmt.Println(filepath.Join(o.Out, strings.TrimSuffix(a.Name, ".tar.gz")+".spdx.json"))
	}
	fmt.Println(filepath.Join(o.Out, "sha256sums.txt"))
	fmt.Println(filepath.Join(o.Out, PluginName+".yaml"))
}
