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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
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

// A PaperSync is its integration's shard's, so the manager that
// reconciles the integration reconciles its syncs; an unlabelled
// integration's syncs carry no shard label.
func TestASyncTakesItsIntegrationsShard(t *testing.T) {
	ni := &v1alpha1.NotionIntegration{ObjectMeta: metav1.ObjectMeta{Name: "research", Namespace: "ns",
		Labels: map[string]string{v1alpha1.ShardLabel: "shard1", "team": "papers"}}}
	s := NewSync(ni, "1c2d3e4f5a6b4c7d8e9f0a1b2c3d4e5f", "https://arxiv.org/abs/2301.12345", "2301.12345")
	if got := s.Labels; got[v1alpha1.ShardLabel] != "shard1" || got[IntegrationLabel] != "research" || got["team"] != "" {
		t.Fatalf("labels %v: want the shard and the integration, nothing else", got)
	}
	ni.Labels = nil
	if s := NewSync(ni, "1c2d3e4f5a6b4c7d8e9f0a1b2c3d4e5f", "https://arxiv.org/abs/2301.12345", "2301.12345"); len(s.Labels) != 1 {
		t.Fatalf("labels %v: want only the integration's", s.Labels)
	}
}
