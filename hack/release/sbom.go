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
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"
)

// An SBOM is an SPDX 2.3 JSON document written from a Go binary's build
// info (debug/buildinfo), the list the linker embedded of what went into
// the binary, so it cannot name a module the binary lacks or miss one it
// holds. It describes, in this order:
//
//   - the container image, when the binary is an image's (Subject.Image);
//   - the binary itself, with its SHA-256, so the document names one file;
//   - the main module: its version as the go command stamped it and, in
//     downloadLocation, the git revision it was built from (vcs.revision);
//   - every dependency module with its version and purl
//     pkg:golang/<path>@<version> (a replaced module under its replacement,
//     the code that was compiled);
//   - the Go toolchain that compiled it and whose standard library it
//     holds, as "stdlib" with purl pkg:golang/stdlib@<version>, the name
//     syft and trivy give it, so vulnerability scanners match the Go
//     vulnerability database's stdlib entries.

// Subject is what an SBOM describes.
type Subject struct {
	// Name is the document's name, and the namespace's last element:
	// kubectl-switchboard_v0.1.0_linux_amd64, manager_linux_arm64.
	Name string
	// Binary is the executable's file name (kubectl-switchboard, manager)
	// and Version its release version.
	Binary, Version string
	// Image, when set, is the image the binary is the entrypoint of.
	Image *Image
	// Created dates the document when the build info has no vcs.time.
	Created time.Time
}

// Image is one platform's image of an index.
type Image struct {
	// Repository is the image's name without tag (ghcr.io/…/manager), Tag
	// its tag, Digest its platform manifest's digest (sha256:…).
	Repository, Tag, Digest string
	// OS and Arch are its platform.
	OS, Arch string
}

const (
	spdxVersion = "SPDX-2.3"
	noAssertion = "NOASSERTION"
	namespaceOf = Homepage + "/spdx/"
)

// spdxDoc is the part of SPDX 2.3's JSON form an SBOM uses.
type spdxDoc struct {
	SPDXVersion       string         `json:"spdxVersion"`
	DataLicense       string         `json:"dataLicense"`
	SPDXID            string         `json:"SPDXID"`
	Name              string         `json:"name"`
	DocumentNamespace string         `json:"documentNamespace"`
	CreationInfo      spdxCreation   `json:"creationInfo"`
	Packages          []spdxPackage  `json:"packages"`
	Relationships     []spdxRelation `json:"relationships"`
}

type spdxCreation struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	Name             string         `json:"name"`
	SPDXID           string         `json:"SPDXID"`
	VersionInfo      string         `json:"versionInfo,omitempty"`
	DownloadLocation string         `json:"downloadLocation"`
	FilesAnalyzed    bool           `json:"filesAnalyzed"`
	Checksums        []spdxChecksum `json:"checksums,omitempty"`
	SourceInfo       string         `json:"sourceInfo,omitempty"`
	Summary          string         `json:"summary,omitempty"`
	Comment          string         `json:"comment,omitempty"`
	Purpose          string         `json:"primaryPackagePurpose,omitempty"`
	ExternalRefs     []spdxRef      `json:"externalRefs,omitempty"`
}

type spdxChecksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

type spdxRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

type spdxRelation struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// WriteSBOM writes the SBOM of the binary at bin to path.
func WriteSBOM(bin, path string, s Subject) error {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return err
	}
	b, err := SBOM(bi, exe, s)
	if err != nil {
		return fmt.Errorf("%s: %w", bin, err)
	}
	return os.WriteFile(path, b, 0o644)
}

