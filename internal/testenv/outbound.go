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

package testenv

import (
	"testing"

	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// OutboundTo is the one outbound policy, with default options, sending the
// upstream name to baseURL (a test server or an emulator's mount point):
// how a client package's tests reach their server through the real
// policy.
func OutboundTo(t testing.TB, name upstream.Name, baseURL string) *outbound.Client {
	t.Helper()
	ups := upstream.NewSet()
	if err := ups.Set(string(name) + "=" + baseURL); err != nil {
		t.Fatal(err)
	}
	out, err := outbound.New(ups, outbound.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
