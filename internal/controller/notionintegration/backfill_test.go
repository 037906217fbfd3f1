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

package notionintegration

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
)

// A reconcile queued by a scan's own writes often reads a copy of the
// integration from before the scan: it must not scan the database again
// (each scan queries Notion at 3 requests/s and races the routes' creates).
// A copy that shows the scan ends the memory; the next scan comes when
// the interval has passed since it.
func TestAStaleCopyDoesNotScanAgain(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 9, 0, 0, 500_000_000, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	scans := 0
	r := &Reconciler{Backfill: func(context.Context, *v1alpha1.NotionIntegration, string) (int, error) { scans++; return 0, nil }}
	r.backfilled.Clock = clk
	ni := &v1alpha1.NotionIntegration{ObjectMeta: metav1.ObjectMeta{UID: "u-1"}}
	ni.Spec.BackfillInterval = metav1.Duration{Duration: time.Hour}
	stale := ni.DeepCopy()
	phase := func(obj *v1alpha1.NotionIntegration, at time.Duration) {
		t.Helper()
		clk.SetTime(t0.Add(at))
		run := &runner.Run{Now: clk.Now()}
		grant.Set(run, grant.Grant{Token: "token"})
		if out := r.backfill(context.Background(), obj, run); out != runner.Continue() {
			t.Fatalf("backfill at +%s: %+v", at, out)
		}
	}

	phase(ni, 0)
	if scans != 1 || ni.Status.LastBackfillAt == nil || !ni.Status.LastBackfillAt.Equal(&metav1.Time{Time: t0.Truncate(time.Second)}) {
		t.Fatalf("first reconcile: %d scans, lastBackfillAt %v", scans, ni.Status.LastBackfillAt)
	}
	phase(stale.DeepCopy(), time.Second)
	if scans != 1 {
		t.Fatalf("a copy from before the scan scanned again (%d scans)", scans)
	}
	shown := ni.DeepCopy()
	phase(shown, 2*time.Second)
	if scans != 1 || r.backfilled.Remembers(ni.UID) {
		t.Fatalf("a copy that shows the scan: %d scans, still remembered %v", scans, r.backfilled.Remembers(ni.UID))
	}
	phase(shown, time.Hour)
	if scans != 2 {
		t.Fatalf("an hour later: %d scans, want 2", scans)
	}
}