// SBOM is the SPDX JSON document of the binary exe whose build info is bi.
func SBOM(bi *debug.BuildInfo, exe []byte, s Subject) ([]byte, error) {
	if bi.Main.Path == "" {
		return nil, fmt.Errorf("the build info names no main module (not built from a module?)")
	}
	sum := sha256.Sum256(exe)
	hexSum := hex.EncodeToString(sum[:])
	vcs := settings(bi)
	created := s.Created.UTC()
	if t, err := time.Parse(time.RFC3339, vcs["vcs.time"]); err == nil {
		created = t.UTC()
	}
	doc := spdxDoc{
		SPDXVersion: spdxVersion, DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT", Name: s.Name,
		DocumentNamespace: namespaceOf + s.Name + "-" + hexSum,
		CreationInfo: spdxCreation{Created: created.Format(time.RFC3339),
			Creators: []string{"Organization: The Switchboard Authors", "Tool: switchboard-hack-release"}},
	}
	top := "SPDXRef-Binary"
	if s.Image != nil {
		doc.Packages = append(doc.Packages, imagePackage(*s.Image))
		doc.relate("SPDXRef-Image", "CONTAINS", top)
		top = "SPDXRef-Image"
	}
	doc.relate("SPDXRef-DOCUMENT", "DESCRIBES", top)
	doc.Packages = append(doc.Packages, spdxPackage{
		Name: s.Binary, SPDXID: "SPDXRef-Binary", VersionInfo: s.Version, DownloadLocation: noAssertion,
		Checksums: []spdxChecksum{{"SHA256", hexSum}}, Purpose: "APPLICATION",
		Comment: "go build settings: " + buildSettings(bi),
	}, mainPackage(bi, vcs))
	doc.relate("SPDXRef-Binary", "GENERATED_FROM", "SPDXRef-Main")
	for i, dep := range bi.Deps {
		id := fmt.Sprintf("SPDXRef-Module-%d-%s", i+1, idString(dep.Path))
		doc.Packages = append(doc.Packages, modulePackage(dep, id))
		doc.relate("SPDXRef-Main", "DEPENDS_ON", id)
	}
	doc.Packages = append(doc.Packages, stdlibPackage(bi.GoVersion))
	doc.relate("SPDXRef-Stdlib", "BUILD_TOOL_OF", "SPDXRef-Binary")
	b, err := json.MarshalIndent(doc, "", "  ")
	return append(b, '\n'), err
}

func (d *spdxDoc) relate(element, kind, related string) {
	d.Relationships = append(d.Relationships, spdxRelation{element, kind, related})
}

// settings are the build info's vcs.* settings.
func settings(bi *debug.BuildInfo) map[string]string {
	m := map[string]string{}
	for _, s := range bi.Settings {
		if strings.HasPrefix(s.Key, "vcs") {
			m[s.Key] = s.Value
		}
	}
	return m
}

// buildSettings are the settings that shape the binary (GOOS, GOARCH,
// CGO_ENABLED, -trimpath, -ldflags…), for a reader to reproduce it.
func buildSettings(bi *debug.BuildInfo) string {
	var parts []string
	for _, s := range bi.Settings {
		if !strings.HasPrefix(s.Key, "vcs") {
			parts = append(parts, s.Key+"="+s.Value)
		}
	}
	return strings.Join(parts, " ")
}

// mainPackage is the main module, at the revision it was built from.
func mainPackage(bi *debug.BuildInfo, vcs map[string]string) spdxPackage {
	p := spdxPackage{
		Name: bi.Main.Path, SPDXID: "SPDXRef-Main", VersionInfo: bi.Main.Version, DownloadLocation: noAssertion,
		Summary: "the main module, whose packages " + bi.Path + " is built from",
	}
	if rev := vcs["vcs.revision"]; rev != "" {
		// SPDX's VCS form of a download location: <vcs>+<url>@<revision>.
		p.DownloadLocation = vcs["vcs"] + "+https://" + bi.Main.Path + "@" + rev
		p.SourceInfo = fmt.Sprintf("built from %s revision %s, committed %s, modified working tree: %s",
			vcs["vcs"], rev, vcs["vcs.time"], vcs["vcs.modified"])
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		p.ExternalRefs = []spdxRef{golangPurl(bi.Main.Path, bi.Main.Version)}
	}
	return p
}

// modulePackage is a dependency module; a replaced one is the
// replacement, the code compiled into the binary.
func modulePackage(dep *debug.Module, id string) spdxPackage {
	m, comment := dep, ""
	if dep.Replace != nil {
		m, comment = dep.Replace, "replaces "+dep.Path+" "+dep.Version
	}
	p := spdxPackage{Name: m.Path, SPDXID: id, VersionInfo: m.Version, DownloadLocation: noAssertion, Comment: comment}
	if m.Version != "" {
		// A local directory replacement has no version and no download.
		p.DownloadLocation = "https://proxy.golang.org/" + m.Path + "/@v/" + m.Version + ".zip"
		p.ExternalRefs = []spdxRef{golangPurl(m.Path, m.Version)}
	}
	return p
}

