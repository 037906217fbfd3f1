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

package sheetconnection

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// reads remembers, in this manager's memory, when each connection last
// read its sheet and row 1, for which generation of its spec and with
// which grant. It is not status: a time written at every 10-minute
// recheck would be a status write every 10 minutes for each connection
// (17 a second at 10,000) where the recheck found nothing new. A manager
// that starts (or takes over as leader) remembers nothing, so each
// connection's first reconcile reads its sheet, as before.
type reads struct {
	mu sync.Mutex
	m  map[types.UID]lastRead
}

type lastRead struct {
	at         time.Time
	generation int64
	grant      string
}

// fresh reports whether obj's last read still stands, and when it was
// made: it resolved every column (HeaderValid is True), for this
// generation of the spec, with this grant (one the callback stored: a
// grant stored by hand names none), less than HeaderRecheck ago, and no
// person asked for a reconcile. An append that finds the tab renamed
// forgets the read (renamed); one that finds it gone sets HeaderValid
// False.
func (r *reads) fresh(obj *v1alpha1.SheetConnection, run *runner.Run) (time.Time, bool) {
	r.mu.Lock()
	last, ok := r.m[obj.UID]
	r.mu.Unlock()
	g := grant.Of(run).ID
	return last.at, ok && !run.Requested && obj.Status.Phase == v1alpha1.ConnectionActive &&
		status.IsTrue(obj, v1alpha1.HeaderValidCondition) &&
		last.generation == obj.Generation && g != "" && last.grant == g && run.Now.Before(last.at.Add(HeaderRecheck))
}

// read records that obj's sheet was read now.
func (r *reads) read(obj *v1alpha1.SheetConnection, run *runner.Run) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[types.UID]lastRead{}
	}
	r.m[obj.UID] = lastRead{at: run.Now, generation: obj.Generation, grant: grant.Of(run).ID}
}

// forget drops what is remembered of a connection: it is read again, or
// it is gone.
func (r *reads) forget(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, uid)
}
