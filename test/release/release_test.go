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

// Package release verifies a built release (make release, then make
// verify-release) the way a platform team would before installing it: it
// loads the release's signed OCI layouts into a registry on loopback and
// checks every signature and attestation with cosign, that the provenance's
// subjects are the artifacts' real digests, and that every command
// digests.txt gives passes; then that each tampered case fails: a wrong
// public key, a re-tagged image, a changed chart and a changed tarball.
//
//	go test ./test/release -count=1 -v -args -release-dir dist/release
//
// COSIGN, CRANE and HELM name the tools (default ../../bin/*). Without
// -release-dir (go test ./...) the test skips; with one that is missing,
// it fails.
package release

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/signed"
)

var releaseDir = flag.String("release-dir", "", "the release directory to verify (make verify-release gives dist/release)")

// release is the release under test, loaded into a loopback registry.
type release struct {
	dir, pubKey         string
	cosign, crane, helm string
	reg                 *signed.Registry
	published           signed.Published
	statement           signed.Statement
	provenance          signed.Provenance
}

func TestRelease(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	r := load(ctx, t)

	// What the release claims, checked first, on the registry as loaded.
	t.Run("images and chart are signed and attested", func(t *testing.T) { r.signedOCI(ctx, t) })
	t.Run("provenance subjects are the artifacts' digests", func(t *testing.T) { r.subjects(ctx, t) })
	t.Run("every command in digests.txt passes", func(t *testing.T) { r.digestsCommands(ctx, t) })
	t.Run("sha256sums.txt is signed and matches every file", func(t *testing.T) { r.checksums(ctx, t) })

	// Then each tampered case, each of which must fail.
	t.Run("a wrong public key fails", func(t *testing.T) { r.wrongKey(ctx, t) })
	t.Run("a re-tagged image fails", func(t *testing.T) { r.retaggedImage(ctx, t) })
	t.Run("a changed chart fails", func(t *testing.T) { r.changedChart(ctx, t) })
	t.Run("a changed tarball fails", func(t *testing.T) { r.changedTarball(ctx, t) })
}

// load finds the release and the tools, starts the registry and loads the
// release into it.
func load(ctx context.Context, t *testing.T) *release {
	t.Helper()
	if *releaseDir == "" {
		t.Skip("no -release-dir: this test verifies a built release (make release, then make verify-release)")
	}
	dir, err := filepath.Abs(*releaseDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, signed.DigestsFile)); err != nil {
		t.Fatalf("no release in %s (run make release first): %v", dir, err)
	}
	r := &release{dir: dir, pubKey: filepath.Join(dir, signed.PublicKeyFile),
		cosign: tool(t, "COSIGN", "cosign"), crane: tool(t, "CRANE", "crane"), helm: tool(t, "HELM", "helm")}
	if _, err := os.Stat(r.pubKey); err != nil {
		t.Fatalf("%v: a keyless release is verified with the commands of its digests.txt (docs/release.md)", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, signed.StatementFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r.statement); err != nil {
		t.Fatalf("%s: %v", signed.StatementFile, err)
	}
	if r.provenance, err = r.statement.Provenance(); err != nil {
		t.Fatalf("%s: %v", signed.StatementFile, err)
	}
	if r.reg, err = signed.Serve(ctx, r.crane); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.reg.Close() })
	start := time.Now()
	if r.published, err = r.reg.Load(ctx, r.cosign, dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d images and the chart into %s in %s", len(r.published.Images), r.reg.Addr, time.Since(start).Round(time.Millisecond))
	return r
}

// tool is the path of a tool: $ENV, or ../../bin/name.
func tool(t *testing.T, env, name string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		p = filepath.Join("..", "..", "bin", name)
	}
	p, err := filepath.Abs(p)
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		t.Fatalf("%s (set %s, or make %s): %v", name, env, name, err)
	}
	return p
}