// stdlibPackage is the Go toolchain and its standard library.
func stdlibPackage(goVersion string) spdxPackage {
	version, _, _ := strings.Cut(goVersion, " ") // "go1.26.8 X:…" names experiments after a space
	return spdxPackage{
		Name: "stdlib", SPDXID: "SPDXRef-Stdlib", VersionInfo: goVersion, DownloadLocation: "https://go.dev/dl/",
		Summary:      "the Go toolchain that compiled the binary, and its standard library linked into it",
		ExternalRefs: []spdxRef{purlRef("pkg:golang/stdlib@" + escape(strings.TrimPrefix(version, "go")))},
	}
}

// imagePackage is one platform's image, named by its manifest's digest.
func imagePackage(im Image) spdxPackage {
	last := im.Repository[strings.LastIndex(im.Repository, "/")+1:]
	purl := fmt.Sprintf("pkg:oci/%s@%s?arch=%s&os=%s&repository_url=%s&tag=%s", last, escape(im.Digest),
		escape(im.Arch), escape(im.OS), escape(im.Repository), escape(im.Tag))
	return spdxPackage{
		Name: im.Repository, SPDXID: "SPDXRef-Image", VersionInfo: im.Digest, DownloadLocation: noAssertion,
		Purpose: "CONTAINER", Summary: fmt.Sprintf("the %s/%s image of %s:%s", im.OS, im.Arch, im.Repository, im.Tag),
		ExternalRefs: []spdxRef{purlRef(purl)},
	}
}

func golangPurl(path, version string) spdxRef {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = escape(s)
	}
	return purlRef("pkg:golang/" + strings.Join(segs, "/") + "@" + escape(version))
}

func purlRef(purl string) spdxRef {
	return spdxRef{Category: "PACKAGE-MANAGER", Type: "purl", Locator: purl}
}

// escape percent-encodes s as a purl component: everything but letters,
// digits and -._~ (a pseudo-version's +dirty becomes %2Bdirty).
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// idString is s in the characters an SPDX identifier allows: letters,
// digits, "." and "-".
func idString(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, s)
}

// sbomMain is `release sbom`: the SBOM of one binary, for hack/images.sh,
// which takes each platform's binary out of its image.
func sbomMain(args []string) error {
	fs := flag.NewFlagSet("release sbom", flag.ContinueOnError)
	var s Subject
	var im Image
	var bin, out, platform, image string
	fs.StringVar(&bin, "binary", "", "the Go binary to describe")
	fs.StringVar(&out, "out", "", "the SPDX JSON file to write")
	fs.StringVar(&s.Name, "name", "", "the document's name (manager_linux_arm64)")
	fs.StringVar(&s.Version, "version", "", "the binary's release version")
	fs.StringVar(&image, "image", "", "the image the binary is in, REPOSITORY:TAG (optional)")
	fs.StringVar(&im.Digest, "digest", "", "with --image: its platform manifest's digest")
	fs.StringVar(&platform, "platform", "", "with --image: its platform, os/arch")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if bin == "" || out == "" || s.Name == "" {
		return fmt.Errorf("release sbom needs --binary, --out and --name")
	}
	s.Binary = bin[strings.LastIndex(bin, "/")+1:]
	if image != "" {
		i := strings.LastIndex(image, ":")
		var ok bool
		im.OS, im.Arch, ok = strings.Cut(platform, "/")
		if i < 0 || strings.Contains(image[i:], "/") || !ok || !strings.HasPrefix(im.Digest, "sha256:") {
			return fmt.Errorf("--image wants REPOSITORY:TAG with --digest sha256:… and --platform os/arch")
		}
		im.Repository, im.Tag = image[:i], image[i+1:]
		s.Image = &im
	}
	return WriteSBOM(bin, out, s)
}
