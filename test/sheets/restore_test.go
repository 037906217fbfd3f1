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
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetsync"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// restoreBound is how long a restored connection may take to be Active
// and Ready again, and its syncs to settle, with no person's help: a
// loaded 2-core machine, never a tight bound.
const restoreBound = 90 * time.Second

// mappings are the two kinds of sheet exactly once must hold for: with an
// id column (the fixture maps id to "Session ID"), and without one (the
// session is found by its title, start, end and duration).
var mappings = map[string]func(*v1alpha1.SheetConnection){
	"with an id column":    nil,
	"without an id column": func(c *v1alpha1.SheetConnection) { delete(c.Spec.ColumnMapping, "id") },
}

// titled counts the sheet's rows whose title cell is title: every session
// of these tests has a title of its own, and title is mapped in both.
func (f *fixture) titled(title string) int {
	n := 0
	for _, r := range f.rows() {
		if len(r) > colTitle && r[colTitle] == title {
			n++
		}
	}
	return n
}

// backup reads everything of the namespace a backup of it holds for
// SheetConnection: its Secrets (the client, the grant, the ingest token,
// the connect link), the connection and its SheetSyncs.
func (f *fixture) backup(t *testing.T) *testenv.Backup {
	t.Helper()
	b, err := testenv.TakeNamespaceBackup(context.Background(), env.Client, f.ns, []client.Object{f.conn(t)}, &v1alpha1.SheetSyncList{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A Velero restore (issue 35 §3): the namespace is backed up with two
// sessions written, one whose row Google wrote while its answer never
// came back (the manager stopped in the middle of the append) and one
// posted during the outage, then lost (no finalizer runs) and restored
// without status or owner references. The manager starts again either
// after the restore, or before it, as when Velero restores the operator's
// Deployment before the custom resources (pods come early in its restore
// order) and the manager has appended for another connection meanwhile.
// Either way it brings the connection back Active and the ingest route
// with it within a bound, no session has a second row, and the session
// posted during the outage is written once.
func TestAVeleroRestoreAppendsNoRowTwice(t *testing.T) {
	for name, change := range mappings {
		t.Run(name+", manager started after the restore", func(t *testing.T) { restoreAfterAnOutage(t, change, false) })
		t.Run(name+", manager started before the restore", func(t *testing.T) { restoreAfterAnOutage(t, change, true) })
	}
}

func restoreAfterAnOutage(t *testing.T, change func(*v1alpha1.SheetConnection), managerFirst bool) {
	ctx := context.Background()
	f := newFixture(t, change)
	f.ready(t)
	done := []string{"r-done-1", "r-done-2"}
	for i, id := range done {
		if code, a := f.post(t, session(id, "restore "+id, i*60, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
			t.Fatalf("post %s: %d %+v", id, code, a)
		}
		f.succeeded(t, id)
	}
	// In flight: Google writes the row and the manager stops before it
	// hears the answer, so no status records the row.
	held, release := sheetsEm.HoldAppends()
	defer release()
	if code, a := f.post(t, session("r-flight", "restore r-flight", 180, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post r-flight: %d %+v", code, a)
	}
	waitHeld(t, held)
	stopControllers()
	release()
	// Posted while the manager is down: the webhook records it.
	if code, a := f.post(t, session("r-outage", "restore r-outage", 240, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post r-outage: %d %+v", code, a)
	}
	if s := f.sync(t, "r-flight"); s.Status.RowNumber != 0 || f.titled("restore r-flight") != 1 {
		t.Fatalf("the test missed the window: r-flight status %+v, %d rows", s.Status, f.titled("restore r-flight"))
	}
	b := f.backup(t)
	if err := b.Lose(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if managerFirst {
		startAndAppendElsewhere(t)
	}
	if err := b.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if !managerFirst {
		if c := f.conn(t); c.Status.IngestPath != "" {
			t.Fatalf("restored with status: %+v", c.Status)
		}
		if err := startControllers(env); err != nil {
			t.Fatal(err)
		}
	}
	restoredReady(t, f)
	conn := f.conn(t)
	var connect corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: conn.Status.ConnectSecretName}, &connect); err != nil ||
		!metav1.IsControlledBy(&connect, conn) {
		t.Fatalf("the restored connect Secret %q is not the restored connection's (%v): %+v", conn.Status.ConnectSecretName, err, connect.OwnerReferences)
	}
	all := append(done, "r-flight", "r-outage", "r-after")
	if code, a := f.post(t, session("r-after", "restore r-after", 300, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("ingest after the restore: %d %+v", code, a)
	}
	for _, id := range all {
		testenv.EventuallyWithin(t, restoreBound, id+" Succeeded", func() bool {
			return f.sync(t, id).Status.Phase == v1alpha1.SyncSucceeded
		})
	}
	onceEach(t, f, all)
	for _, id := range append(done, "r-flight") {
		if c := condition(f.sync(t, id), v1alpha1.ReadyCondition); c.Reason != sheetsync.RecoveredReason {
			t.Errorf("%s: Ready %+v, want %s (its row was written before the restore)", id, c, sheetsync.RecoveredReason)
		}
	}
	// Restored without owner references, each sync is the restored
	// connection's again: deleting the connection deletes it.
	for _, id := range all {
		if s := f.sync(t, id); !ownedBy(s, conn) {
			t.Errorf("%s: owners %+v, want the restored connection", id, s.OwnerReferences)
		}
	}
}

// startAndAppendElsewhere starts the manager and has it append a session
// of another connection, so that the restored SheetSyncs are not the
// first this manager sees.
func startAndAppendElsewhere(t *testing.T) {
	t.Helper()
	if err := startControllers(env); err != nil {
		t.Fatal(err)
	}
	g := newFixture(t, nil)
	g.ready(t)
	if code, a := g.post(t, session("elsewhere", "elsewhere", 0, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post elsewhere: %d %+v", code, a)
	}
	g.succeeded(t, "elsewhere")
}

// restoredReady waits, within restoreBound, for the restored connection
// to be Active and Ready, and for the ingest route to take sessions.
func restoredReady(t *testing.T, f *fixture) {
	t.Helper()
	testenv.EventuallyReport(t, restoreBound, "the restored connection Active and Ready", func() (bool, string) {
		c := f.conn(t)
		ok := c.Status.Phase == v1alpha1.ConnectionActive && status.IsTrue(c, v1alpha1.ReadyCondition) && c.Status.IngestPath != ""
		return ok, fmt.Sprintf("%s %+v", c.Status.Phase, c.Status.Conditions)
	})
	testenv.EventuallyWithin(t, restoreBound, "ingest answering 400 to an empty session", func() bool {
		code, _ := f.post(t, map[string]any{}, testenv.SheetIngestToken)
		return code == http.StatusBadRequest
	})
}

// onceEach checks that each session has exactly one row and that the
// sheet holds nothing else but its header.
func onceEach(t *testing.T, f *fixture, ids []string) {
	t.Helper()
	for _, id := range ids {
		if n := f.titled("restore " + id); n != 1 {
			t.Errorf("session %s has %d rows, want 1", id, n)
		}
	}
	if rows := f.rows(); len(rows) != len(ids)+1 {
		t.Fatalf("%d rows, want the header and %d sessions: %q", len(rows), len(ids), rows)
	}
}

// A GitOps delete and re-apply of a completed SheetSync while the manager
// runs (a tracker's session kept in Git): the new SheetSync, without the
// old one's status, finds the session's row and is Recovered onto it; no
// append is made for it, and the sessions that follow are appended as
// before.
func TestAReappliedSheetSyncIsNotAppendedAgain(t *testing.T) {
	for name, change := range mappings {
		t.Run(name, func(t *testing.T) { reapplyACompletedSync(t, change) })
	}
}

func reapplyACompletedSync(t *testing.T, change func(*v1alpha1.SheetConnection)) {
	ctx := context.Background()
	f := newFixture(t, change)
	f.ready(t)
	if code, a := f.post(t, session("g-kept", "restore g-kept", 0, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post: %d %+v", code, a)
	}
	old := f.succeeded(t, "g-kept")
	// What Git holds: the object as a person would write it.
	manifest := &v1alpha1.SheetSync{
		ObjectMeta: metav1.ObjectMeta{Name: old.Name, Namespace: old.Namespace, Labels: old.Labels},
		Spec:       old.Spec,
	}
	appends := box.Calls(sandbox.SheetsValuesAppend)
	if err := testenv.Reapply(ctx, env.Client, manifest, time.Minute); err != nil {
		t.Fatal(err)
	}
	var s *v1alpha1.SheetSync
	testenv.EventuallyWithin(t, restoreBound, "the re-applied SheetSync Succeeded", func() bool {
		s = f.sync(t, "g-kept")
		return s.UID != old.UID && s.Status.Phase == v1alpha1.SyncSucceeded
	})
	if got := box.Calls(sandbox.SheetsValuesAppend) - appends; got != 0 {
		t.Fatalf("%d appends for the re-applied SheetSync, want none", got)
	}
	if c := condition(s, v1alpha1.ReadyCondition); c.Reason != sheetsync.RecoveredReason || s.Status.RowNumber != old.Status.RowNumber {
		t.Fatalf("re-applied: row %d, Ready %+v; want row %d, %s", s.Status.RowNumber, c, old.Status.RowNumber, sheetsync.RecoveredReason)
	}
	// The tracker posting the session again finds it recorded.
	if code, a := f.post(t, session("g-kept", "restore g-kept", 0, 30), testenv.SheetIngestToken); code != http.StatusOK || a.Status != "duplicate" {
		t.Fatalf("repost: %d %+v, want 200 duplicate", code, a)
	}
	if code, a := f.post(t, session("g-next", "restore g-next", 60, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post g-next: %d %+v", code, a)
	}
	if n := f.succeeded(t, "g-next").Status.RowNumber; n != 3 {
		t.Fatalf("the next session went to row %d, want 3", n)
	}
	onceEach(t, f, []string{"g-kept", "g-next"})
}

// A GitOps delete and re-apply of the SheetConnection itself. By default
// the deletion revokes the grant at Google (the connection comes back
// Revoked, and a person must connect again); with the deletion policy
// Retain the grant stays in its token Secret and the connection applied
// again is Active within a bound, with no person's help. Its sessions'
// SheetSyncs go with the old connection (the garbage collector, which
// envtest lacks, is played by the test); a session the tracker posts again
// then finds its row, and is not appended twice.
func TestAReappliedSheetConnection(t *testing.T) {
	t.Run("deletion policy Revoke, the default", func(t *testing.T) {
		f, revokes := reapplyConnection(t, "")
		if got := box.Calls(sandbox.GoogleOAuthRevoke) - revokes; got != 1 {
			t.Fatalf("%d revocations at Google, want 1", got)
		}
		f.waitConn(t, "the re-applied connection Revoked", func(c *v1alpha1.SheetConnection) bool {
			return c.Status.Phase == v1alpha1.ConnectionRevoked
		})
	})
	t.Run("deletion policy Retain", func(t *testing.T) {
		f, revokes := reapplyConnection(t, sheetconnection.RetainGrant)
		restoredReady(t, f)
		if got := box.Calls(sandbox.GoogleOAuthRevoke) - revokes; got != 0 {
			t.Fatalf("%d revocations at Google, want none", got)
		}
		if code, a := f.post(t, session("c-kept", "restore c-kept", 0, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
			t.Fatalf("post again: %d %+v", code, a)
		}
		if c := condition(f.succeeded(t, "c-kept"), v1alpha1.ReadyCondition); c.Reason != sheetsync.RecoveredReason {
			t.Fatalf("posted again: Ready %+v, want %s", c, sheetsync.RecoveredReason)
		}
		onceEach(t, f, []string{"c-kept"})
	})
}

// reapplyConnection writes a session through a connection whose manifest
// carries the deletion policy (none when ""), deletes and applies it
// again, deletes its SheetSyncs as the garbage collector would, and
// returns the revocations Google had counted before the deletion.
func reapplyConnection(t *testing.T, policy string) (*fixture, int) {
	t.Helper()
	ctx := context.Background()
	f := newFixture(t, func(c *v1alpha1.SheetConnection) {
		if policy != "" {
			c.Annotations = map[string]string{sheetconnection.DeletionPolicyAnnotation: policy}
		}
	})
	f.ready(t)
	if code, a := f.post(t, session("c-kept", "restore c-kept", 0, 30), testenv.SheetIngestToken); code != http.StatusAccepted {
		t.Fatalf("post: %d %+v", code, a)
	}
	f.succeeded(t, "c-kept")
	live := f.conn(t)
	manifest := &v1alpha1.SheetConnection{
		ObjectMeta: metav1.ObjectMeta{Name: live.Name, Namespace: live.Namespace, Annotations: live.Annotations},
		Spec:       live.Spec,
	}
	revokes := box.Calls(sandbox.GoogleOAuthRevoke)
	if err := testenv.Reapply(ctx, env.Client, manifest, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.DeleteAllOf(ctx, &v1alpha1.SheetSync{}, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	testenv.EventuallyWithin(t, time.Minute, "the old SheetSyncs gone", func() bool { return len(f.syncs(t)) == 0 })
	return f, revokes
}

// ownedBy reports whether o has an owner reference to owner's UID.
func ownedBy(o, owner metav1.Object) bool {
	for _, ref := range o.GetOwnerReferences() {
		if ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}
