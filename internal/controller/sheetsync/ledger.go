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

package sheetsync

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// ledger is what this process knows of appends that no status records,
// so that an append costs no status write of its own before Google is
// called (an in-flight mark per session was one write more per session).
// A session may be in the sheet without its status saying so when:
//
//   - an earlier process appended it and stopped before writing its status
//     (a crash): every session unfinished when this process began
//     appending (found) is looked up once before it is appended. Only the
//     leader appends, so no other process appends after that instant;
//   - this process appended it and its status write failed: it is
//     remembered (unsure) until it is looked up;
//   - Google's answer was lost (a 5xx, a timeout): status.inFlightSince is
//     written with the retry's status, and it is looked up.
type ledger struct {
	mu sync.Mutex
	// started is set once found holds every session unfinished at the
	// first batch.
	started bool
	// found: unfinished at the first batch, not yet looked up.
	found map[types.UID]bool
	// unsure: appended by this process, the status write failed.
	unsure map[types.UID]bool
}

// start lists, at the first batch, the sessions an earlier process may
// have appended: every unfinished one in the cache. The cache has synced
// before the controller's first batch, and a session created later was
// created while this process alone appends. It lists again on the next
// batch if the cache cannot answer.
func (l *ledger) start(ctx context.Context, c client.Reader) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started {
		return nil
	}
	var list v1alpha1.SheetSyncList
	if err := c.List(ctx, &list); err != nil {
		return fmt.Errorf("list the sessions an earlier manager may have appended: %w", err)
	}
	l.found, l.unsure = map[types.UID]bool{}, map[types.UID]bool{}
	for i := range list.Items {
		if list.Items[i].Status.CompletedAt == nil {
			l.found[list.Items[i].UID] = true
		}
	}
	l.started = true
	return nil
}

// mayBeWritten reports whether m may be in the sheet already, so that it
// is looked up before it is appended.
func (l *ledger) mayBeWritten(m *v1alpha1.SheetSync) bool {
	if m.Status.InFlightSince != nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.found[m.UID] || l.unsure[m.UID]
}

// known records that m's place is known: looked up (found or not), or
// finished in this batch.
func (l *ledger) known(m *v1alpha1.SheetSync) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.found, m.UID)
	delete(l.unsure, m.UID)
}

// unwritten is told of a session whose status write failed (children's
// Unwritten): appended or recovered, or with the answer lost, it may be in
// the sheet, and only this process knows.
func (l *ledger) unwritten(m *v1alpha1.SheetSync) {
	if m.Status.Phase != v1alpha1.SyncSucceeded && m.Status.InFlightSince == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unsure == nil {
		l.unsure = map[types.UID]bool{}
	}
	l.unsure[m.UID] = true
}
