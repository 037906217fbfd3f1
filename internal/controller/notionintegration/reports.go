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

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/children"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
)

// Reports is the integration controller's mailbox: the PaperSync
// controller posts each batch's tally there (children.Tallies), and the
// integration's reconcile adds it to papersSynced and syncFailures, so
// that this controller alone writes the integration's status. A tally
// waits children.TallyDelay for the reconcile: a burst of batches is one
// status write.
type Reports struct {
	children.Mailbox[children.Tally]
}

// Tally adds a batch's tally.
func (m *Reports) Tally(integration types.NamespacedName, t children.Tally) {
	m.Post(integration, children.TallyDelay, func(s *children.Tally) { *s = s.Plus(t) })
}

// mailbox is the controller's mailbox (made when the wiring gave none).
func (r *Reconciler) mailbox() *Reports {
	if r.Reports == nil {
		r.Reports = &Reports{}
	}
	return r.Reports
}

// reports, the first phase, adds the syncs' tallies to the counters.
func (r *Reconciler) reports(_ context.Context, obj *v1alpha1.NotionIntegration, _ *runner.Run) runner.Outcome {
	if r.Reports != nil {
		st := &obj.Status
		_, n := r.Reports.Receive(client.ObjectKeyFromObject(obj), children.Tally{Done: st.PapersSynced, Failed: st.SyncFailures},
			func(t children.Tally) children.Tally { return t })
		st.PapersSynced, st.SyncFailures = n.Done, n.Failed
	}
	return runner.Continue()
}
