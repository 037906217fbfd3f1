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
	"encoding/json"
	"testing"
)

// FuzzTokenErrorCode: a token endpoint's error body is outside input. The
// reader never panics, and an error it names is one the body holds, in
// one of the two shapes.
func FuzzTokenErrorCode(f *testing.F) {
	for _, s := range []string{
		`{"error":"invalid_grant","error_description":"Invalid \"code\" in request."}`,
		`{"object":"error","status":400,"code":"invalid_grant","message":"Invalid code: this code has been revoked."}`,
		`{"message":"401: Unauthorized","code":0}`,
		`{"code":"invalid_grant"}`, `{"error":{"code":"invalid_grant"}}`, `[]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		code := tokenErrorCode(body)
		if code == "" {
			return
		}
		var e struct {
			Error  any    `json:"error"`
			Object string `json:"object"`
			Code   any    `json:"code"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatalf("%q named from a body that is not JSON", code)
		}
		if e.Error != code && (e.Object != "error" || e.Code != code) {
			t.Fatalf("%q is not the body's error", code)
		}
	})
}

func TestTokenErrorCodeReadsBothShapes(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":"invalid_grant","error_description":"x"}`:                       "invalid_grant",
		`{"object":"error","status":400,"code":"invalid_grant","message":"x"}`:    "invalid_grant",
		`{"object":"error","status":401,"code":"unauthorized","message":"x"}`:     "unauthorized",
		`{"message":"401: Unauthorized","code":0}`:                                "",
		`{"code":"invalid_grant","message":"not Notion's object: no object key"}`: "",
		`not json`: "",
	} {
		if got := tokenErrorCode([]byte(body)); got != want {
			t.Errorf("%s: got %q, want %q", body, got, want)
		}
	}
}
