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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/internal/signed"
)

// BuildType names the build this provenance describes: the section of
// docs/release.md that says what its parameters mean.
const BuildType = "https://github.com/switchboard-dev/switchboard/blob/main/docs/release.md#signatures-and-provenance"

// list is a flag given any number of times.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// options are write's flags.
type options struct {
	dir, predicate                   string
	images, blobs                    list
	chart                            string
	builderID, source, ref, revision string
	dirty                            bool
	invocationID, startedOn          string
	version, chartVersion, platforms string
	key, certIdentity, certIssuer    string
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("write", flag.ContinueOnError)
	fs.StringVar(&o.dir, "dir", "", "the release directory (provenance.intoto.json and digests.txt are written into it)")
	fs.StringVar(&o.predicate, "predicate", "", "file to write the SLSA provenance predicate to")
	fs.Var(&o.images, "image", "an image index as REPOSITORY:TAG@sha256:… (repeatable)")
	fs.StringVar(&o.chart, "chart", "", "the chart as REPOSITORY:TAG@sha256:…")
	fs.Var(&o.blobs, "blob", "a file of the release, its path relative to --dir (repeatable)")
	fs.StringVar(&o.builderID, "builder-id", "", "the builder's URI")
	fs.StringVar(&o.source, "source", "", "the source repository's URI")
	fs.StringVar(&o.ref, "ref", "", "the source ref built (refs/tags/v1.2.3)")
	fs.StringVar(&o.revision, "revision", "", "the source commit (git rev-parse HEAD)")
	fs.BoolVar(&o.dirty, "dirty", false, "the working tree had uncommitted changes")
	fs.StringVar(&o.invocationID, "invocation-id", "", "the build run's URI, when it has one")
	fs.StringVar(&o.startedOn, "started-on", "", "when the build started (RFC 3339)")
	fs.StringVar(&o.version, "version", "", "the images' and chart's appVersion")
	fs.StringVar(&o.chartVersion, "chart-version", "", "the chart's version")
	fs.StringVar(&o.platforms, "platforms", "", "the images' platforms, comma-separated")
	fs.StringVar(&o.key, "key", "", "the public key's file name verify commands give (a key-signed release)")
	fs.StringVar(&o.certIdentity, "certificate-identity", "", "the signing certificate's identity (a keyless release)")
	fs.StringVar(&o.certIssuer, "certificate-oidc-issuer", signed.KeylessIssuer, "the signing certificate's OIDC issuer (a keyless release)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.dir == "" || o.predicate == "" || o.chart == "" || len(o.images) == 0 || len(o.blobs) == 0:
		return o, errors.New("write needs --dir, --predicate, --image, --chart and --blob")
	case o.builderID == "" || o.source == "" || !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(o.revision):
		return o, errors.New("write needs --builder-id, --source and --revision (a commit)")
	case (o.key == "") == (o.certIdentity == ""):
		return o, errors.New("write needs one of --key and --certificate-identity")
	}
	return o, nil
}

// write is the write command: the predicate, the statement and digests.txt.
func write(args []string) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	subjects, rows, err := artifacts(o)
	if err != nil {
		return err
	}
	predicate, err := provenance(o)
	if err != nil {
		return err
	}
	if err := writeJSON(o.predicate, predicate); err != nil {
		return err
	}
	statement := signed.Statement{Type: signed.StatementType, Subject: subjects, PredicateType: signed.ProvenanceType}
	if statement.Predicate, err = json.Marshal(predicate); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(o.dir, signed.StatementFile), statement); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(o.dir, signed.DigestsFile))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := signed.WriteDigests(f, header(o), rows); err != nil {
		return err
	}
	return f.Close()
}

