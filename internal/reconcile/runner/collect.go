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

package runner

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// DeleteAfter deletes obj, an object whose work finished at done, once
// retention has passed (the spec.syncRetention of a PaperSync's or
// SheetSync's parent); until then it waits. The delete is preconditioned on
// obj's UID, so a new object of the same name is never collected.
func DeleteAfter(ctx context.Context, c client.Writer, obj client.Object, done time.Time, retention time.Duration, now time.Time) Outcome {
	if left := done.Add(retention).Sub(now); left > 0 {
		return Wait(left)
	}
	uid := obj.GetUID()
	if err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return Transient(v1alpha1.UpstreamUnavailableReason, fmt.Errorf("delete finished sync: %w", err))
	}
	return Done()
}
