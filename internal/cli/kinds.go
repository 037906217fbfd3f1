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

package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// kind is one Switchboard kind as the API server's discovery serves it:
// its names are the CRD's, so no list here restates them.
type kind struct {
	// Kind is the kind's name: NotionIntegration.
	Kind string
	// Plural is the resource: notionintegrations.
	Plural string
	// Singular is notionintegration.
	Singular string
	// Short are the short names: notion.
	Short []string
}

// String is the kind as kubectl writes a resource type: notionintegration.
func (k kind) String() string { return strings.ToLower(k.Kind) }

// names is how a person may write the kind.
func (k kind) names() []string {
	return append([]string{strings.ToLower(k.Kind), k.Plural, k.Singular}, k.Short...)
}

// kinds are every Switchboard kind the API server serves, sorted by Kind.
type kinds []kind

// discoverKinds asks the API server which Switchboard kinds it serves:
// one request for the group version.
func discoverKinds(cfg *rest.Config) (kinds, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	gv := v1alpha1.GroupVersion.String()
	list, err := dc.ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("the API server serves no %s: the Switchboard CRDs are not installed", gv)
	} else if err != nil {
		return nil, fmt.Errorf("discover %s: %w", gv, err)
	}
	var ks kinds
	for _, r := range list.APIResources {
		if strings.Contains(r.Name, "/") || !slices.Contains(v1alpha1.Kinds(), r.Kind) {
			continue // a subresource (notionintegrations/status), or a kind this build does not know
		}
		ks = append(ks, kind{Kind: r.Kind, Plural: r.Name, Singular: r.SingularName, Short: r.ShortNames})
	}
	if len(ks) == 0 {
		return nil, fmt.Errorf("the API server serves no Switchboard kind in %s", gv)
	}
	slices.SortFunc(ks, func(a, b kind) int { return strings.Compare(a.Kind, b.Kind) })
	return ks, nil
}

// lookup finds the kind a person wrote, case-insensitively, by name,
// plural or short name, optionally qualified by the group
// (notionintegrations.switchboard.dev).
func (ks kinds) lookup(name string) (kind, error) {
	n := strings.ToLower(name)
	n = strings.TrimSuffix(n, "."+v1alpha1.GroupVersion.Group)
	n = strings.TrimSuffix(n, "."+v1alpha1.GroupVersion.Version)
	for _, k := range ks {
		if slices.Contains(k.names(), n) {
			return k, nil
		}
	}
	return kind{}, fmt.Errorf("%q is not a Switchboard kind; the kinds are %s", name, ks.describe())
}

// describe lists the kinds with their short names, for an error message.
func (ks kinds) describe() string {
	var parts []string
	for _, k := range ks {
		s := k.Kind
		if len(k.Short) > 0 {
			s += " (" + strings.Join(k.Short, ", ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// those are the kinds whose empty object satisfies is (implements an
// interface of the API: v1alpha1.Suspendable, v1alpha1.OAuthObject).
func (ks kinds) those(scheme *runtime.Scheme, is func(runtime.Object) bool) kinds {
	var out kinds
	for _, k := range ks {
		if obj, err := scheme.New(v1alpha1.GroupVersion.WithKind(k.Kind)); err == nil && is(obj) {
			out = append(out, k)
		}
	}
	return out
}

// apiKindsThat names, for help texts, the kinds of the API this plugin was
// built with whose empty object satisfies is ("A, B and C", or with or):
// the kinds of v1alpha1.NewObjects, so a new kind is in the help with no
// edit here.
func apiKindsThat(is func(runtime.Object) bool, conjunction string) string {
	var names []string
	for _, obj := range v1alpha1.NewObjects() {
		if is(obj) {
			names = append(names, v1alpha1.KindOf(obj))
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conjunction + " " + names[len(names)-1]
}

// target is one object named on the command line.
type target struct {
	kind kind
	key  types.NamespacedName
}

// String is KIND/NAME, as kubectl writes it.
func (t target) String() string { return t.kind.String() + "/" + t.key.Name }

// targetUsage is the argument form of the commands that take one object.
const targetUsage = "KIND/NAME | KIND NAME"

// parseTarget reads KIND/NAME, or KIND NAME, in the session's namespace.
func (s *session) parseTarget(args []string) (target, error) {
	var kindName, name string
	switch {
	case len(args) == 1 && strings.Count(args[0], "/") == 1:
		kindName, name, _ = strings.Cut(args[0], "/")
	case len(args) == 2 && !strings.Contains(args[0], "/"):
		kindName, name = args[0], args[1]
	default:
		return target{}, fmt.Errorf("want one object, as KIND/NAME or KIND NAME (for example notion/research), got %q", strings.Join(args, " "))
	}
	if kindName == "" || name == "" {
		return target{}, fmt.Errorf("want one object, as KIND/NAME or KIND NAME, got %q", strings.Join(args, " "))
	}
	k, err := s.kinds.lookup(kindName)
	if err != nil {
		return target{}, err
	}
	return target{kind: k, key: types.NamespacedName{Namespace: s.namespace, Name: name}}, nil
}

// newObject is an empty object of kind k.
func (s *session) newObject(k kind) (client.Object, error) {
	obj, err := s.scheme.New(v1alpha1.GroupVersion.WithKind(k.Kind))
	if err != nil {
		return nil, err
	}
	o, ok := obj.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", k.Kind)
	}
	return o, nil
}

// newList is an empty list of kind k.
func (s *session) newList(k kind) (client.ObjectList, error) {
	obj, err := s.scheme.New(v1alpha1.GroupVersion.WithKind(k.Kind + "List"))
	if err != nil {
		return nil, err
	}
	l, ok := obj.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("%sList is not a list", k.Kind)
	}
	return l, nil
}

// get reads the target from the API server; a missing object is an
// error that names it and its namespace.
func (s *session) get(ctx context.Context, t target) (client.Object, error) {
	obj, err := s.newObject(t.kind)
	if err != nil {
		return nil, err
	}
	if err := s.client.Get(ctx, t.key, obj); apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s not found in namespace %s", t, t.key.Namespace)
	} else if err != nil {
		return nil, fmt.Errorf("get %s: %w", t, err)
	}
	return obj, nil
}

// items are a list's objects.
func items(list client.ObjectList) ([]client.Object, error) {
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		if co, ok := o.(client.Object); ok {
			out = append(out, co)
		}
	}
	return out, nil
}

// readiness is an object's Ready condition, for a table row.
type readiness struct {
	Status, Reason, Message string
}

// readyOf reads the Ready condition; an object without one has not been
// reconciled yet.
func readyOf(obj client.Object) readiness {
	so, ok := obj.(v1alpha1.StatusObject)
	if !ok {
		return readiness{Status: string(metav1.ConditionUnknown)}
	}
	c := meta.FindStatusCondition(so.GetReconcileStatus().Conditions, v1alpha1.ReadyCondition)
	if c == nil {
		return readiness{Status: string(metav1.ConditionUnknown), Message: "not reconciled yet"}
	}
	return readiness{Status: string(c.Status), Reason: c.Reason, Message: oneLine(c.Message)}
}

// oneLine keeps a message on its table row.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
