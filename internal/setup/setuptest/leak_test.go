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

package setuptest

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"testing"
)

func TestFindSeesEveryFormAValueTakes(t *testing.T) {
	const token = "tok-0123456789abcdefghij"
	tokens := map[string]string{"access": token}
	jsonLine := func(v string) string {
		b, _ := json.Marshal(map[string]string{"msg": "Response Body", "body": v})
		return string(b)
	}
	for _, tc := range []struct {
		name string
		text string
		want bool
	}{
		{"as written", "x " + token + " y", true},
		{"base64, alone", base64.StdEncoding.EncodeToString([]byte(token)), true},
		{"base64, after one byte", base64.StdEncoding.EncodeToString([]byte("a" + token + "zz")), true},
		{"base64, after two bytes", base64.StdEncoding.EncodeToString([]byte("ab" + token)), true},
		{"base64url, after two bytes", base64.URLEncoding.EncodeToString([]byte("ab" + token)), true},
		{"a hex dump across lines, inside a JSON log line", jsonLine(hex.Dump([]byte("k8s\x00\x0a\x0cprotobuf prefix " + token + "\x1a\x00"))), true},
		{"another value", "tok-0123456789abcdefghiX", false},
		{"a redacted body", jsonLine("[redacted] 512 bytes"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := len(Find(tc.text, tokens)) > 0; got != tc.want {
				t.Fatalf("found = %v, want %v in %q", got, tc.want, tc.text)
			}
		})
	}
}
