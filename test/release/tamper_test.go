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

package release

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/signed"
)

// The messages cosign v2 fails with, so a test tells a refused signature
// from a command that failed for another reason (a wrong flag, no file).
const (
	noMatchingSignatures = "no matching signatures"
	noSignatures         = "no signatures found"
	badSignature         = "invalid signature"
	noMatchingSubject    = "no matching subject digest"
	noMatchingAttest     = "no matching attestations"
	noAcceptedSignature  = "accepted signatures do not match threshold"
)

// wrongKey: another key pair verifies no image, chart or file.
func (r *release) wrongKey(ctx context.Context, t *testing.T) {
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, r.cosign, "generate-key-pair", "--output-key-prefix", filepath.Join(dir, "wrong"))
	cmd.Env = append(os.Environ(), "COSIGN_PASSWORD=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cosign generate-key-pair: %v\n%s", err, out)
	}
	wrong := filepath.Join(dir, "wrong.pub")
	for _, a := range r.artifacts() {
		_, err := signed.Verify(ctx, r.cosign, wrong, a.DigestRef())
		mustFail(t, a.Name+" with a wrong key", err, noMatchingSignatures)
		_, err = signed.VerifyAttestation(ctx, r.cosign, wrong, a.DigestRef(), signed.ProvenanceFlag)
		mustFail(t, a.Name+"'s provenance with a wrong key", err, noMatchingAttest)
	}
	for _, f := range releaseFiles(t, r.dir) {
		file := filepath.Join(r.dir, f)
		mustFail(t, f+" with a wrong key", r.verifyBlob(ctx, wrong, file, file), badSignature)
		mustFail(t, f+"'s provenance with a wrong key", r.verifyBlobAttestation(ctx, wrong, file, file), noAcceptedSignature)
	}
}

// retaggedImage: another image pushed under an image's release tag (here
// the release's own other image, itself signed, but in its own repository)
// fails verification by that tag.
func (r *release) retaggedImage(ctx context.Context, t *testing.T) {
	for name, a := range r.published.Images {
		other := r.otherThan(a)
		if _, err := signed.Run(ctx, r.crane, "copy", other.DigestRef(), a.Ref()); err != nil {
			t.Fatal(err)
		}
		if d, err := r.reg.Digest(ctx, a.Ref()); err != nil || d != other.Digest {
			t.Fatalf("%s after the re-tag is %s (%v), want %s", a.Ref(), d, err, other.Digest)
		}
		_, err := signed.Verify(ctx, r.cosign, r.pubKey, a.Ref())
		mustFail(t, name+" re-tagged to "+other.Name, err, noSignatures, noMatchingSignatures)
	}
}

// otherThan is an artifact of the release with another digest than a's.
func (r *release) otherThan(a signed.Artifact) signed.Artifact {
	for _, o := range r.artifacts() {
		if o.Digest != a.Digest {
			return o
		}
	}
	panic("the release has one artifact")
}

// changedChart: the chart package with one byte changed (its gzip
// header's time, so it is still a chart helm pushes) fails both as the
// chart under the release's tag and as a file.
func (r *release) changedChart(ctx context.Context, t *testing.T) {
	c := r.published.Chart
	orig := only(t, filepath.Join(r.dir, "charts", "*.tgz"))
	changed := flipByte(t, orig, 4)
	if _, err := signed.Run(ctx, r.helm, "push", changed, "oci://"+filepath.Dir(c.Repository), "--plain-http"); err != nil {
		t.Fatal(err)
	}
	if d, err := r.reg.Digest(ctx, c.Ref()); err != nil || d == c.Digest {
		t.Fatalf("%s after pushing the changed chart is %s (%v): want a new digest", c.Ref(), d, err)
	}
	_, err := signed.Verify(ctx, r.cosign, r.pubKey, c.Ref())
	mustFail(t, "the changed chart under "+c.Tag, err, noSignatures, noMatchingSignatures)
	mustFail(t, "the changed chart package", r.verifyBlob(ctx, r.pubKey, orig, changed), badSignature)
	mustFail(t, "the changed chart package's provenance", r.verifyBlobAttestation(ctx, r.pubKey, orig, changed), noMatchingSubject)
}

// changedTarball: a plugin tarball with one byte changed fails its
// signature, its provenance and its checksum.
func (r *release) changedTarball(ctx context.Context, t *testing.T) {
	tarballs, _ := filepath.Glob(filepath.Join(r.dir, "*.tar.gz"))
	if len(tarballs) == 0 {
		t.Fatal("no *.tar.gz in the release")
	}
	for _, orig := range tarballs {
		info, err := os.Stat(orig)
		if err != nil {
			t.Fatal(err)
		}
		changed := flipByte(t, orig, info.Size()/2)
		name := filepath.Base(orig)
		mustFail(t, "changed "+name, r.verifyBlob(ctx, r.pubKey, orig, changed), badSignature)
		mustFail(t, "changed "+name+"'s provenance", r.verifyBlobAttestation(ctx, r.pubKey, orig, changed), noMatchingSubject)
		if sums := checksums(t, r.dir); sums[name] == fileDigest(t, changed) {
			t.Errorf("changed %s has the checksum sha256sums.txt gives the original", name)
		}
	}
}

// verifyBlob runs cosign verify-blob on file with the signature bundle of
// the release's file orig.
func (r *release) verifyBlob(ctx context.Context, key, orig, file string) error {
	_, err := signed.Run(ctx, r.cosign, "verify-blob", "--key", key, "--insecure-ignore-tlog=true",
		"--bundle", orig+signed.SignatureSuffix, file)
	return err
}

// verifyBlobAttestation runs cosign verify-blob-attestation on file with
// the provenance bundle of the release's file orig.
func (r *release) verifyBlobAttestation(ctx context.Context, key, orig, file string) error {
	_, err := signed.Run(ctx, r.cosign, "verify-blob-attestation", "--key", key, "--insecure-ignore-tlog=true",
		"--type", signed.ProvenanceFlag, "--bundle", orig+signed.ProvenanceSuffix, file)
	return err
}

// mustFail fails t unless err is one of cosign's refusals in want.
func mustFail(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: verified, want a failure", what)
		return
	}
	for _, w := range want {
		if strings.Contains(err.Error(), w) {
			return
		}
	}
	t.Errorf("%s: failed, but not with %q:\n%v", what, want, err)
}

// flipByte copies file into a temporary directory, under its own name,
// with the byte at offset changed, and returns the copy's path.
func flipByte(t *testing.T, file string, offset int64) string {
	t.Helper()
	b := readFile(t, file)
	if offset >= int64(len(b)) {
		t.Fatalf("%s has %d bytes, none at %d", file, len(b), offset)
	}
	b = bytes.Clone(b)
	b[offset] ^= 0x01
	out := filepath.Join(t.TempDir(), filepath.Base(file))
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// only is the one file matching pattern.
func only(t *testing.T, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(pattern)
	if len(m) != 1 {
		t.Fatalf("%s matches %v, want one file", pattern, m)
	}
	return m[0]
}

// runIn runs prog in dir, its error carrying its output.
func runIn(ctx context.Context, dir, prog string, args ...string) error {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}
