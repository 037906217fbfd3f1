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

package signed

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRowNames(t *testing.T) {
	for _, c := range []struct{ name, repo, tag, layout string }{
		{"ghcr.io/switchboard-dev/switchboard/manager:0.1.0", "ghcr.io/switchboard-dev/switchboard/manager", "0.1.0", "oci/manager"},
		{"127.0.0.1:5000/charts/switchboard:0.2.0-rc.1", "127.0.0.1:5000/charts/switchboard", "0.2.0-rc.1", "oci/switchboard"},
		{"127.0.0.1:5000/x/webhook", "127.0.0.1:5000/x/webhook", "", "oci/webhook"},
	} {
		r := Row{Name: c.name}
		if r.Repository() != c.repo || r.Tag() != c.tag || r.Layout() != c.layout {
			t.Errorf("%s: repository %q, tag %q, layout %q; want %q, %q, %q", c.name, r.Repository(), r.Tag(), r.Layout(), c.repo, c.tag, c.layout)
		}
	}
	reg := &Registry{Addr: "127.0.0.1:4000"}
	if got := reg.Local("ghcr.io/switchboard-dev/switchboard/manager@sha256:ab"); got != "127.0.0.1:4000/switchboard-dev/switchboard/manager@sha256:ab" {
		t.Errorf("Local: %s", got)
	}
}

// TestDigestsRoundTrip: what WriteDigests writes, ReadDigests reads back,
// and the commands name the signer as each kind of release is verified.
func TestDigestsRoundTrip(t *testing.T) {
	key := Identity{Key: PublicKeyFile}
	keyless := Identity{CertIdentity: "https://github.com/o/r/.github/workflows/release.yml@refs/tags/v1.0.0", CertIssuer: KeylessIssuer}
	var rows []Row
	rows = append(rows, key.Rows(KindImage, "ghcr.io/o/r/manager:1.0.0", "sha256:aa")...)
	rows = append(rows, key.Rows(KindChart, "ghcr.io/o/r/charts/r:1.0.0", "sha256:bb")...)
	rows = append(rows, keyless.Rows(KindFile, "sbom/manager_linux_arm64.spdx.json", "sha256:cc")...)
	if len(rows) != 3+2+2 {
		t.Fatalf("%d rows, want 3 for an image, 2 for the chart, 2 for a file", len(rows))
	}
	var buf bytes.Buffer
	if err := WriteDigests(&buf, "line one\nline two", rows); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, DigestsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDigests(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Errorf("read back\n%v\nwrote\n%v", got, rows)
	}
	want := "cosign verify-attestation --key cosign.pub --insecure-ignore-tlog=true --type spdxjson ghcr.io/o/r/manager@sha256:aa"
	if c := strings.Join(rows[2].Command, " "); c != want {
		t.Errorf("image SBOM command %q, want %q", c, want)
	}
	want = "cosign verify-blob-attestation --certificate-identity " + keyless.CertIdentity + " --certificate-oidc-issuer " + KeylessIssuer +
		" --type slsaprovenance1 --bundle sbom/manager_linux_arm64.spdx.json.provenance.bundle sbom/manager_linux_arm64.spdx.json"
	if c := strings.Join(rows[6].Command, " "); c != want {
		t.Errorf("keyless file command %q, want %q", c, want)
	}
	if err := os.WriteFile(filepath.Join(dir, DigestsFile), []byte("image\tonly-two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDigests(dir); err == nil {
		t.Error("a row of two fields read without an error")
	}
}