// artifacts are the statement's subjects and digests.txt's rows: the
// images, the chart, every file, and the checksums' signature.
func artifacts(o options) ([]signed.Subject, []signed.Row, error) {
	id := signed.Identity{Key: o.key, CertIdentity: o.certIdentity, CertIssuer: o.certIssuer}
	var subjects []signed.Subject
	var rows []signed.Row
	add := func(kind, name, repo, digest string) {
		alg, hex, _ := strings.Cut(digest, ":")
		subjects = append(subjects, signed.Subject{Name: repo, Digest: map[string]string{alg: hex}})
		rows = append(rows, id.Rows(kind, name, digest)...)
	}
	for i, ref := range append(append([]string{}, o.images...), o.chart) {
		name, digest, ok := strings.Cut(ref, "@")
		if !ok || !strings.HasPrefix(digest, "sha256:") {
			return nil, nil, fmt.Errorf("%q is not REPOSITORY:TAG@sha256:…", ref)
		}
		kind := signed.KindImage
		if i == len(o.images) {
			kind = signed.KindChart
		}
		add(kind, name, signed.Row{Name: name}.Repository(), digest)
	}
	blobs := append([]string{}, o.blobs...)
	sort.Strings(blobs)
	for _, b := range blobs {
		digest, err := fileDigest(filepath.Join(o.dir, filepath.FromSlash(b)))
		if err != nil {
			return nil, nil, err
		}
		add(signed.KindFile, b, b, digest)
	}
	// The checksums are written last, over digests.txt too, so digests.txt
	// can give their signature's check but not their digest.
	rows = append(rows, id.Rows(signed.KindFile, signed.ChecksumsFile, "-")[0])
	return subjects, rows, nil
}

// pluginTarball is the kubectl plugin's tarball name (hack/release).
var pluginTarball = regexp.MustCompile(`^kubectl-switchboard_(v[^_]+)_([a-z0-9]+)_([a-z0-9]+)\.tar\.gz$`)

// provenance is the SLSA v1 predicate.
func provenance(o options) (signed.Provenance, error) {
	var p signed.Provenance
	ext := &p.BuildDefinition.ExternalParameters
	ext.Source = signed.Source{Repository: o.source, Ref: o.ref}
	ext.Version, ext.ChartVersion = o.version, o.chartVersion
	ext.Platforms = strings.Split(o.platforms, ",")
	for _, b := range o.blobs {
		if m := pluginTarball.FindStringSubmatch(filepath.Base(b)); m != nil {
			if ext.PluginVersion != "" && ext.PluginVersion != m[1] {
				return p, fmt.Errorf("plugin tarballs of versions %s and %s: remove the stale ones", ext.PluginVersion, m[1])
			}
			ext.PluginVersion = m[1]
			ext.PluginPlatforms = append(ext.PluginPlatforms, m[2]+"/"+m[3])
		}
	}
	sort.Strings(ext.PluginPlatforms)
	p.BuildDefinition.BuildType = BuildType
	p.BuildDefinition.ResolvedDependencies = []signed.ResourceDescriptor{{
		URI:         "git+" + o.source + refSuffix(o.ref),
		Digest:      map[string]string{"gitCommit": o.revision},
		Annotations: map[string]any{"dirty": o.dirty},
	}}
	p.RunDetails.Builder = signed.Builder{ID: o.builderID, Version: map[string]string{"go": runtime.Version()}}
	p.RunDetails.Metadata.InvocationID = o.invocationID
	now := time.Now().UTC().Truncate(time.Second)
	p.RunDetails.Metadata.FinishedOn = &now
	if o.startedOn != "" {
		t, err := time.Parse(time.RFC3339, o.startedOn)
		if err != nil {
			return p, fmt.Errorf("--started-on: %w", err)
		}
		t = t.UTC()
		p.RunDetails.Metadata.StartedOn = &t
	}
	return p, nil
}

func refSuffix(ref string) string {
	if ref == "" {
		return ""
	}
	return "@" + ref
}

func header(o options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Switchboard %s (chart %s): every artifact of the release, its digest and the commands that verify it.\n", o.version, o.chartVersion)
	fmt.Fprintf(&b, "Built by %s from %s at %s", o.builderID, o.source, o.revision)
	if o.dirty {
		b.WriteString(" with uncommitted changes")
	}
	b.WriteString(".\nRun the commands in this directory (cosign v2); see docs/release.md, \"Verifying a release\".\n")
	return b.String()
}

func fileDigest(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func writeJSON(file string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}
