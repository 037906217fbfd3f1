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

package sheets

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// sheetsBaseline creates n SheetSyncs, as the ingest route would, with
// `workers` goroutines and a bare client; it answers each create's latency
// (sorted) and the whole time, then deletes them.
func sheetsBaseline(ctx context.Context, c client.Client, n, workers int) ([]time.Duration, time.Duration, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sheetsBaselineNS}}); client.IgnoreAlreadyExists(err) != nil {
		return nil, 0, err
	}
	// Warm-up, untimed: the client's first requests discover the API.
	if err := bench.Parallel(workers, workers, func(i int) error {
		s := bench.Session("warm", i)
		return c.Create(ctx, &v1alpha1.SheetSync{ObjectMeta: metav1.ObjectMeta{Name: timesheet.SyncName("warm", s.ID), Namespace: sheetsBaselineNS},
			Spec: v1alpha1.SheetSyncSpec{ConnectionRef: v1alpha1.LocalObjectReference{Name: "timesheet"}, Session: s}})
	}); err != nil {
		return nil, 0, err
	}
	lat := make([]time.Duration, n)
	began := time.Now()
	err := bench.Parallel(n, workers, func(i int) error {
		s := bench.Session("b", i)
		obj := &v1alpha1.SheetSync{
			ObjectMeta: metav1.ObjectMeta{Name: timesheet.SyncName("timesheet", s.ID), Namespace: sheetsBaselineNS,
				Labels: map[string]string{timesheet.ConnectionLabel: "timesheet"}},
			Spec: v1alpha1.SheetSyncSpec{ConnectionRef: v1alpha1.LocalObjectReference{Name: "timesheet"}, Session: s},
		}
		t0 := time.Now()
		err := c.Create(ctx, obj)
		lat[i] = time.Since(t0)
		return err
	})
	took := time.Since(began)
	if err != nil {
		return nil, 0, err
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	// Gone before the manager starts, so that it has nothing of them to do.
	if err := c.DeleteAllOf(ctx, &v1alpha1.SheetSync{}, client.InNamespace(sheetsBaselineNS)); err != nil {
		return nil, 0, err
	}
	for {
		var list v1alpha1.SheetSyncList
		if err := c.List(ctx, &list, client.InNamespace(sheetsBaselineNS)); err != nil {
			return nil, 0, err
		}
		if len(list.Items) == 0 {
			return lat, took, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sheetsConnect creates the fixture's SheetConnection on the bench
// spreadsheet with a grant, and waits until it takes sessions.
func sheetsConnect(ctx context.Context, c client.Client, rig *sheetsRig) (*v1alpha1.SheetConnection, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sheetsBenchNS}}); err != nil {
		return nil, err
	}
	grant := rig.google.IssueRefreshToken("sheet-client", strings.Join(targets.Sheets.Provider.Scopes, " "))
	if err := testenv.SheetConnection(ctx, c, sheetsBenchNS, bench.SheetsID, bench.SheetsTab, grant, nil); err != nil {
		return nil, err
	}
	conn := &v1alpha1.SheetConnection{}
	err := poll.Until(ctx, "", 50*time.Millisecond, time.Minute, func() (bool, error) {
		conn = &v1alpha1.SheetConnection{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: sheetsBenchNS, Name: "timesheet"}, conn); err != nil {
			return false, poll.Stop(err)
		}
		if ok, _ := timesheet.Accepting(conn); !ok || conn.Status.IngestPath == "" {
			return false, nil
		}
		// The webhook reads the connection from the manager's cache.
		cached := &v1alpha1.SheetConnection{}
		if err := rig.Mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(conn), cached); err != nil {
			return false, nil
		}
		ok, _ := timesheet.Accepting(cached)
		return ok, nil
	})
	if err != nil && !poll.Stopped(err) {
		return nil, fmt.Errorf("SheetConnection not Active after a minute: phase %q, %+v", conn.Status.Phase, conn.Status.Conditions)
	}
	if err != nil {
		return nil, err
	}
	return conn, nil
}
