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
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
)

// The SPDX 2.3 JSON fields the comparison reads. It is read here, not
// with hack/release's writer, so that a fault in the writer is not
// repeated in the check.
type spdxDoc struct {
	SPDXVersion   string        `json:"spdxVersion"`
	Packages      []spdxPackage `json:"packages"`
	Relationships []struct {
		Element string `json:"spdxElementId"`
		Type    string `json:"relationshipType"`
		Related string `json:"relatedSpdxElement"`
	} `json:"relationships"`
}

type spdxPackage struct {
	Name             string `json:"name"`
	SPDXID           string `json:"SPDXID"`
	VersionInfo      string `json:"versionInfo"`
	DownloadLocation string `json:"downloadLocation"`
	Purpose          string `json:"primaryPackagePurpose"`
	Checksums        []struct {
		Algorithm string `json:"algorithm"`
		Value     string `json:"checksumValue"`
	} `json:"checksums"`
	ExternalRefs []struct {
		Type    string `json:"referenceType"`
		Locator string `json:"referenceLocator"`
	} `json:"externalRefs"`
}

// Want is what an SBOM must say besides the build info's modules.
type Want struct {
	// Exe is the binary's bytes: the SBOM's APPLICATION package carries
	// their SHA-256.
	Exe []byte
	// Image, when set, is the platform image's manifest digest the SBOM's
	// CONTAINER package names, and Arch its architecture.
	Image, Arch string
}

// CompareSBOM returns every way the SPDX JSON document b differs from the
// binary it describes, whose build info is bi: its pkg:golang packages
// must be exactly the main module, every module the build info lists
// (a replaced one as its replacement) and the toolchain's stdlib, each
// with the build info's version, and its name and versionInfo saying what
// its purl does; the binary must be GENERATED_FROM the main module; the
// main module's download location must name the build info's
// vcs.revision; the binary's checksum and the image's digest must be
// want's. No difference is an empty list.
func CompareSBOM(b []byte, bi *debug.BuildInfo, want Want) []string {
	var doc spdxDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return []string{"not SPDX JSON: " + err.Error()}
	}
	var diffs []string
	if doc.SPDXVersion != "SPDX-2.3" {
		diffs = append(diffs, fmt.Sprintf("spdxVersion is %q, want SPDX-2.3", doc.SPDXVersion))
	}
	diffs = append(diffs, compareModules(doc, bi)...)
	diffs = append(diffs, compareMain(doc, bi)...)
	diffs = append(diffs, compareSubject(doc, want)...)
	return diffs
}

// module is a path and version, as a purl or the build info names it.
type module struct{ path, version string }

func (m module) String() string { return m.path + "@" + m.version }

// expected is every module the build info says the binary holds.
func expected(bi *debug.BuildInfo) map[module]bool {
	goVersion, _, _ := strings.Cut(bi.GoVersion, " ")
	want := map[module]bool{{"stdlib", strings.TrimPrefix(goVersion, "go")}: true}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		want[module{bi.Main.Path, bi.Main.Version}] = true
	}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		want[module{d.Path, d.Version}] = true
	}
	return want
}

func compareModules(doc spdxDoc, bi *debug.BuildInfo) []string {
	var diffs []string
	got := map[module]bool{}
	for _, p := range doc.Packages {
		for _, purl := range purls(p) {
			m, err := parseGolangPurl(purl)
			if err != nil {
				diffs = append(diffs, fmt.Sprintf("package %s: %v", p.SPDXID, err))
				continue
			}
			if m.path == "stdlib" && (p.Name != "stdlib" || p.VersionInfo != bi.GoVersion) {
				diffs = append(diffs, fmt.Sprintf("package %s is %s %s, its purl %s (want stdlib %s)", p.SPDXID, p.Name, p.VersionInfo, purl, bi.GoVersion))
			} else if m.path != "stdlib" && (p.Name != m.path || p.VersionInfo != m.version) {
				diffs = append(diffs, fmt.Sprintf("package %s is %s %s but its purl says %s", p.SPDXID, p.Name, p.VersionInfo, m))
			}
			got[m] = true
		}
	}
	want := expected(bi)
	for _, m := range sortedModules(want) {
		if !got[m] {
			diffs = append(diffs, fmt.Sprintf("the binary holds %s; the SBOM does not list it", m))
		}
	}
	for _, m := range sortedModules(got) {
		if !want[m] {
			diffs = append(diffs, fmt.Sprintf("the SBOM lists %s; the binary's build info does not", m))
		}
	}
	return diffs
}

