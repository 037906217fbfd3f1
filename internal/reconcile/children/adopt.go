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

package children

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// adopt gives obj back its owner reference to parent when a restore
// brought it back without one (issue 35): Velero drops owner references
// (or keeps ones to the old cluster's UIDs, which the garbage collector
// would act on), and a child kept in Git has none. Without it a restored
// child outlives its parent's deletion and, pending, waits for it
// forever. The reference is the one the webhook creates children with (no
// controller flag); references to other objects are kept, one to the
// parent's old UID is replaced. Adopted, when set, marks the child in the
// same patch (a PaperSync that may have filled its page already reads it
// first). A failed patch (a conflict: a stale copy) leaves obj as it was
// and is returned: the caller works on obj only once it is adopted, since
// a child finished unadopted never comes this way again.
func (b *Batcher[C, P]) adopt(ctx context.Context, obj C, parent P) error {
	gvk, err := apiutil.GVKForObject(parent, b.Client.Scheme())
	if err != nil {
		return err
	}
	refs := make([]metav1.OwnerReference, 0, len(obj.GetOwnerReferences())+1)
	for _, ref := range obj.GetOwnerReferences() {
		switch {
		case ref.UID == parent.GetUID():
			return nil // its own
		case ref.Kind == gvk.Kind && ref.Name == parent.GetName():
			// Its parent before the restore: replaced below.
		default:
			refs = append(refs, ref)
		}
	}
	before, _ := obj.DeepCopyObject().(C)
	obj.SetOwnerReferences(append(refs, metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
		Name: parent.GetName(), UID: parent.GetUID()}))
	if b.Adopted != nil {
		b.Adopted(obj)
	}
	if err := b.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		// As it was: what is read of it must match what is stored.
		obj.SetOwnerReferences(before.GetOwnerReferences())
		obj.SetAnnotations(before.GetAnnotations())
		return fmt.Errorf("adopt %s: %w", obj.GetName(), err)
	}
	return nil
}

// adoptMembers adopts the batch's members after its leader (parentOf
// adopted the leader): a restored child taken into another's batch is
// finished there and never leads a batch of its own, so the batch is its
// one chance to be adopted. A member that cannot be adopted now (a failed
// patch; a conflict on a stale copy) is left out of the batch and leads
// one of its own.
func (b *Batcher[C, P]) adoptMembers(ctx context.Context, members []C, parent P) []C {
	kept := members[:1]
	for _, m := range members[1:] {
		if b.adopt(ctx, m, parent) == nil {
			kept = append(kept, m)
		}
	}
	return kept
}
