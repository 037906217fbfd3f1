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
	"context"
	"debug/buildinfo"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

const digest = "sha256:2c3ab7617c3b2b0f941c8c84f712a760bad30bd4bc8d8bf480c9576882815ff9"

var (
	buildOnce sync.Once
	built     struct {
		bin, sbom string
		err       error
	}
)

// TestMain removes the binary release built.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.bin != "" {
		_ = os.RemoveAll(filepath.Dir(built.bin))
	}
	os.Exit(code)
}

// release builds hack/release as a release binary is built (static,
// -trimpath, the VCS stamp on) and has it write its own SBOM as the
// image of digest, once for every test: a real binary with real modules,
// described by the real writer.
func release(t *testing.T) (bin, sbom string) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "imagecheck-test-")
		if err != nil {
			built.err = err
			return
		}
		built.bin, built.sbom = filepath.Join(dir, "release"), filepath.Join(dir, "release.spdx.json")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=true", "-o", built.bin, "../release")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = err
			t.Logf("%s", out)
			return
		}
		cmd = exec.CommandContext(ctx, built.bin, "sbom", "--binary", built.bin, "--out", built.sbom, "--name", "release_linux_"+runtime.GOARCH,
			"--version", "0.1.0", "--image", "ghcr.io/switchboard-dev/switchboard/release:0.1.0", "--digest", digest, "--platform", "linux/"+runtime.GOARCH)
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = err
			t.Logf("%s", out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin, built.sbom
}

