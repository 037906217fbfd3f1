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
	"regexp"
	"runtime/debug"
	"slices"
	"testing"
	"time"
)

const revision = "708fb0eeb2475d935a760096fa9c64ff017f8700"

// buildInfo is a binary's build info as the go command stamps it with
// -buildvcs=true in a modified checkout.
func buildInfo() *debug.BuildInfo {
	return &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Path:      "github.com/switchboard-dev/switchboard/cmd/manager",
		Main:      debug.Module{Path: "github.com/switchboard-dev/switchboard", Version: "v0.0.0-20261129071944-708fb0eeb247+dirty"},
		Deps: []*debug.Module{
			{Path: "github.com/BurntSushi/toml", Version: "v1.5.0", Sum: "h1:x"},
			{Path: "sigs.k8s.io/yaml", Version: "v1.6.0", Replace: &debug.Module{Path: "example.com/fork/yaml", Version: "v1.6.1"}},
			{Path: "example.com/local", Version: "v0.0.0", Replace: &debug.Module{Path: "../local"}},
		},
		Settings: []debug.BuildSetting{
			{Key: "CGO_ENABLED", Value: "0"}, {Key: "GOARCH", Value: "arm64"}, {Key: "GOOS", Value: "linux"},
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: revision},
			{Key: "vcs.time", Value: "2026-11-29T07:19:44Z"}, {Key: "vcs.modified", Value: "true"},
		},
	}
}

// doc is the SBOM decoded loosely, as a reader of SPDX JSON would.
type doc struct {
	SPDXVersion, DataLicense, SPDXID, Name, DocumentNamespace string
	CreationInfo                                              struct{ Created string }
	Packages                                                  []struct {
		Name, SPDXID, VersionInfo, DownloadLocation, PrimaryPackagePurpose string
		Checksums                                                          []struct{ Algorithm, ChecksumValue string }
		ExternalRefs                                                       []struct{ ReferenceType, ReferenceLocator string }
	}
	Relationships []struct{ SpdxElementID, RelationshipType, RelatedSpdxElement string }
}

