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

package status

import (
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// AnnotationChanged lets an update through when the annotation key
// changed: how an event a route records in an annotation (a Google push
// on a CalendarWatch) reaches a controller that otherwise reacts to spec
// changes only.
func AnnotationChanged(key string) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return false
		}
		return e.ObjectOld.GetAnnotations()[key] != e.ObjectNew.GetAnnotations()[key]
	}}
}

// RequestedAtChanged lets an update through when the
// switchboard.dev/requested-at annotation changed, so that a person's
// "do it again" reaches a controller that otherwise reacts to spec changes
// only (as Flux's ReconcileRequestedPredicate does).
func RequestedAtChanged() predicate.Predicate {
	return AnnotationChanged(v1alpha1.RequestedAtAnnotation)
}

// SpecOrRequest is the usual filter for Switchboard controllers: creations,
// deletions, spec changes (generation) and reconcile requests, but not
// the controller's own status writes.
func SpecOrRequest() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, RequestedAtChanged())
}
