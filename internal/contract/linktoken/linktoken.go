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

// Package linktoken mints and seals ReceiveLink tokens (seed 003): the
// short token a person shares (10 base62 characters), and the long token
// `v1.{iv}.{ciphertext+tag}` that seals the link's identity with
// AES-256-GCM under a key id, so that a short-token object edited by hand,
// or sealed under a key that is gone, resolves nothing.
package linktoken

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/internal/capability"
)

// ShortLen is the length of a short token (seed 003: 10 characters).
const ShortLen = 10

// Keys of the encryption key Secret.
const (
	// KeyCurrent names the key id that seals new links.
	KeyCurrent = "current"
	// KeySize is an AES-256 key's length.
	KeySize = 32
)

// version is the only long-token format; a future one gets a new prefix.
const version = "v1"

// additionalData binds a sealed token to this use: a ciphertext made by
// another program under the same key does not open here.
var additionalData = []byte("switchboard.dev/receivelink/" + version)

var (
	// ErrMalformed: the long token is not `v1.{iv}.{ciphertext+tag}`.
	ErrMalformed = errors.New("long token is malformed")
	// ErrUnsealable: no key opens the long token (tampered, or sealed under
	// a key that was removed).
	ErrUnsealable = errors.New("long token does not open with any key")
	// ErrKeys: the key Secret is unusable.
	ErrKeys = errors.New("encryption keys are invalid")
)

var shortPattern = regexp.MustCompile(`^[0-9A-Za-z]{10}$`)

// NewShort returns a fresh short token.
func NewShort() string { return capability.Base62(ShortLen) }

// ValidShort reports whether s can be a short token: anything else is
// refused before a lookup.
func ValidShort(s string) bool { return shortPattern.MatchString(s) }

// ObjectName is the name of the object that holds a short token's mapping
// (seed 003's `receive:token:{short}`): a hash, so that the token is not
// readable from a list of names, and a name Kubernetes accepts whatever
// the token's case. Creating it is the Kubernetes form of SET NX.
func ObjectName(short string) string { return capability.ChildName("rtok", short, 40) }

// Claims are what a long token seals: the link it belongs to and its
// expiry, so that a mapping pointed at another link or a later time fails.
type Claims struct {
	Namespace string    `json:"ns"`
	Name      string    `json:"n"`
	UID       types.UID `json:"u"`
	Bucket    string    `json:"b"`
	Key       string    `json:"k"`
	ExpiresAt time.Time `json:"e"`
}

// Keyring is the encryption key Secret: the current key id and every key
// that may still open old links.
type Keyring struct {
	Current string
	Keys    map[string][]byte
}

// KeyringFrom reads a key Secret: `current` names a key id, and each other
// key is a key id whose value is a 32-byte key, base64-encoded (what
// `head -c32 /dev/urandom | base64` prints) or raw.
func KeyringFrom(sec *corev1.Secret) (Keyring, error) {
	kr := Keyring{Current: strings.TrimSpace(string(sec.Data[KeyCurrent])), Keys: map[string][]byte{}}
	for id, v := range sec.Data {
		if id == KeyCurrent {
			continue
		}
		key, err := decodeKey(v)
		if err != nil {
			return Keyring{}, fmt.Errorf("%w: key %q of Secret %s/%s: %w", ErrKeys, id, sec.Namespace, sec.Name, err)
		}
		kr.Keys[id] = key
	}
	if kr.Current == "" {
		return Keyring{}, fmt.Errorf("%w: Secret %s/%s has no %q key naming the active key id", ErrKeys, sec.Namespace, sec.Name, KeyCurrent)
	}
	if _, ok := kr.Keys[kr.Current]; !ok {
		return Keyring{}, fmt.Errorf("%w: Secret %s/%s names current key %q, which it does not hold", ErrKeys, sec.Namespace, sec.Name, kr.Current)
	}
	return kr, nil
}

func decodeKey(v []byte) ([]byte, error) {
	if len(v) == KeySize {
		return v, nil
	}
	s := strings.TrimSpace(string(v))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	return nil, fmt.Errorf("not a %d-byte key, raw or base64", KeySize)
}

// NewKeyData returns the data of a fresh key Secret with one key, id.
func NewKeyData(id string) map[string][]byte {
	key := make([]byte, KeySize)
	_, _ = rand.Read(key) // never fails: see capability.Random
	return map[string][]byte{KeyCurrent: []byte(id), id: []byte(base64.StdEncoding.EncodeToString(key))}
}

func aead(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeys, err)
	}
	return cipher.NewGCM(block) // 12-byte nonce, 16-byte tag
}

// Seal seals c under the current key: `v1.{iv}.{ciphertext+tag}`, each
// part base64url without padding, the IV 12 random bytes. It returns the
// token and the key id that sealed it.
func Seal(kr Keyring, c Claims) (token, keyID string, err error) {
	g, err := aead(kr.Keys[kr.Current])
	if err != nil {
		return "", "", err
	}
	plain, err := json.Marshal(c)
	if err != nil {
		return "", "", fmt.Errorf("encode claims: %w", err)
	}
	iv := make([]byte, g.NonceSize())
	_, _ = rand.Read(iv)
	sealed := g.Seal(nil, iv, plain, additionalData)
	enc := base64.RawURLEncoding
	return version + "." + enc.EncodeToString(iv) + "." + enc.EncodeToString(sealed), kr.Current, nil
}

// Parse splits a long token into its IV and sealed bytes.
func Parse(token string) (iv, sealed []byte, err error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] != version {
		return nil, nil, ErrMalformed
	}
	// Strict: one token has one spelling (no stray bits in the last
	// character), so an edited spelling is not the same link.
	enc := base64.RawURLEncoding.Strict()
	iv, err1 := enc.DecodeString(parts[1])
	sealed, err2 := enc.DecodeString(parts[2])
	// 12-byte IV; at least the 16-byte tag after it.
	if err1 != nil || err2 != nil || len(iv) != 12 || len(sealed) < 16 {
		return nil, nil, ErrMalformed
	}
	return iv, sealed, nil
}

// Open unseals a long token. keyID, when the ring holds it, is tried
// first; the other keys are tried after it, so a token whose recorded key
// id was lost still opens while its key is kept.
func Open(kr Keyring, keyID, token string) (Claims, error) {
	iv, sealed, err := Parse(token)
	if err != nil {
		return Claims{}, err
	}
	ids := make([]string, 0, len(kr.Keys))
	for id := range kr.Keys {
		if id != keyID {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if _, ok := kr.Keys[keyID]; ok {
		ids = append([]string{keyID}, ids...)
	}
	for _, id := range ids {
		g, err := aead(kr.Keys[id])
		if err != nil {
			continue
		}
		plain, err := g.Open(nil, iv, sealed, additionalData)
		if err != nil {
			continue
		}
		var c Claims
		if err := json.Unmarshal(plain, &c); err != nil {
			return Claims{}, ErrMalformed
		}
		return c, nil
	}
	return Claims{}, ErrUnsealable
}
