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
	"fmt"
	"path/filepath"
	"strings"

	"github.com/switchboard-dev/switchboard/internal/signed"
)

// publish serves the current release (make release's directory) from a
// registry on loopback, as a team's registry would hold it, and verifies
// it as a platform team does before installing (docs/release.md): the
// chart's and both images' cosign signatures and SLSA provenance, with
// the release's public key. The chart is then installed and upgraded to
// from oci://… by that digest; the images containerd imported must be
// the very indexes verified (their digests compared), since pods run them.
func (e *e2e) publish(ctx context.Context) error {
	// The registry lives for the run; the tear-down stops it.
	reg, err := signed.Serve(context.WithoutCancel(ctx), filepath.Join(e.bin, "crane"))
	if err != nil {
		return err
	}
	e.registry = reg
	cosign, pub := filepath.Join(e.bin, "cosign"), filepath.Join(e.release, "cosign.pub")
	published, err := reg.Load(ctx, cosign, e.release)
	if err != nil {
		return err
	}
	digest, err := signed.Verify(ctx, cosign, pub, published.Chart.DigestRef())
	if err != nil {
		return fmt.Errorf("the chart's signature or provenance: %w", err)
	}
	fmt.Printf("    cosign verify, verify-attestation --type slsaprovenance1: chart %s %s\n", published.Chart.Name, digest)
	imported, err := e.importedDigests()
	if err != nil {
		return err
	}
	for _, name := range []string{"manager", "webhook"} {
		img, ok := published.Images[name]
		if !ok {
			return fmt.Errorf("the release has no %s image", name)
		}
		digest, err := signed.Verify(ctx, cosign, pub, img.DigestRef())
		if err != nil {
			return fmt.Errorf("the %s image's signature or provenance: %w", name, err)
		}
		if imported[img.Name] != digest {
			return fmt.Errorf("containerd holds %s as %q, but the release signs %s", img.Name, imported[img.Name], digest)
		}
		fmt.Printf("    cosign verify, verify-attestation --type slsaprovenance1: image %s %s, the index containerd imported\n", img.Name, digest)
	}
	e.chart = chartRef{ref: "oci://" + published.Chart.DigestRef(), args: []string{"--plain-http"}}
	return nil
}

// importedDigests maps each image containerd holds to its digest (the
// index's, for an image layout of an index).
func (e *e2e) importedDigests() (map[string]string, error) {
	out, err := e.ctr("-n", "k8s.io", "images", "ls")
	if err != nil {
		return nil, err
	}
	digests := map[string]string{}
	for _, line := range strings.Split(out, "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 3 {
			digests[f[0]] = f[2]
		}
	}
	return digests, nil
}
