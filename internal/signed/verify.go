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
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Verify checks, with cosign (its path) and the public key in the file
// pubKey, that the image or chart at ref (by tag or digest, in a registry
// on loopback or anywhere cosign reaches) is signed and carries a SLSA
// provenance attestation about it, and returns the digest they sign.
func Verify(ctx context.Context, cosign, pubKey, ref string) (string, error) {
	out, err := Run(ctx, cosign, verifyArgs("verify", pubKey, ref)...)
	if err != nil {
		return "", err
	}
	var payloads []struct {
		Critical struct {
			Image struct {
				Digest string `json:"docker-manifest-digest"`
			} `json:"image"`
		} `json:"critical"`
	}
	if err := json.Unmarshal(out, &payloads); err != nil {
		return "", fmt.Errorf("cosign verify %s: %w", ref, err)
	}
	digest := ""
	for _, p := range payloads {
		if digest != "" && p.Critical.Image.Digest != digest {
			return "", fmt.Errorf("%s: signatures of %s and %s", ref, digest, p.Critical.Image.Digest)
		}
		digest = p.Critical.Image.Digest
	}
	if digest == "" || (strings.Contains(ref, "@") && !strings.HasSuffix(ref, "@"+digest)) {
		return "", fmt.Errorf("%s: the signatures sign %q", ref, digest)
	}
	statements, err := VerifyAttestation(ctx, cosign, pubKey, ref, ProvenanceFlag)
	if err != nil {
		return "", err
	}
	for _, s := range statements {
		if s.PredicateType != ProvenanceType || !s.About(digest) {
			return "", fmt.Errorf("%s: a %s attestation about %v, not %s", ref, s.PredicateType, s.Subject, digest)
		}
	}
	return digest, nil
}

// VerifyAttestation checks with cosign that the attestations of type typ
// (cosign's --type: slsaprovenance1, spdxjson) on ref are signed by
// pubKey's key, and returns their statements.
func VerifyAttestation(ctx context.Context, cosign, pubKey, ref, typ string) ([]Statement, error) {
	out, err := Run(ctx, cosign, verifyArgs("verify-attestation", pubKey, ref, "--type", typ)...)
	if err != nil {
		return nil, err
	}
	var statements []Statement
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		s, err := DecodeEnvelope(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("cosign verify-attestation %s: %w", ref, err)
		}
		statements = append(statements, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(statements) == 0 {
		return nil, fmt.Errorf("cosign verify-attestation --type %s %s printed no attestation", typ, ref)
	}
	return statements, nil
}

func verifyArgs(cmd, pubKey, ref string, extra ...string) []string {
	args := []string{cmd, "--key", pubKey, "--insecure-ignore-tlog=true", "--allow-http-registry"}
	return append(append(args, extra...), ref)
}

// DecodeEnvelope is the in-toto statement in a DSSE envelope (as cosign
// verify-attestation prints and attest-blob bundles hold). It checks no
// signature: cosign did.
func DecodeEnvelope(b []byte) (Statement, error) {
	var env struct {
		PayloadType string `json:"payloadType"`
		Payload     string `json:"payload"`
	}
	var s Statement
	if err := json.Unmarshal(b, &env); err != nil {
		return s, err
	}
	if env.PayloadType != "application/vnd.in-toto+json" {
		return s, fmt.Errorf("payload type %q, not in-toto", env.PayloadType)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(payload, &s)
}

// About reports whether digest ("sha256:…") is one of the statement's
// subjects'.
func (s Statement) About(digest string) bool {
	alg, hex, _ := strings.Cut(digest, ":")
	for _, sub := range s.Subject {
		if sub.Digest[alg] == hex {
			return true
		}
	}
	return false
}