// signedOCI: each image and the chart carry a signature and a provenance
// attestation about their digest, with the release's provenance; each
// image its platforms' SBOMs, byte for byte the release's sbom/ files.
func (r *release) signedOCI(ctx context.Context, t *testing.T) {
	for _, a := range r.artifacts() {
		digest, err := signed.Verify(ctx, r.cosign, r.pubKey, a.Ref())
		if err != nil {
			t.Errorf("%s: %v", a.Name, err)
			continue
		}
		if digest != a.Digest {
			t.Errorf("%s: signed digest %s, loaded %s", a.Name, digest, a.Digest)
		}
		r.sameProvenance(ctx, t, a)
	}
	for name, a := range r.published.Images {
		files, _ := filepath.Glob(filepath.Join(r.dir, "sbom", name+"_*.spdx.json"))
		if len(files) == 0 {
			t.Errorf("%s: no SBOM in sbom/", name)
			continue
		}
		statements, err := signed.VerifyAttestation(ctx, r.cosign, r.pubKey, a.DigestRef(), "spdxjson")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var got, want []any
		for _, s := range statements {
			if s.PredicateType != signed.SBOMType || !s.About(a.Digest) {
				t.Errorf("%s: a %s attestation about %v", name, s.PredicateType, s.Subject)
			}
			got = append(got, decode(t, s.Predicate))
		}
		for _, f := range files {
			want = append(want, decode(t, readFile(t, f)))
		}
		if !sameElements(got, want) {
			t.Errorf("%s: the %d SBOM attestations are not the %d files %v", name, len(got), len(want), files)
		}
	}
}

// sameProvenance: the attestation on a holds provenance.intoto.json's
// predicate.
func (r *release) sameProvenance(ctx context.Context, t *testing.T, a signed.Artifact) {
	t.Helper()
	statements, err := signed.VerifyAttestation(ctx, r.cosign, r.pubKey, a.DigestRef(), signed.ProvenanceFlag)
	if err != nil {
		t.Errorf("%s: %v", a.Name, err)
		return
	}
	for _, s := range statements {
		if !reflect.DeepEqual(decode(t, s.Predicate), decode(t, r.statement.Predicate)) {
			t.Errorf("%s: the provenance attested is not %s's:\n%s", a.Name, signed.StatementFile, s.Predicate)
		}
	}
}

func (r *release) artifacts() []signed.Artifact {
	as := []signed.Artifact{r.published.Chart}
	for _, a := range r.published.Images {
		as = append(as, a)
	}
	return as
}

// subjects: provenance.intoto.json's subjects are exactly the images (as
// loaded and as their layout tarballs hold them), the chart, and every
// tarball, SBOM, image layout, chart package and krew manifest, each with
// its real digest; and the predicate names the builder and the revision.
func (r *release) subjects(_ context.Context, t *testing.T) {
	want := map[string]string{repository(r.published.Chart): r.published.Chart.Digest}
	for name, a := range r.published.Images {
		want[repository(a)] = a.Digest
		if d := layoutDigest(t, filepath.Join(r.dir, "images", name+".tar")); d != a.Digest {
			t.Errorf("images/%s.tar holds %s, the registry %s", name, d, a.Digest)
		}
	}
	for _, f := range releaseFiles(t, r.dir) {
		want[f] = fileDigest(t, filepath.Join(r.dir, f))
	}
	got := map[string]string{}
	for _, s := range r.statement.Subject {
		got[s.Name] = "sha256:" + s.Digest["sha256"]
	}
	for name, d := range want {
		if got[name] != d {
			t.Errorf("subject %s: %q in the provenance, really %s", name, got[name], d)
		}
		delete(got, name)
	}
	for name, d := range got {
		t.Errorf("subject %s (%s) is no artifact of the release", name, d)
	}
	p := r.provenance
	commit, dirty := p.Revision()
	if p.RunDetails.Builder.ID == "" || len(commit) != 40 || p.BuildDefinition.ExternalParameters.Source.Repository == "" {
		t.Errorf("provenance: builder %q, source %q at %q: want all three", p.RunDetails.Builder.ID,
			p.BuildDefinition.ExternalParameters.Source.Repository, commit)
	}
	if ext := p.BuildDefinition.ExternalParameters; ext.Version == "" || len(ext.Platforms) == 0 || ext.Platforms[0] == "" {
		t.Errorf("provenance: version %q, platforms %q: want both", ext.Version, ext.Platforms)
	}
	t.Logf("built by %s from %s (dirty %v), %d subjects", p.RunDetails.Builder.ID, commit, dirty, len(r.statement.Subject))
}
