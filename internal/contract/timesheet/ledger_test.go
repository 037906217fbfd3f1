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

package timesheet_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
)

func ledgerConn(sheet string) *v1alpha1.SheetConnection {
	return &v1alpha1.SheetConnection{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "timesheet"},
		Spec: v1alpha1.SheetConnectionSpec{SpreadsheetID: "1Sheet", Sheet: v1alpha1.SheetSelector{Title: sheet}}}
}

// The ledger keeps each session's row once, finds it again, answers
// nothing for a session it does not hold, and starts over when the
// connection points at another sheet.
func TestTheLedgerKeepsEachSessionsRowOnce(t *testing.T) {
	c := ledgerConn("Log")
	shards := map[string]*corev1.Secret{}
	const n = 5000
	for i := range n {
		id := fmt.Sprintf("session-%d", i)
		name := timesheet.LedgerName(c.Namespace, c.Name, id)
		if shards[name] == nil {
			shards[name] = &corev1.Secret{}
		}
		if !timesheet.LedgerAdd(shards[name], c, id, int64(i+2)) {
			t.Fatalf("session %d was not added", i)
		}
	}
	if len(shards) != timesheet.LedgerShards {
		t.Fatalf("%d shards, want %d", len(shards), timesheet.LedgerShards)
	}
	size := 0
	for _, s := range shards {
		size += len(s.Data["rows"])
	}
	if size != 12*n {
		t.Fatalf("%d bytes for %d sessions, want 12 each", size, n)
	}
	for i := range n {
		id := fmt.Sprintf("session-%d", i)
		sec := shards[timesheet.LedgerName(c.Namespace, c.Name, id)]
		if row, ok := timesheet.LedgerRow(sec, c, id); !ok || row != int64(i+2) {
			t.Fatalf("session %d: row %d %v", i, row, ok)
		}
		if timesheet.LedgerAdd(sec, c, id, 99) {
			t.Fatalf("session %d was added twice", i)
		}
	}
	missing := "never-taken"
	if _, ok := timesheet.LedgerRow(shards[timesheet.LedgerName(c.Namespace, c.Name, missing)], c, missing); ok {
		t.Fatal("a session never taken has a row")
	}
	other := ledgerConn("Another tab")
	id := "session-7"
	sec := shards[timesheet.LedgerName(c.Namespace, c.Name, id)]
	if _, ok := timesheet.LedgerRow(sec, other, id); ok {
		t.Fatal("the ledger of one sheet answered for another")
	}
	if !timesheet.LedgerAdd(sec, other, id, 3) || len(sec.Data["rows"]) != 12 {
		t.Fatalf("a new sheet did not start the shard over: %d bytes", len(sec.Data["rows"]))
	}
	if timesheet.LedgerName("team", "timesheet", id) == timesheet.LedgerName("team", "other", id) {
		t.Fatal("two connections share a shard")
	}
}
