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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
)

// recordAppended writes the audit record of a session appended, once its
// Succeeded status is stored (docs/audit.md). A session found in the sheet
// after an append whose answer was lost is recorded then: the append that
// wrote it recorded nothing. A SheetSync restored without its status is
// found in the sheet again and recorded a second time.
func recordAppended(ctx context.Context, before, after *v1alpha1.SheetSync) {
	if after.Status.Phase != v1alpha1.SyncSucceeded || before.Status.Phase == v1alpha1.SyncSucceeded {
		return
	}
	audit.Record(ctx, audit.Fact{Fact: audit.SessionAppended, Kind: "SheetSync", Namespace: after.Namespace, Name: after.Name,
		Connection: after.Spec.ConnectionRef.Name, Row: int(after.Status.RowNumber)})
}

// recordRow keeps the row of a Succeeded session in its connection's
// ledger (timesheet.LedgerAdd) before its SheetSync is collected, so that
// the tracker still reads "succeeded, row N" for it afterwards. A session
// that did not succeed, or a manager that knows no ledger namespace,
// records nothing.
func (r *Reconciler) recordRow(ctx context.Context, s *v1alpha1.SheetSync, connection types.NamespacedName) error {
	if r.LedgerNamespace == "" || s.Status.Phase != v1alpha1.SyncSucceeded || s.Status.RowNumber <= 0 {
		return nil
	}
	var c v1alpha1.SheetConnection
	if err := r.Get(ctx, connection, &c); err != nil {
		// A connection that is gone takes its sessions with it: nothing
		// is left to answer for.
		return client.IgnoreNotFound(err)
	}
	key := types.NamespacedName{Namespace: r.LedgerNamespace, Name: timesheet.LedgerName(c.Namespace, c.Name, s.Spec.Session.ID)}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var sec corev1.Secret
		err := r.Get(ctx, key, &sec)
		switch {
		case apierrors.IsNotFound(err):
			sec = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace,
				Labels: map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue,
					timesheet.LedgerLabel: timesheet.LedgerConnection(c.Namespace, c.Name)}},
				Type: corev1.SecretTypeOpaque}
			timesheet.LedgerAdd(&sec, &c, s.Spec.Session.ID, s.Status.RowNumber)
			if err := r.Create(ctx, &sec); apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(corev1.Resource("secrets"), key.Name, err) // another worker made it: read it again
			} else if err != nil {
				return fmt.Errorf("create ledger %s: %w", key, err)
			}
			return nil
		case err != nil:
			return fmt.Errorf("read ledger %s: %w", key, err)
		}
		if !timesheet.LedgerAdd(&sec, &c, s.Spec.Session.ID, s.Status.RowNumber) {
			return nil
		}
		return r.Update(ctx, &sec)
	})
}