// edit writes a copy of the SBOM with change applied to its decoded JSON.
func edit(t *testing.T, sbom string, change func(doc map[string]any)) string {
	t.Helper()
	b, err := os.ReadFile(sbom)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	change(doc)
	out := filepath.Join(t.TempDir(), "edited.spdx.json")
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// pkg is the package named name in doc.
func pkg(t *testing.T, doc map[string]any, name string) map[string]any {
	t.Helper()
	for _, p := range doc["packages"].([]any) {
		if p := p.(map[string]any); p["name"] == name {
			return p
		}
	}
	t.Fatalf("no package %s", name)
	return nil
}

// setPurl points a package's purl at locator.
func setPurl(p map[string]any, locator string) {
	p["externalRefs"].([]any)[0].(map[string]any)["referenceLocator"] = locator
}

// TestTheBinaryItsSBOMDescribesPasses: a release binary, its SBOM and
// the image digest it names agree.
func TestTheBinaryItsSBOMDescribesPasses(t *testing.T) {
	bin, sbom := release(t)
	diffs, err := CheckBinary(bin, "linux", runtime.GOARCH, sbom, digest)
	if err != nil || len(diffs) > 0 {
		t.Fatalf("%v %q", err, diffs)
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil || len(bi.Deps) == 0 || setting(bi, "vcs.revision") == "" {
		t.Fatalf("the test binary has no modules or revision to compare: %v", err)
	}
}

// mismatch is one way to make an SBOM disagree with its binary, and the
// difference the check must report.
type mismatch struct {
	change func(t *testing.T, doc map[string]any)
	want   string
}

// mismatches are the edits TestAMismatchedSBOMFails makes.
func mismatches() map[string]mismatch {
	return map[string]mismatch{
		"a missing package": {func(t *testing.T, doc map[string]any) {
			var kept []any
			for _, p := range doc["packages"].([]any) {
				if p.(map[string]any)["name"] != "sigs.k8s.io/yaml" {
					kept = append(kept, p)
				}
			}
			doc["packages"] = kept
		}, "the binary holds sigs.k8s.io/yaml@"},
		"a wrong version": {func(t *testing.T, doc map[string]any) {
			p := pkg(t, doc, "sigs.k8s.io/yaml")
			p["versionInfo"] = "v0.0.1"
			setPurl(p, "pkg:golang/sigs.k8s.io/yaml@v0.0.1")
		}, "the SBOM lists sigs.k8s.io/yaml@v0.0.1"},
		"a version its purl contradicts": {func(t *testing.T, doc map[string]any) {
			pkg(t, doc, "sigs.k8s.io/yaml")["versionInfo"] = "v0.0.1"
		}, "but its purl says sigs.k8s.io/yaml@"},
		"an extra package": {func(t *testing.T, doc map[string]any) {
			setPurl(pkg(t, doc, "sigs.k8s.io/yaml"), "pkg:golang/example.com/other@v1.0.0")
		}, "the SBOM lists example.com/other@v1.0.0"},
		"a wrong revision": {func(t *testing.T, doc map[string]any) {
			pkg(t, doc, "github.com/switchboard-dev/switchboard")["downloadLocation"] = "git+https://github.com/switchboard-dev/switchboard@0000000000000000000000000000000000000000"
		}, "does not name revision"},
		"a wrong main module version": {func(t *testing.T, doc map[string]any) {
			pkg(t, doc, "github.com/switchboard-dev/switchboard")["versionInfo"] = "v0.1.0"
		}, "the main module is github.com/switchboard-dev/switchboard v0.1.0"},
		"another toolchain": {func(t *testing.T, doc map[string]any) {
			setPurl(pkg(t, doc, "stdlib"), "pkg:golang/stdlib@1.21.0")
		}, "the SBOM lists stdlib@1.21.0"},
		"another binary": {func(t *testing.T, doc map[string]any) {
			p := pkg(t, doc, "release")
			p["checksums"].([]any)[0].(map[string]any)["checksumValue"] = strings.Repeat("0", 64)
		}, "describes another build"},
		"another image": {func(t *testing.T, doc map[string]any) {
			pkg(t, doc, "ghcr.io/switchboard-dev/switchboard/release")["versionInfo"] = "sha256:" + strings.Repeat("1", 64)
		}, "the image package is sha256:1111"},
	}
}

// TestAMismatchedSBOMFails: each way an SBOM can disagree with its
// binary is reported, naming what differs.
func TestAMismatchedSBOMFails(t *testing.T) {
	bin, sbom := release(t)
	for name, c := range mismatches() {
		t.Run(name, func(t *testing.T) {
			edited := edit(t, sbom, func(doc map[string]any) { c.change(t, doc) })
			diffs, err := CheckBinary(bin, "linux", runtime.GOARCH, edited, digest)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(diffs, "\n"), c.want) {
				t.Errorf("differences %q, want one saying %q", diffs, c.want)
			}
		})
	}
}

// TestABinaryOfAnotherMachineFails: the amd64 binary checked as arm64
// (or the other way round) fails on its ELF header and its build info.
func TestABinaryOfAnotherMachineFails(t *testing.T) {
	bin, sbom := release(t)
	other, machine := "arm64", "EM_X86_64, want EM_AARCH64"
	if runtime.GOARCH == "arm64" {
		other, machine = "amd64", "EM_AARCH64, want EM_X86_64"
	}
	diffs, err := CheckBinary(bin, "linux", other, sbom, "")
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(diffs, "\n")
	if !strings.Contains(joined, "ELF machine is "+machine) || !strings.Contains(joined, "its build info says linux/"+runtime.GOARCH) {
		t.Errorf("differences %q, want the ELF machine and the build info's GOARCH", diffs)
	}
	if err := CheckExecutable(bin, "darwin", runtime.GOARCH); err == nil || !strings.Contains(err.Error(), "not a Mach-O") {
		t.Errorf("an ELF checked as darwin: %v", err)
	}
}

// TestADynamicBinaryFails: a binary that needs the dynamic loader (the
// system's ls) could not run in an image of nothing but itself.
func TestADynamicBinaryFails(t *testing.T) {
	ls, err := exec.LookPath("ls")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckExecutable(ls, "linux", runtime.GOARCH); err == nil || !strings.Contains(err.Error(), "not static") {
		t.Errorf("%s: %v, want not static", ls, err)
	}
}

// TestABinaryWithoutTheVCSStampFails: with no vcs.revision, the SBOM
// cannot name the source, and the check says the stamp is off.
func TestABinaryWithoutTheVCSStampFails(t *testing.T) {
	bin, sbom := release(t)
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var kept = bi.Settings[:0]
	for _, s := range bi.Settings {
		if !strings.HasPrefix(s.Key, "vcs") {
			kept = append(kept, s)
		}
	}
	bi.Settings = kept
	exe, _ := os.ReadFile(bin)
	doc, _ := os.ReadFile(sbom)
	if diffs := CompareSBOM(doc, bi, Want{Exe: exe}); !strings.Contains(strings.Join(diffs, "\n"), "without the VCS stamp") {
		t.Errorf("differences %q, want the missing stamp", diffs)
	}
}
