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

// Package v1alpha1 contains the Switchboard API: one custom resource per
// SaaS integration (NotionIntegration, SlideStock, CalendarWatch,
// ReceiveLink, SheetConnection) and the child kinds that record one unit of
// inbound work each (PaperSync, SheetSync).
// +kubebuilder:object:generate=true
// +groupName=switchboard.dev
package v1alpha1

import (
	"reflect"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API package depends only on apimachinery, so that other projects can
// import the types without controller-runtime.
var (
	// GroupVersion is group version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "switchboard.dev", Version: "v1alpha1"}

	// SchemeBuilder adds the Switchboard kinds to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = SchemeBuilder.AddToScheme

	knownTypes []runtime.Object
)

// register records kinds from each type file's init.
func register(objs ...runtime.Object) { knownTypes = append(knownTypes, objs...) }

// Kinds names every Switchboard kind (not the lists), sorted: the one
// list that tests, docs checks and tools derive theirs from. A kind is in
// it once its type file registers it.
func Kinds() []string {
	var kinds []string
	for _, obj := range NewObjects() {
		kinds = append(kinds, KindOf(obj))
	}
	return kinds
}

// KindOf is the kind of a Switchboard object, as Kinds names it: its
// type's name.
func KindOf(obj runtime.Object) string { return reflect.TypeOf(obj).Elem().Name() }

// NewObjects makes an empty object of every kind of Kinds(), in its
// order: for code that keeps a list per kind, or per interface a kind
// implements (OAuthObject, ChildObject, RoutedObject, Suspendable), and
// derives it here rather than naming the kinds.
func NewObjects() []runtime.Object {
	var objs []runtime.Object
	for _, obj := range knownTypes {
		if _, ok := obj.(StatusObject); ok {
			objs = append(objs, obj.DeepCopyObject())
		}
	}
	sort.Slice(objs, func(i, j int) bool { return KindOf(objs[i]) < KindOf(objs[j]) })
	return objs
}

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, knownTypes...)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