func decode(t *testing.T, b []byte) doc {
	t.Helper()
	var d doc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestTheSBOMListsEveryModuleOfTheBuildInfo: each module under its
// version's purl (a replaced one as its replacement, a directory
// replacement without one), the toolchain as stdlib, the main module at
// its revision, and the binary by its SHA-256.
func TestTheSBOMListsEveryModuleOfTheBuildInfo(t *testing.T) {
	exe := []byte("the binary")
	b, err := SBOM(buildInfo(), exe, Subject{Name: "manager_linux_arm64", Binary: "manager", Version: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, b)
	sum := sha256.Sum256(exe)
	if d.SPDXVersion != "SPDX-2.3" || d.DataLicense != "CC0-1.0" || d.SPDXID != "SPDXRef-DOCUMENT" || d.Name != "manager_linux_arm64" ||
		d.DocumentNamespace != Homepage+"/spdx/manager_linux_arm64-"+hex.EncodeToString(sum[:]) || d.CreationInfo.Created != "2026-11-29T07:19:44Z" {
		t.Errorf("the document's header: %+v %+v", d.Name, d.CreationInfo)
	}
	var purls []string
	ids := map[string]bool{}
	for _, p := range d.Packages {
		for _, r := range p.ExternalRefs {
			purls = append(purls, r.ReferenceLocator)
		}
		if ids[p.SPDXID] || !regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`).MatchString(p.SPDXID) {
			t.Errorf("SPDXID %q repeated or not an SPDX identifier", p.SPDXID)
		}
		ids[p.SPDXID] = true
		switch p.SPDXID {
		case "SPDXRef-Main":
			if p.DownloadLocation != "git+https://github.com/switchboard-dev/switchboard@"+revision {
				t.Errorf("the main module's download location %q does not name the revision", p.DownloadLocation)
			}
		case "SPDXRef-Binary":
			if len(p.Checksums) != 1 || p.Checksums[0].ChecksumValue != hex.EncodeToString(sum[:]) || p.PrimaryPackagePurpose != "APPLICATION" {
				t.Errorf("the binary's package: %+v", p)
			}
		}
	}
	want := []string{
		"pkg:golang/github.com/switchboard-dev/switchboard@v0.0.0-20261129071944-708fb0eeb247%2Bdirty",
		"pkg:golang/github.com/BurntSushi/toml@v1.5.0",
		"pkg:golang/example.com/fork/yaml@v1.6.1",
		"pkg:golang/stdlib@1.26.8",
	}
	if !slices.Equal(purls, want) {
		t.Errorf("purls\n%q\nwant\n%q", purls, want)
	}
	if len(d.Packages) != 6 { // the binary, main, three modules, stdlib
		t.Errorf("%d packages, want 6", len(d.Packages))
	}
	for _, r := range d.Relationships {
		if !ids[r.RelatedSpdxElement] || (!ids[r.SpdxElementID] && r.SpdxElementID != "SPDXRef-DOCUMENT") {
			t.Errorf("relationship %+v names a package the document lacks", r)
		}
	}
	if r := d.Relationships[0]; r.SpdxElementID != "SPDXRef-DOCUMENT" || r.RelationshipType != "DESCRIBES" || r.RelatedSpdxElement != "SPDXRef-Binary" {
		t.Errorf("the document describes %+v, want the binary", r)
	}
}

// TestAnImagesSBOMDescribesThePlatformImage: the image, by its platform
// manifest's digest, contains the binary.
func TestAnImagesSBOMDescribesThePlatformImage(t *testing.T) {
	im := &Image{Repository: "ghcr.io/switchboard-dev/switchboard/manager", Tag: "0.1.0", Digest: "sha256:" + hex.EncodeToString(make([]byte, 32)), OS: "linux", Arch: "arm64"}
	b, err := SBOM(buildInfo(), []byte("x"), Subject{Name: "manager_linux_arm64", Binary: "manager", Image: im})
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, b)
	p := d.Packages[0]
	wantPurl := "pkg:oci/manager@sha256%3A" + hex.EncodeToString(make([]byte, 32)) +
		"?arch=arm64&os=linux&repository_url=ghcr.io%2Fswitchboard-dev%2Fswitchboard%2Fmanager&tag=0.1.0"
	if p.SPDXID != "SPDXRef-Image" || p.VersionInfo != im.Digest || p.PrimaryPackagePurpose != "CONTAINER" ||
		len(p.ExternalRefs) != 1 || p.ExternalRefs[0].ReferenceLocator != wantPurl {
		t.Errorf("the image's package: %+v", p)
	}
	var describes, contains bool
	for _, r := range d.Relationships {
		describes = describes || r == struct{ SpdxElementID, RelationshipType, RelatedSpdxElement string }{"SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Image"}
		contains = contains || r == struct{ SpdxElementID, RelationshipType, RelatedSpdxElement string }{"SPDXRef-Image", "CONTAINS", "SPDXRef-Binary"}
	}
	if !describes || !contains {
		t.Errorf("relationships %+v: want the document to describe the image and the image to contain the binary", d.Relationships)
	}
}

// TestWithoutTheVCSStampTheSBOMNamesNoRevision: the date falls back to
// the subject's, the main module has no download location, and a binary
// with no main module (not built from a module) is refused.
func TestWithoutTheVCSStampTheSBOMNamesNoRevision(t *testing.T) {
	bi := buildInfo()
	bi.Settings = bi.Settings[:3]
	b, err := SBOM(bi, nil, Subject{Name: "n", Created: time.Unix(1_700_000_000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, b)
	if d.CreationInfo.Created != "2023-11-14T22:13:20Z" || d.Packages[1].SPDXID != "SPDXRef-Main" || d.Packages[1].DownloadLocation != "NOASSERTION" {
		t.Errorf("created %s, main %+v", d.CreationInfo.Created, d.Packages[1])
	}
	bi.Main.Path = ""
	if _, err := SBOM(bi, nil, Subject{Name: "n"}); err == nil {
		t.Error("an SBOM of a binary with no main module")
	}
}
