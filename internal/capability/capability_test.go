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

package capability_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/capability"
)

func TestRandomIsURLSafeAndNeverRepeats(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		tok := capability.Random(32)
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || len(b) != 32 {
			t.Fatalf("%q decodes to %d bytes (%v)", tok, len(b), err)
		}
		if seen[tok] {
			t.Fatalf("token repeated after %d draws", len(seen))
		}
		seen[tok] = true
	}
}

func TestDerivedPathBindsTokenAndParts(t *testing.T) {
	// The Notion webhook paths already in people's Automations must not
	// change: this is the formula they were derived with.
	sum := sha256.Sum256([]byte("tok\x00ns\x00name"))
	if got, want := capability.DerivedPath("/p/", "tok", "ns", "name"), "/p/"+hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	a := capability.DerivedPath("/p/", "tok", "ns", "name")
	for _, other := range []string{
		capability.DerivedPath("/p/", "tok2", "ns", "name"),
		capability.DerivedPath("/p/", "tok", "ns2", "name"),
		capability.DerivedPath("/p/", "tok", "ns", "name2"),
		capability.DerivedPath("/p/", "tok", "nsn", "ame"),
	} {
		if other == a {
			t.Fatalf("two inputs derived the same path %s", a)
		}
	}
	if strings.Contains(a, "tok") {
		t.Fatal("the path shows the token")
	}
}

func TestEqual(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"same", "same", true},
		{"same", "samf", false},
		{"same", "sam", false},
		{"", "", true},
		{"", "x", false},
	} {
		if got := capability.Equal(c.a, c.b); got != c.want {
			t.Errorf("Equal(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

func TestBase62IsUniformOverItsAlphabet(t *testing.T) {
	seen := map[rune]int{}
	for range 2000 {
		tok := capability.Base62(10)
		if len(tok) != 10 {
			t.Fatalf("len(%q) = %d, want 10", tok, len(tok))
		}
		for _, r := range tok {
			if (r < '0' || r > '9') && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') {
				t.Fatalf("%q holds %q, not base62", tok, r)
			}
			seen[r]++
		}
	}
	// 20,000 draws over 62 characters: each expected ~323 times. A modulo
	// bias (the first 8 characters ~25% likelier) or a missing character
	// would fall outside these bounds.
	if len(seen) != 62 {
		t.Fatalf("%d distinct characters, want 62", len(seen))
	}
	for r, n := range seen {
		if n < 230 || n > 420 {
			t.Errorf("%q drawn %d times, want about 323", r, n)
		}
	}
}
