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

package oauth

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// GrantDigestLabel is the label under which a cache that keeps no Secret
// data (DropSecretData) keeps the Secret's GrantDigest. It exists only in
// that cache's memory: nothing writes a cached Secret back (every Secret
// is read from the API server, setup.ClientOptions), so the API server
// never sees it.
const GrantDigestLabel = "switchboard.dev/cached-grant-digest"

// refreshKeys are the keys a refresh rewrites: the access token, its type
// and expiry, and the refresh token a provider that rotates it (Notion)
// sends with them.
var refreshKeys = map[string]bool{KeyAccessToken: true, KeyTokenType: true, KeyExpiry: true, KeyRefreshToken: true}

// GrantDigest is a digest of a token Secret's data that changes when its
// grant changes and not when the grant is refreshed: a grant the OAuth
// callback stored (granted_at, which refreshes keep) and that holds a
// refresh token is digested without the keys a refresh rewrites; any
// other data (a grant a person stored by hand, no grant, a Secret that
// holds no grant) is digested whole, so every change of it counts.
func GrantDigest(data map[string][]byte) string {
	refreshable := len(data[KeyGrantedAt]) > 0 && len(data[KeyRefreshToken]) > 0
	h := sha256.New()
	if refreshable {
		h.Write([]byte("refreshable grant\x00"))
	}
	var n [8]byte
	for _, k := range slices.Sorted(maps.Keys(data)) {
		if refreshable && refreshKeys[k] {
			continue
		}
		for _, b := range [][]byte{[]byte(k), data[k]} {
			binary.BigEndian.PutUint64(n[:], uint64(len(b)))
			h.Write(n[:])
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// grantDigestOf is the GrantDigest of a Secret: the one its cache kept
// when it dropped the data, else that of its data.
func grantDigestOf(s *corev1.Secret) string {
	if d, ok := s.Labels[GrantDigestLabel]; ok {
		return d
	}
	return GrantDigest(s.Data)
}

// DropSecretData is the cache transform of a binary that reads every
// Secret from the API server and watches Secrets only to be woken (the
// manager): each cached Secret keeps its metadata and, in place of its
// data, its GrantDigest as the label GrantDigestLabel, which GrantChanged
// compares. A token, client secret or connect link then never sits in
// the cache, and at 10,000 objects of each kind the cache holds about
// half as much for Secrets. It is chained before setup.Compact, which
// drops the managed fields of every cached object.
//
// A connect Secret (ConnectTargetLabel) keeps no digest: no object names
// it as its grant, so GrantChanged never judges it, and its owner is
// woken by any change of it (Owns). Without a digest its labels are
// those of every connect Secret of its target, and setup.Compact keeps
// one map for all of them: at 30,000 connect Secrets, one small map and
// one digest each were a few MiB of the manager's heap.
func DropSecretData() func(any) (any, error) {
	// The informer hands the transform the object it decoded and will
	// keep: it is changed in place, as the managed-fields transform does.
	return func(in any) (any, error) {
		if s, ok := in.(*corev1.Secret); ok && s.Data != nil {
			if _, connect := s.Labels[ConnectTargetLabel]; !connect {
				if s.Labels == nil {
					s.Labels = map[string]string{}
				}
				s.Labels[GrantDigestLabel] = GrantDigest(s.Data)
			}
			s.Data, s.StringData = nil, nil
		}
		return in, nil
	}
}
