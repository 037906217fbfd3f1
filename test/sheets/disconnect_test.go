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
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// refreshes reports whether Google still exchanges a refresh token for an
// access token.
func refreshes(t *testing.T, refresh string) bool {
	t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {"sheet-client"}, "client_secret": {"sheet-secret"}}
	resp, err := http.PostForm(boxURL+"/googleoauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// tokenSecret reads the connection's token Secret; false when it is gone.
func (f *fixture) tokenSecret(t *testing.T) (*corev1.Secret, bool) {
	t.Helper()
	var s corev1.Secret
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "google-token"}, &s)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return &s, err == nil
}

func (f *fixture) suspend(t *testing.T) {
	t.Helper()
	c := f.conn(t)
	patch := client.MergeFrom(c.DeepCopy())
	c.Spec.Suspend = true
	if err := env.Client.Patch(context.Background(), c, patch); err != nil {
		t.Fatal(err)
	}
}

// events lists the namespace's Events (events.k8s.io, what the
// controllers' recorders write, and core ones).
func (f *fixture) events(t *testing.T) ([]eventsv1.Event, []corev1.Event) {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	var core corev1.EventList
	if err := env.Client.List(context.Background(), &core, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items, core.Items
}

func TestSuspendDisconnects(t *testing.T) {
	f := newFixture(t, nil)
	f.ready(t)
	if !refreshes(t, f.refresh) {
		t.Fatal("the grant does not refresh before the disconnect")
	}
	revokes := box.Calls(sandbox.GoogleOAuthRevoke)
	f.suspend(t)
	c := f.waitConn(t, "the connection Revoked", func(c *v1alpha1.SheetConnection) bool {
		return c.Status.Phase == v1alpha1.ConnectionRevoked
	})
	if status.IsTrue(c, v1alpha1.ReadyCondition) || condition(c, v1alpha1.AuthenticatedCondition).Reason != v1alpha1.RevokedReason {
		t.Fatalf("status %+v", c.Status)
	}
	if _, ok := f.tokenSecret(t); ok {
		t.Fatal("the token Secret is still there")
	}
	if got := box.Calls(sandbox.GoogleOAuthRevoke) - revokes; got != 1 {
		t.Fatalf("%d calls of Google's revocation endpoint, want 1", got)
	}
	if refreshes(t, f.refresh) {
		t.Fatal("the revoked refresh token still refreshes")
	}
	f.waitIngest(t, http.StatusConflict)
	conflict(t, f, session("d-1", "after the disconnect", 0, 5))
	testenv.Eventually(t, "a Revoked Event", func() bool {
		evs, _ := f.events(t)
		for _, e := range evs {
			if e.Regarding.Name == connName && e.Reason == v1alpha1.RevokedReason {
				return true
			}
		}
		return false
	})
}

func TestDeletingAConnectionRevokesItsGrant(t *testing.T) {
	f := newFixture(t, nil)
	f.ready(t)
	revokes := box.Calls(sandbox.GoogleOAuthRevoke)
	if err := env.Client.Delete(context.Background(), f.conn(t)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the connection gone", func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), f.key, &v1alpha1.SheetConnection{}))
	})
	if got := box.Calls(sandbox.GoogleOAuthRevoke) - revokes; got != 1 {
		t.Fatalf("%d calls of Google's revocation endpoint, want 1", got)
	}
	if refreshes(t, f.refresh) {
		t.Fatal("the refresh token of a deleted connection still refreshes")
	}
	if _, ok := f.tokenSecret(t); ok {
		t.Fatal("the token Secret is still there")
	}
}

// TestNoTokenInStatusEventsOrLogs runs a connection through an append, a
// refusal by Google (Error) and a disconnect, then looks for its access,
// refresh and ingest tokens in every SheetConnection and SheetSync status
// of the namespace, its Events, and everything the managers and the
// webhook server logged.
func TestNoTokenInStatusEventsOrLogs(t *testing.T) {
	f := newFixture(t, nil)
	f.ready(t)
	if code, a := f.post(t, session("t-ok", "appended", 0, 5), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post: %d %+v", code, a)
	}
	f.succeeded(t, "t-ok")
	sec, ok := f.tokenSecret(t)
	access := string(sec.Data[oauth.KeyAccessToken])
	if !ok || access == "" {
		t.Fatalf("no access token stored: %v", sec.Data)
	}
	sheetsEm.SetAccess(f.spreadsheet, "reader")
	if code, a := f.post(t, session("t-refused", "refused", 60, 5), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post: %d %+v", code, a)
	}
	f.waitConn(t, "the connection in Error", func(c *v1alpha1.SheetConnection) bool { return c.Status.Phase == v1alpha1.ConnectionError })
	f.waitIngest(t, http.StatusConflict) // the webhook's cache has the Error too
	// A post refused with a 401 and one with a 409 are logged too.
	postTo(t, f.conn(t).Status.IngestPath, session("t-x", "x", 0, 5), "Bearer "+testenv.SheetIngestToken+"-wrong", true)
	conflict(t, f, session("t-conflict", "conflict", 120, 5))
	f.suspend(t)
	f.waitConn(t, "the connection Revoked", func(c *v1alpha1.SheetConnection) bool { return c.Status.Phase == v1alpha1.ConnectionRevoked })

	var texts []string
	var conns v1alpha1.SheetConnectionList
	var syncs v1alpha1.SheetSyncList
	for _, l := range []client.ObjectList{&conns, &syncs} {
		if err := env.Client.List(context.Background(), l, client.InNamespace(f.ns)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range conns.Items {
		texts = append(texts, "SheetConnection "+c.Name+" "+marshal(t, c.Status)+marshal(t, c.Annotations))
	}
	for _, s := range syncs.Items {
		texts = append(texts, "SheetSync "+s.Name+" "+marshal(t, s.Status))
	}
	if len(syncs.Items) != 2 {
		t.Fatalf("%d SheetSyncs, want 2", len(syncs.Items))
	}
	evs, core := f.events(t)
	if len(evs)+len(core) == 0 {
		t.Fatal("no Events to look at")
	}
	for _, e := range evs {
		texts = append(texts, "Event "+marshal(t, e))
	}
	for _, e := range core {
		texts = append(texts, "Event "+marshal(t, e))
	}
	texts = append(texts, "log "+logs.String())
	for name, secret := range map[string]string{"access token": access, "refresh token": f.refresh, "ingest token": testenv.SheetIngestToken} {
		for _, text := range texts {
			if i := strings.Index(text, secret); i >= 0 {
				t.Errorf("the %s is in %s", name, text[:min(len(text), 200)])
			}
		}
	}
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
