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

package resmetrics

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// kind is one kind a metric covers: its name, a new empty object and a
// new empty list of it.
type kind struct {
	name string
	obj  func() client.Object
	list func() client.ObjectList
}

// scheme makes the objects and lists of every kind of the API.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}()

// kindNamed is the kind of the API named name, its objects and lists made
// by the scheme.
func kindNamed(name string) kind {
	if !scheme.Recognizes(v1alpha1.GroupVersion.WithKind(name)) {
		panic("resmetrics: " + name + " is not a kind of " + v1alpha1.GroupVersion.String())
	}
	newOf := func(kind string) runtime.Object {
		o, err := scheme.New(v1alpha1.GroupVersion.WithKind(kind))
		utilruntime.Must(err)
		return o
	}
	return kind{name: name,
		obj:  func() client.Object { return newOf(name).(client.Object) },
		list: func() client.ObjectList { return newOf(name + "List").(client.ObjectList) }}
}

// kindOf is the kind of obj's type.
func kindOf(obj client.Object) kind { return kindNamed(v1alpha1.KindOf(obj)) }

// kindsWhere are the kinds of the API (v1alpha1.Kinds) keep keeps.
func kindsWhere(keep func(k kind) bool) []kind {
	var out []kind
	for _, name := range v1alpha1.Kinds() {
		if k := kindNamed(name); keep(k) {
			out = append(out, k)
		}
	}
	return out
}

var (
	// parents are the kinds with readiness series: every kind of the API
	// but the children, whose parents' backlogs count them (they come in
	// thousands). A new kind has its series without a line here.
	parents = kindsWhere(func(k kind) bool {
		return !slices.ContainsFunc(children, func(c kind) bool { return c.name == k.name })
	})
	// oauthKinds, those with token series: every kind that implements
	// v1alpha1.OAuthObject.
	oauthKinds = kindsWhere(func(k kind) bool {
		_, ok := k.obj().(v1alpha1.OAuthObject)
		return ok
	})
)

// Kinds names the kinds (as v1alpha1.Kinds does) the metric of that name
// has series of: the kinds it reads, or for a backlog metric the children
// it counts. Tests hold every kind to its series with it.
func Kinds(metric string) []string {
	var names []string
	for _, m := range metrics {
		if m.name == metric {
			for _, k := range m.kinds {
				names = append(names, k.name)
			}
		}
	}
	for _, m := range backlogMetrics {
		if m.name == metric {
			for _, c := range children {
				names = append(names, c.name)
			}
		}
	}
	return names
}

// read are the kinds a scrape reads: each kind any metric covers, once.
func read() []kind {
	var out []kind
	for _, m := range metrics {
		for _, k := range m.kinds {
			if !slices.ContainsFunc(out, func(x kind) bool { return x.name == k.name }) {
				out = append(out, k)
			}
		}
	}
	return out
}
