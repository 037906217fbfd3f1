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

// Package signed loads a Switchboard release (docs/release.md) into a
// registry on loopback and verifies its images and chart with cosign, the
// way a platform team verifies them before installing:
//
//	reg, err := signed.Serve(ctx, crane)            // crane registry serve on 127.0.0.1
//	defer reg.Close()
//	pub, err := reg.Load(ctx, cosign, releaseDir)   // cosign load of every oci/<name> layout
//	digest, err := signed.Verify(ctx, cosign, filepath.Join(releaseDir, "cosign.pub"), pub.Chart.Ref())
//
// It also holds the formats the release's signing step writes and its tests
// read: the SLSA provenance (Statement, Provenance) and digests.txt (Row).
package signed

import (
	"encoding/json"
	"fmt"
	"time"
)

// The in-toto statement and SLSA provenance types (https://in-toto.io/Statement/v1,
// https://slsa.dev/spec/v1.0/provenance).
const (
	StatementType  = "https://in-toto.io/Statement/v1"
	ProvenanceType = "https://slsa.dev/provenance/v1"
	// SBOMType is the predicate type cosign gives `--type spdxjson`.
	SBOMType = "https://spdx.dev/Document"
)

// Statement is an in-toto statement: what (Subject) the predicate is about.
type Statement struct {
	Type          string          `json:"_type"`
	Subject       []Subject       `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

// Subject is one artifact a statement is about: a file's path in the
// release or an image's repository, and its digest.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Provenance decodes the statement's predicate as SLSA provenance.
func (s Statement) Provenance() (Provenance, error) {
	var p Provenance
	if s.PredicateType != ProvenanceType {
		return p, fmt.Errorf("predicate type %q, not %q", s.PredicateType, ProvenanceType)
	}
	if err := json.Unmarshal(s.Predicate, &p); err != nil {
		return p, fmt.Errorf("provenance: %w", err)
	}
	return p, nil
}

// Provenance is a SLSA v1 provenance predicate: how the release was built
// and from what.
type Provenance struct {
	BuildDefinition BuildDefinition `json:"buildDefinition"`
	RunDetails      RunDetails      `json:"runDetails"`
}

// BuildDefinition is the build's inputs.
type BuildDefinition struct {
	// BuildType names the template this provenance follows (docs/release.md).
	BuildType          string             `json:"buildType"`
	ExternalParameters ExternalParameters `json:"externalParameters"`
	// ResolvedDependencies holds the source: its repository, its commit
	// (digest gitCommit) and whether the working tree was dirty
	// (annotation "dirty": the build then included uncommitted changes).
	ResolvedDependencies []ResourceDescriptor `json:"resolvedDependencies"`
}

// ExternalParameters are the parameters a person chose: the source, the
// versions and the platforms.
type ExternalParameters struct {
	Source Source `json:"source"`
	// Version is the images' and the chart's appVersion; ChartVersion the
	// chart's own; PluginVersion the kubectl plugin's.
	Version       string `json:"version"`
	ChartVersion  string `json:"chartVersion"`
	PluginVersion string `json:"pluginVersion"`
	// Platforms are the images' (os/arch); PluginPlatforms the plugin's.
	Platforms       []string `json:"platforms"`
	PluginPlatforms []string `json:"pluginPlatforms"`
}

// Source is the repository built and the ref checked out (a tag or branch).
type Source struct {
	Repository string `json:"repository"`
	Ref        string `json:"ref,omitempty"`
}

// ResourceDescriptor is SLSA's description of an input.
type ResourceDescriptor struct {
	URI         string            `json:"uri"`
	Digest      map[string]string `json:"digest"`
	Annotations map[string]any    `json:"annotations,omitempty"`
}

// RunDetails is who built it and when.
type RunDetails struct {
	Builder  Builder       `json:"builder"`
	Metadata BuildMetadata `json:"metadata"`
}

// Builder is the build platform: its id (a URI the verifier trusts or not)
// and the versions of its parts.
type Builder struct {
	ID      string            `json:"id"`
	Version map[string]string `json:"version,omitempty"`
}

// BuildMetadata is the run's.
type BuildMetadata struct {
	InvocationID string     `json:"invocationId,omitempty"`
	StartedOn    *time.Time `json:"startedOn,omitempty"`
	FinishedOn   *time.Time `json:"finishedOn,omitempty"`
}

// Revision is the source commit the provenance names, and whether the
// tree had uncommitted changes.
func (p Provenance) Revision() (commit string, dirty bool) {
	for _, d := range p.BuildDefinition.ResolvedDependencies {
		if c := d.Digest["gitCommit"]; c != "" {
			dirty, _ = d.Annotations["dirty"].(bool)
			return c, dirty
		}
	}
	return "", false
}
