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
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Artifact kinds in digests.txt.
const (
	KindImage = "image"
	KindChart = "chart"
	KindFile  = "file"
)

// The names of the files the signing step writes beside every file it
// signs: the signature bundle (cosign sign-blob --bundle) and the SLSA
// provenance attestation's (cosign attest-blob --bundle).
const (
	SignatureSuffix  = ".bundle"
	ProvenanceSuffix = ".provenance.bundle"
)

// Files of the release directory this package reads.
const (
	DigestsFile   = "digests.txt"
	PublicKeyFile = "cosign.pub"
	StatementFile = "provenance.intoto.json"
	ChecksumsFile = "sha256sums.txt"
	LayoutsDir    = "oci"
)

// KeylessIssuer is the OIDC issuer of a GitHub Actions job's token, which
// the hosted release's signing certificates name.
const KeylessIssuer = "https://token.actions.githubusercontent.com"

// ProvenanceFlag is cosign's --type for SLSA v1 provenance.
const ProvenanceFlag = "slsaprovenance1"

// Row is one line of digests.txt: an artifact (an image or the chart by
// REPOSITORY:TAG, or a file by its path in the release), its digest, and
// one cosign command that verifies it, run in the release directory.
type Row struct {
	Kind, Name, Digest string
	Command            []string
}

// Repository is an image's or the chart's name without its tag.
func (r Row) Repository() string {
	i := strings.LastIndex(r.Name, ":")
	if i < 0 || strings.Contains(r.Name[i:], "/") {
		return r.Name
	}
	return r.Name[:i]
}

// Tag is an image's or the chart's tag ("" when the name has none).
func (r Row) Tag() string {
	tag, _ := strings.CutPrefix(r.Name, r.Repository())
	return strings.TrimPrefix(tag, ":")
}

// Layout is the release's cosign save layout of an image or the chart:
// oci/<the repository's last element>.
func (r Row) Layout() string { return path.Join(LayoutsDir, path.Base(r.Repository())) }

// Identity is how a verifier names the release's signer: the public key's
// file (a key-signed release, made with no transparency log) or, for a
// keyless one, the certificate's identity and OIDC issuer.
type Identity struct {
	Key, CertIdentity, CertIssuer string
}

// Flags are cosign verify's flags for id.
func (id Identity) Flags() []string {
	if id.Key != "" {
		return []string{"--key", id.Key, "--insecure-ignore-tlog=true"}
	}
	return []string{"--certificate-identity", id.CertIdentity, "--certificate-oidc-issuer", id.CertIssuer}
}

// Rows are the commands that verify one artifact of kind, named name
// (REPOSITORY:TAG or a path), with digest ("sha256:…").
func (id Identity) Rows(kind, name, digest string) []Row {
	flags := id.Flags()
	cmd := func(args ...string) []string {
		c := append([]string{"cosign", args[0]}, flags...)
		return append(c, args[1:]...)
	}
	var cmds [][]string
	switch kind {
	case KindImage, KindChart:
		ref := Row{Name: name}.Repository() + "@" + digest
		cmds = append(cmds, cmd("verify", ref), cmd("verify-attestation", "--type", ProvenanceFlag, ref))
		if kind == KindImage {
			cmds = append(cmds, cmd("verify-attestation", "--type", "spdxjson", ref))
		}
	default:
		cmds = append(cmds, cmd("verify-blob", "--bundle", name+SignatureSuffix, name),
			cmd("verify-blob-attestation", "--type", ProvenanceFlag, "--bundle", name+ProvenanceSuffix, name))
	}
	rows := make([]Row, len(cmds))
	for i, c := range cmds {
		rows[i] = Row{Kind: kind, Name: name, Digest: digest, Command: c}
	}
	return rows
}

// WriteDigests writes rows as digests.txt: the header, then one row a line,
// tab-separated.
func WriteDigests(w io.Writer, header string, rows []Row) error {
	bw := bufio.NewWriter(w)
	for _, l := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		fmt.Fprintf(bw, "# %s\n", l)
	}
	fmt.Fprintln(bw, "# kind\tname\tdigest\tcommand")
	for _, r := range rows {
		fmt.Fprintf(bw, "%s\t%s\t%s\t%s\n", r.Kind, r.Name, r.Digest, strings.Join(r.Command, " "))
	}
	return bw.Flush()
}

// ReadDigests reads the release's digests.txt.
func ReadDigests(releaseDir string) ([]Row, error) {
	b, err := os.ReadFile(filepath.Join(releaseDir, DigestsFile)) //nolint:gosec // the caller names the release to read
	if err != nil {
		return nil, err
	}
	var rows []Row
	for n, l := range strings.Split(string(b), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.SplitN(l, "\t", 4)
		if len(f) != 4 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 4", DigestsFile, n+1, len(f))
		}
		rows = append(rows, Row{Kind: f[0], Name: f[1], Digest: f[2], Command: strings.Fields(f[3])})
	}
	return rows, nil
}
