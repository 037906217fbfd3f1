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
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// ledger is what this process knows for sure of sessions that are NOT in
// the sheet; every other unfinished session may be there already, and is
// looked up in the sheet before it is appended (recover.go). A status
// cannot say it: a SheetSync a restore re-created (Velero brings it back
// without status), one deleted and applied again (GitOps), one whose
// status write failed after its append, and one left unfinished by a
// manager that stopped between Google's write and its status write, all
// show no row — as a session the webhook has just created does. Only the
// sheet tells them apart, so a session is looked up before its first
// append in this process, and after any append whose answer was lost
// (status.inFlightSince, which a later process reads too). It is not
// looked up again while Google's answers say that nothing was written: a
// 4xx (429 among them) to its append, after the look-up found nothing.
//
// The entries are the UIDs of sessions waiting for a retry after such an
// answer; one is dropped when its append begins. A session a person
// deletes while it waits leaves its entry, a few bytes, until the
// process ends.
type ledger struct {
	mu sync.Mutex
	// absent: Google answered the session's last append with a 4xx,
	// and it was not in the sheet before that append.
	absent map[types.UID]bool
}

// mayBeWritten reports whether m may be in the sheet already, so that it
// is looked up before it is appended.
func (l *ledger) mayBeWritten(m *v1alpha1.SheetSync) bool {
	if m.Status.InFlightSince != nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.absent[m.UID]
}

// appending records that m's append begins: until Google answers, the
// rows may be written or not.
func (l *ledger) appending(m *v1alpha1.SheetSync) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.absent, m.UID)
}

// refused records that Google answered m's append with a 4xx: none of
// its rows were written.
func (l *ledger) refused(m *v1alpha1.SheetSync) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.absent == nil {
		l.absent = map[types.UID]bool{}
	}
	l.absent[m.UID] = true
}