// purls are a package's pkg:golang purls.
func purls(p spdxPackage) []string {
	var out []string
	for _, r := range p.ExternalRefs {
		if r.Type == "purl" && strings.HasPrefix(r.Locator, "pkg:golang/") {
			out = append(out, r.Locator)
		}
	}
	return out
}

// parseGolangPurl is pkg:golang/<path>@<version>, percent-decoded.
func parseGolangPurl(purl string) (module, error) {
	rest := strings.TrimPrefix(purl, "pkg:golang/")
	rest, _, _ = strings.Cut(rest, "#")
	rest, _, _ = strings.Cut(rest, "?")
	i := strings.LastIndex(rest, "@")
	if i < 0 {
		return module{}, fmt.Errorf("purl %s has no version", purl)
	}
	path, err := url.PathUnescape(rest[:i])
	if err != nil {
		return module{}, fmt.Errorf("purl %s: %w", purl, err)
	}
	version, err := url.PathUnescape(rest[i+1:])
	if err != nil {
		return module{}, fmt.Errorf("purl %s: %w", purl, err)
	}
	return module{path, version}, nil
}

func sortedModules(set map[module]bool) []module {
	var ms []module
	for m := range set {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b module) int { return strings.Compare(a.String(), b.String()) })
	return ms
}

// compareMain checks the package the binary is GENERATED_FROM is the
// main module at the build info's version and revision.
func compareMain(doc spdxDoc, bi *debug.BuildInfo) []string {
	bin := byPurpose(doc, "APPLICATION")
	if bin == nil {
		return []string{"no APPLICATION package (the binary)"}
	}
	var main *spdxPackage
	for _, r := range doc.Relationships {
		if r.Element == bin.SPDXID && r.Type == "GENERATED_FROM" {
			main = byID(doc, r.Related)
		}
	}
	if main == nil {
		return []string{"the binary is GENERATED_FROM no package (the main module)"}
	}
	var diffs []string
	if main.Name != bi.Main.Path || main.VersionInfo != bi.Main.Version {
		diffs = append(diffs, fmt.Sprintf("the main module is %s %s, the build info's %s %s", main.Name, main.VersionInfo, bi.Main.Path, bi.Main.Version))
	}
	rev := setting(bi, "vcs.revision")
	if rev == "" {
		return append(diffs, "the binary was built without the VCS stamp (no vcs.revision in its build info)")
	}
	_, at, _ := strings.Cut(main.DownloadLocation, "@")
	if !strings.HasPrefix(main.DownloadLocation, setting(bi, "vcs")+"+") || at != rev {
		diffs = append(diffs, fmt.Sprintf("the main module's download location %q does not name revision %s", main.DownloadLocation, rev))
	}
	return diffs
}

// compareSubject checks the binary's checksum and the image's digest.
func compareSubject(doc spdxDoc, want Want) []string {
	var diffs []string
	sum := sha256.Sum256(want.Exe)
	if bin := byPurpose(doc, "APPLICATION"); bin != nil && !hasSHA256(bin, hex.EncodeToString(sum[:])) {
		diffs = append(diffs, "the binary's SHA256 is not the SBOM's: it describes another build")
	}
	if want.Image == "" {
		return diffs
	}
	im := byPurpose(doc, "CONTAINER")
	if im == nil {
		return append(diffs, "no CONTAINER package (the image)")
	}
	if im.VersionInfo != want.Image {
		diffs = append(diffs, fmt.Sprintf("the image package is %s, the index's linux/%s image %s", im.VersionInfo, want.Arch, want.Image))
	}
	for _, r := range im.ExternalRefs {
		if r.Type == "purl" && (!strings.Contains(r.Locator, "@"+url.QueryEscape(want.Image)) || !strings.Contains(r.Locator, "arch="+want.Arch)) {
			diffs = append(diffs, fmt.Sprintf("the image's purl %s does not name %s, arch %s", r.Locator, want.Image, want.Arch))
		}
	}
	return diffs
}

func hasSHA256(p *spdxPackage, sum string) bool {
	for _, c := range p.Checksums {
		if c.Algorithm == "SHA256" && c.Value == sum {
			return true
		}
	}
	return false
}

func byPurpose(doc spdxDoc, purpose string) *spdxPackage {
	for i := range doc.Packages {
		if doc.Packages[i].Purpose == purpose {
			return &doc.Packages[i]
		}
	}
	return nil
}

func byID(doc spdxDoc, id string) *spdxPackage {
	for i := range doc.Packages {
		if doc.Packages[i].SPDXID == id {
			return &doc.Packages[i]
		}
	}
	return nil
}

func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
