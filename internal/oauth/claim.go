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

package oauth

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// Claim is what ClaimSecret made of a Secret of the name one of owner's
// own Secrets has.
type Claim int

const (
	// Owned: owner controls the Secret already; nothing was written.
	Owned Claim = iota
	// Claimed: the Secret is the operator's and names owner as it was
	// before a restore (no controller, or a controller of owner's kind and
	// name whose UID is gone); it is owner's now. Its content came back
	// from a backup: the caller judges whether to keep it.
	Claimed
	// Foreign: someone else's Secret (no managed-by label, or another
	// object controls it). The operator neither takes it over nor
	// overwrites it: ErrConnectSecretConflict.
	Foreign
)

// ClaimSecret makes owner the controller of sec when sec is a Secret the
// operator wrote for an object of owner's kind and name that a restore
// brought back without it: Velero, and a GitOps delete and re-apply,
// re-create the resource with a new UID, and its Secrets come back with
// no owner reference or one to the old UID (which the garbage collector
// would soon act on). Ownership is then read from what a restore keeps:
// the managed-by label, the Secret's name (the caller's, derived from
// owner's), and an old controller reference's kind and name.
//
// A Secret without the managed-by label, or controlled by another object,
// is Foreign and left alone. A person may plant a labelled Secret of the
// right name; callers whose Secret grants something (a connect link's
// token) therefore mint its content anew on Claimed, and those whose
// content must survive (a share link's token) check it against a key
// only the operator holds.
func ClaimSecret(ctx context.Context, c client.Client, owner client.Object, sec *corev1.Secret) (Claim, error) {
	if metav1.IsControlledBy(sec, owner) {
		return Owned, nil
	}
	if sec.Labels[v1alpha1.ManagedByLabel] != v1alpha1.ManagedByValue {
		return Foreign, nil
	}
	gvk, err := apiutil.GVKForObject(owner, c.Scheme())
	if err != nil {
		return Foreign, fmt.Errorf("claim Secret %s: %w", sec.Name, err)
	}
	refs := make([]metav1.OwnerReference, 0, len(sec.OwnerReferences))
	for _, ref := range sec.OwnerReferences {
		if ref.Controller == nil || !*ref.Controller {
			refs = append(refs, ref)
			continue
		}
		if !sameObject(ref, gvk, owner.GetName()) {
			return Foreign, nil
		}
		// The restored object's previous self: dropped, replaced below.
	}
	sec.OwnerReferences = refs
	if err := controllerutil.SetControllerReference(owner, sec, c.Scheme()); err != nil {
		return Foreign, fmt.Errorf("claim Secret %s: %w", sec.Name, err)
	}
	if err := c.Update(ctx, sec); err != nil {
		return Foreign, fmt.Errorf("claim Secret %s: %w", sec.Name, err)
	}
	return Claimed, nil
}

// sameObject reports whether ref names an object of gvk's group and kind
// called name (any UID, any version).
func sameObject(ref metav1.OwnerReference, gvk schema.GroupVersionKind, name string) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == gvk.Group && ref.Kind == gvk.Kind && ref.Name == name
}
