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

package linktoken_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
)

func ring(t *testing.T, current string, ids ...string) linktoken.Keyring {
	t.Helper()
	data := map[string][]byte{}
	for _, id := range ids {
		for k, v := range linktoken.NewKeyData(id) {
			if k != linktoken.KeyCurrent {
				data[k] = v
			}
		}
	}
	data[linktoken.KeyCurrent] = []byte(current)
	kr, err := linktoken.KeyringFrom(&corev1.Secret{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

var claims = linktoken.Claims{Namespace: "team-a", Name: "prize", UID: "0b8f-uid", Bucket: "user-prize",
	Key: "user_prize/o/alice/prize.zip", ExpiresAt: time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)}

func TestSealOpensOnlyUnderItsKeysAndLooksLikeTheSeed(t *testing.T) {
	kr := ring(t, "k1", "k1")
	tok, id, err := linktoken.Seal(kr, claims)
	if err != nil || id != "k1" {
		t.Fatalf("Seal = %q, %q, %v", tok, id, err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] != "v1" {
		t.Fatalf("token %q is not v1.{iv}.{ciphertext+tag}", tok)
	}
	if iv, _ := base64.RawURLEncoding.DecodeString(parts[1]); len(iv) != 12 {
		t.Errorf("IV is %d bytes, want 12", len(iv))
	}
	got, err := linktoken.Open(kr, id, tok)
	if err != nil || got != claims {
		t.Fatalf("Open = %+v, %v; want %+v", got, err, claims)
	}
	again, _, _ := linktoken.Seal(kr, claims)
	if again == tok {
		t.Error("two seals of the same claims are equal: the IV is not random")
	}
	if _, err := linktoken.Open(ring(t, "k1", "k1"), "k1", tok); !errors.Is(err, linktoken.ErrUnsealable) {
		t.Errorf("Open under another key = %v, want ErrUnsealable", err)
	}
}

func TestRotationKeepsOldLinksOpen(t *testing.T) {
	old := ring(t, "k1", "k1")
	tok, _, _ := linktoken.Seal(old, claims)
	// The person adds k2 and makes it current, keeping k1.
	rotated := linktoken.Keyring{Current: "k2", Keys: map[string][]byte{"k1": old.Keys["k1"], "k2": ring(t, "k2", "k2").Keys["k2"]}}
	if _, err := linktoken.Open(rotated, "k1", tok); err != nil {
		t.Fatalf("an old link under a kept key: %v", err)
	}
	if _, err := linktoken.Open(rotated, "", tok); err != nil {
		t.Fatalf("an old link without its key id: %v", err)
	}
	newTok, id, _ := linktoken.Seal(rotated, claims)
	if id != "k2" {
		t.Errorf("new links sealed under %q, want k2", id)
	}
	delete(rotated.Keys, "k1")
	if _, err := linktoken.Open(rotated, "k1", tok); !errors.Is(err, linktoken.ErrUnsealable) {
		t.Errorf("after k1 is removed: %v, want ErrUnsealable", err)
	}
	if _, err := linktoken.Open(rotated, "k2", newTok); err != nil {
		t.Errorf("new link: %v", err)
	}
}

func TestTamperedTokensDoNotOpen(t *testing.T) {
	kr := ring(t, "k1", "k1")
	tok, _, _ := linktoken.Seal(kr, claims)
	parts := strings.Split(tok, ".")
	ct, _ := base64.RawURLEncoding.DecodeString(parts[2])
	ct[0] ^= 1
	flipped := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(ct)
	for name, bad := range map[string]string{
		"a flipped ciphertext bit": flipped,
		"another version":          "v2" + tok[2:],
		"no IV":                    "v1.." + parts[2],
		"not base64":               "v1.!!!." + parts[2],
		"two parts":                "v1." + parts[2],
		"empty":                    "",
	} {
		if _, err := linktoken.Open(kr, "k1", bad); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
}

func TestKeyringRefusesWhatCannotSeal(t *testing.T) {
	for name, data := range map[string]map[string][]byte{
		"no current":         {"k1": make([]byte, 32)},
		"current not held":   {"current": []byte("k2"), "k1": make([]byte, 32)},
		"a 16-byte key":      {"current": []byte("k1"), "k1": []byte(base64.StdEncoding.EncodeToString(make([]byte, 16)))},
		"a key that is text": {"current": []byte("k1"), "k1": []byte("hunter2")},
	} {
		_, err := linktoken.KeyringFrom(&corev1.Secret{Data: data})
		if !errors.Is(err, linktoken.ErrKeys) {
			t.Errorf("%s: %v, want ErrKeys", name, err)
		}
	}
	if _, err := linktoken.KeyringFrom(&corev1.Secret{Data: map[string][]byte{"current": []byte("k1\n"), "k1": make([]byte, 32)}}); err != nil {
		t.Errorf("a raw key and a current with a newline: %v", err)
	}
}

func TestShortTokens(t *testing.T) {
	s := linktoken.NewShort()
	if !linktoken.ValidShort(s) {
		t.Fatalf("%q is not valid", s)
	}
	for _, bad := range []string{"", "abc", "s1AbCdEfGh1", "s1AbCdEf-h", "../../etc/"} {
		if linktoken.ValidShort(bad) {
			t.Errorf("%q valid", bad)
		}
	}
	if linktoken.ObjectName("s1AbCdEfGh") == linktoken.ObjectName("S1AbCdEfGh") {
		t.Error("object names ignore case")
	}
	if n := linktoken.ObjectName("s1AbCdEfGh"); strings.Contains(n, "s1AbCdEfGh") || len(n) != 45 {
		t.Errorf("object name %q shows the token or is not rtok-+40 hex", n)
	}
}

// FuzzOpen: no input panics the parser, and only a real seal opens.
func FuzzOpen(f *testing.F) {
	kr := linktoken.Keyring{Current: "k1", Keys: map[string][]byte{"k1": make([]byte, 32)}}
	tok, _, _ := linktoken.Seal(kr, claims)
	for _, s := range []string{tok, "v1..", "v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA", "", "v1.a.b.c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := linktoken.Open(kr, "k1", s)
		if err != nil {
			return
		}
		// Whatever opens is a canonical spelling of a real seal: two
		// strings never name one sealed link, and the claims are whole.
		iv, sealed, _ := linktoken.Parse(s)
		enc := base64.RawURLEncoding
		if s != "v1."+enc.EncodeToString(iv)+"."+enc.EncodeToString(sealed) || c.UID == "" {
			t.Fatalf("%q opened to %+v", s, c)
		}
	})
}
