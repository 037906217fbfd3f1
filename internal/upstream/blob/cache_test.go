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

package blob

import (
	"fmt"
	"net/http"
	"testing"
)

func TestClientCacheIsBounded(t *testing.T) {
	c, err := New(Options{Endpoint: "http://127.0.0.1:1", HTTPClient: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.clientsFor(Credentials{AccessKeyID: "a0", SecretAccessKey: "s"}, DefaultRegion)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 2*maxClients; i++ {
		if _, err := c.clientsFor(Credentials{AccessKeyID: fmt.Sprintf("a%d", i), SecretAccessKey: "s"}, DefaultRegion); err != nil {
			t.Fatal(err)
		}
		// The first pair stays in use, so it is never the one evicted.
		if again, _ := c.clientsFor(Credentials{AccessKeyID: "a0", SecretAccessKey: "s"}, DefaultRegion); again != first {
			t.Fatalf("the pair in use was evicted after %d others", i)
		}
	}
	if len(c.clients) != maxClients || c.lru.Len() != maxClients {
		t.Fatalf("%d clients cached (%d in the list), want %d", len(c.clients), c.lru.Len(), maxClients)
	}
	rotated, _ := c.clientsFor(Credentials{AccessKeyID: "a0", SecretAccessKey: "rotated"}, DefaultRegion)
	if rotated == first {
		t.Fatal("a new secret for the same access key reused the old client")
	}
}
