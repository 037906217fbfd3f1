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

package sheets_test

import (
	"context"
	"net/http"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// laggingCache is an informer cache that has not yet seen any
// SheetConnection's grant: every one it lists is Revoked, as it was
// before the OAuth callback, whatever the API server holds.
type laggingCache struct{ client.Client }

func (c laggingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	if conns, ok := list.(*v1alpha1.SheetConnectionList); ok {
		for i := range conns.Items {
			conns.Items[i].Status.Phase = v1alpha1.ConnectionRevoked
			conns.Items[i].Status.Conditions = nil
		}
	}
	return nil
}

// A time tracker that posts the moment its connection is Active is not
// told to wait (409) because the webhook's cache lags: the refusal is
// checked on the live object first (the e2e walk posted as soon as it
// read Active, and one of two webhook pods had not seen it yet).
func TestIngestTrustsTheAPIServerOverALaggingCache(t *testing.T) {
	f := newFixture(t, nil)
	f.ready(t)
	code, a := postAt(t, laggingURL, f.conn(t).Status.IngestPath, session("s-lagging", "posted at once", 0, 30),
		"Bearer "+testenv.SheetIngestToken, true)
	if code != http.StatusAccepted {
		t.Fatalf("post through a lagging cache: %d %+v, want 202", code, a)
	}
	f.sync(t, "s-lagging")
}

// A connection the API server also shows Revoked is still refused: the
// live read confirms the refusal, it does not bypass it.
func TestALaggingCacheStillRefusesARevokedConnection(t *testing.T) {
	f := connect(t, newNamespace(t), newSpreadsheet("Sessions"), "Sessions", "", nil)
	f.waitConn(t, "the connection Revoked with its ingest path", func(c *v1alpha1.SheetConnection) bool {
		return c.Status.Phase == v1alpha1.ConnectionRevoked && c.Status.IngestPath != ""
	})
	f.waitIngest(t, http.StatusConflict)
	code, a := postAt(t, laggingURL, f.conn(t).Status.IngestPath, session("s-refused", "too early", 0, 30),
		"Bearer "+testenv.SheetIngestToken, true)
	if code != http.StatusConflict || a.Error.Details["phase"] != string(v1alpha1.ConnectionRevoked) {
		t.Fatalf("post: %d %+v, want 409 Revoked", code, a)
	}
	if n := len(f.syncs(t)); n != 0 {
		t.Fatalf("%d SheetSyncs created for a refused post", n)
	}
}
