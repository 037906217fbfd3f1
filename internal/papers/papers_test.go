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

package papers

import (
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	p := WebhookPath("tok", "ns", "research")
	if !strings.HasPrefix(p, WebhookPrefix) || len(p) != len(WebhookPrefix)+64 || strings.Contains(p, "tok") {
		t.Fatalf("path %q", p)
	}
	if WebhookPath("tok2", "ns", "research") == p || WebhookPath("tok", "ns2", "research") == p {
		t.Fatal("path ignores token or namespace")
	}
	a := SyncName("research", "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "2301.12345")
	b := SyncName("research", "1C2D3E4F5A6B4C7D8E9F0A1B2C3D4E5F", "2301.12345")
	if a != b {
		t.Fatalf("the same page in two spellings gave %s and %s", a, b)
	}
	if a == SyncName("research", "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "hep-th/9901001") {
		t.Fatal("another paper gave the same name")
	}
	if n := SyncName(strings.Repeat("x", 253), "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "1"); len(n) > 63 {
		t.Fatalf("name of %d characters", len(n))
	}
}
