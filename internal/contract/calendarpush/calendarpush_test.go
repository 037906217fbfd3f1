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

package calendarpush_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/calendarpush"
)

func TestChannelIDRoundTrips(t *testing.T) {
	uid := types.UID("0c6f6f6e-0000-4000-8000-000000000000")
	id := calendarpush.ChannelID(uid, 1763800000000)
	if len(id) > 64 {
		t.Fatalf("%q is longer than Google allows", id)
	}
	got, seq, ok := calendarpush.ParseChannelID(id)
	if !ok || got != uid || seq != 1763800000000 {
		t.Fatalf("ParseChannelID(%q) = %q, %d, %v", id, got, seq, ok)
	}
	if s := calendarpush.ChannelSequence(&v1alpha1.ChannelStatus{ID: id}); s != seq {
		t.Fatalf("ChannelSequence = %d, want %d", s, seq)
	}
	for _, bad := range []string{"", "sb-", "sb-uid", "sb-uid-0", "sb-uid-x", "xx-uid-5", "sb--5"} {
		if _, _, ok := calendarpush.ParseChannelID(bad); ok {
			t.Errorf("ParseChannelID(%q) was accepted", bad)
		}
	}
	if calendarpush.ChannelSequence(nil) != 0 {
		t.Error("no channel has a sequence")
	}
}

func TestNotificationRoundTrips(t *testing.T) {
	n := calendarpush.Notification{ChannelID: "sb-u-5", MessageNumber: 42, State: "exists"}
	if got, ok := calendarpush.ParseNotification(n.String()); !ok || got != n {
		t.Fatalf("ParseNotification(%q) = %+v, %v", n.String(), got, ok)
	}
	for _, bad := range []string{"", "a/b", "/1/exists", "a/x/exists", "a/1/b/c"} {
		if _, ok := calendarpush.ParseNotification(bad); ok {
			t.Errorf("ParseNotification(%q) was accepted", bad)
		}
	}
}
