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

package calendarwatch

import (
	"context"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

func (f *fixture) channelSecret(t *testing.T) *corev1.Secret {
	t.Helper()
	var sec corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: ChannelSecretName("visits")}, &sec); err != nil {
		t.Fatal(err)
	}
	return &sec
}

func recordedIDs(sec *corev1.Secret) []string {
	var ids []string
	for _, ch := range recordedChannels(sec) {
		ids = append(ids, ch.ID)
	}
	return ids
}

// restore loses the watch and its channel Secret without their finalizers
// running, and creates them again as Velero does.
func (f *fixture) restore(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	b, err := testenv.TakeBackup(ctx, env.Client,
		&v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Name: "visits", Namespace: f.ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ChannelSecretName("visits"), Namespace: f.ns}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Replay(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

// A restored watch claims its channel Secret with a new channel token,
// keeps the sync cursor, and stops the channel its earlier incarnation
// left open; a stop that fails leaves that channel in the record, does not
// hold up the sync or the new channel, and is tried again.
func TestARestoredWatchStopsTheChannelLeftOpenAndKeepsTheCursor(t *testing.T) {
	f := newFixture(t, nil)
	f.reconcile(t)
	old := f.watch(t)
	before := f.channelSecret(t)
	if ids := recordedIDs(before); len(ids) != 1 || ids[0] != old.Status.Channel.ID {
		t.Fatalf("record %v, want [%s]", ids, old.Status.Channel.ID)
	}
	f.restore(t)
	box.SetFault(sandbox.CalendarChannelsStop, sandbox.Fault{Status: http.StatusServiceUnavailable, Times: 1000})
	defer box.ClearFault(sandbox.CalendarChannelsStop)

	f.reconcile(t) // claims the Secret
	sec := f.channelSecret(t)
	if string(sec.Data[ChannelTokenKey]) == string(before.Data[ChannelTokenKey]) || string(sec.Data[SyncTokenKey]) != string(before.Data[SyncTokenKey]) {
		t.Fatal("the claim kept the channel token or lost the sync cursor")
	}
	lists := box.Calls(sandbox.CalendarEventsList)
	f.reconcile(t)
	w := f.watch(t)
	if !status.IsTrue(w, v1alpha1.ReadyCondition) || w.Status.Channel == nil || w.Status.Channel.ID == old.Status.Channel.ID {
		t.Fatalf("not Ready on a channel of its own: %+v %+v", w.Status.Conditions, w.Status.Channel)
	}
	if w.Status.Syncs != 1 || box.Calls(sandbox.CalendarEventsList)-lists != 1 || w.Status.LastFullSyncTime != nil {
		t.Fatalf("syncs %d, events.list calls %d, full sync %v: want one incremental sync from the restored cursor",
			w.Status.Syncs, box.Calls(sandbox.CalendarEventsList)-lists, w.Status.LastFullSyncTime)
	}
	if got := recordedIDs(f.channelSecret(t)); len(got) != 2 || got[0] != old.Status.Channel.ID || got[1] != w.Status.Channel.ID {
		t.Fatalf("record %v, want the unstopped old channel and the new one", got)
	}
	if n := len(calEm.Channels(f.calendar)); n != 2 {
		t.Fatalf("%d channels open while the stop fails", n)
	}

	box.ClearFault(sandbox.CalendarChannelsStop)
	f.clock.Step(20 * time.Second)
	f.reconcile(t)
	if open := calEm.Channels(f.calendar); len(open) != 1 || open[0].ID != w.Status.Channel.ID {
		t.Fatalf("open %+v, want only %s", open, w.Status.Channel.ID)
	}
	if got := recordedIDs(f.channelSecret(t)); len(got) != 1 || got[0] != w.Status.Channel.ID {
		t.Fatalf("record %v, want [%s]", got, w.Status.Channel.ID)
	}
	if len(f.rec.With("ChannelStopped")) != 1 {
		t.Fatalf("ChannelStopped Events %v, want one", f.rec.With("ChannelStopped"))
	}
}

// A watch whose status lost its channels (the same object: a status
// cleared, or a copy older than the channel) names the recorded channel
// again rather than opening a second one.
func TestAStatusWithoutItsChannelNamesTheRecordedOneAgain(t *testing.T) {
	f := newFixture(t, nil)
	f.reconcile(t)
	w := f.watch(t)
	opened := w.Status.Channel.ID
	watches := box.Calls(sandbox.CalendarEventsWatch)
	patch := w.DeepCopy()
	patch.Status.Channel = nil
	if err := env.Client.Status().Update(context.Background(), patch); err != nil {
		t.Fatal(err)
	}
	f.run = f.r.Runner() // a restarted manager: no memory of the channel
	f.reconcile(t)
	if got := box.Calls(sandbox.CalendarEventsWatch) - watches; got != 0 {
		t.Fatalf("%d more channels opened", got)
	}
	if w := f.watch(t); w.Status.Channel == nil || w.Status.Channel.ID != opened {
		t.Fatalf("status names %+v, want %s", w.Status.Channel, opened)
	}
}

// Deleting the watch stops its channel and clears the record, so a watch
// re-created under the same name (GitOps) finds nothing to stop.
func TestDeletionClearsTheRecord(t *testing.T) {
	f := newFixture(t, nil)
	f.reconcile(t)
	if err := env.Client.Delete(context.Background(), f.watch(t)); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	if n := len(calEm.Channels(f.calendar)); n != 0 {
		t.Fatalf("%d channels open", n)
	}
	if got := recordedIDs(f.channelSecret(t)); len(got) != 0 {
		t.Fatalf("record %v after deletion", got)
	}
}
