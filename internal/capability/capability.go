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

// Package capability holds what every inbound route that is a capability
// needs: random tokens, paths derived from a secret, and a comparison that
// does not leak by its timing how much of a guess was right. It imports no
// operator code, so the sandbox and the webhook can both use it.
package capability

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Random returns nBytes from crypto/rand, base64url-encoded without
// padding (so it fits a URL, a Secret key and a label-free name alike).
// 32 bytes give 256 bits: enough for any token a stranger must not guess.
func Random(nBytes int) string {
	b := make([]byte, nBytes)
	// crypto/rand.Read never fails on the platforms Go supports (since Go
	// 1.24 it crashes the program rather than return an error), so there is
	// no error to hand back.
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// base62 is the alphabet of short tokens: letters and digits only, so a
// short link survives any chat client, case-sensitive URL or copy-paste.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Base62 returns n characters drawn uniformly from [0-9A-Za-z] with
// crypto/rand (seed 003's 10-character short tokens: 59.5 bits). Bytes of
// 248 and above are thrown away rather than folded with a modulo, which
// would make the first eight characters likelier than the rest.
func Base62(n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/4+8)
	for len(out) < n {
		_, _ = rand.Read(buf) // never fails: see Random
		for _, b := range buf {
			if b < 248 && len(out) < n {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out)
}

// DerivedPath is prefix followed by the hex SHA-256 of the token and the
// parts, separated by NUL bytes (which no Kubernetes name or namespace
// holds, so two different part lists never hash the same bytes). Knowing
// the path means knowing the token, and the path reveals nothing about it,
// as Flux's Receiver derives its webhook path. Binding the parts (the
// resource's namespace and name) gives each resource its own path even when
// two share a token.
func DerivedPath(prefix, token string, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(append([]string{token}, parts...), "\x00")))
	return prefix + hex.EncodeToString(sum[:])
}

// Hash is the hex SHA-256 of a token: what a controller publishes in
// status so that the webhook server checks the token without reading the
// Secret that holds it. Tokens are random (Random), so the hash cannot be
// turned back into one.
func Hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Equal reports whether a and b are the same, in time that depends on
// neither their contents nor their lengths: both are hashed first, so a
// caller probing with guesses learns nothing from how long a refusal took.
func Equal(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// ChildName names a child object after its parent and a key that may hold
// characters a name may not (a page and paper, a session id): the parent's
// name cut to 40 characters, then hexLen hex digits of the key's SHA-256.
// The same key always gives the same name, so creating the child twice is
// one object.
func ChildName(parent, key string, hexLen int) string {
	sum := sha256.Sum256([]byte(key))
	if len(parent) > 40 {
		parent = parent[:40]
	}
	return strings.TrimSuffix(parent, "-") + "-" + hex.EncodeToString(sum[:])[:hexLen]
}
