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

// Package index declares the cache field indexes the webhook server and
// the controllers look objects up by, so that an inbound request finds its
// object in memory rather than by listing.
package index

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// Field index names. OAuthSecrets is registered for every OAuth kind,
// PendingChildren for every child kind, RoutePaths for every routed kind:
// each derived from the API's interfaces, so that a new kind gets its
// entries without a line here. CalendarWatchUID is CalendarWatch's alone.
const (
	// OAuthSecrets finds the objects of an OAuth kind that name a Secret
	// (v1alpha1.OAuthObject.GetWatchedSecrets): their token Secret, so
	// that a grant written by the OAuth callback reconciles them at once,
	// and a SheetConnection's ingest token Secret (a new ingest path).
	OAuthSecrets = "oauth.secrets" //nolint:gosec // a field path, not a credential
	// PendingChildren finds the unfinished children of a parent
	// (v1alpha1.ChildObject: the PaperSyncs of a NotionIntegration, the
	// SheetSyncs of a SheetConnection) by the parent's name: they make a
	// batch, and become due when it takes work again. Finished ones (kept
	// for their retention, thousands at times) are not indexed, so a
	// batch never copies them out of the cache.
	PendingChildren = "pending.parent"
	// RoutePaths finds the object listening on the path a request came in
	// on (v1alpha1.RoutedObject: a NotionIntegration's Automation path and
	// connection-webhook path, a SheetConnection's ingest path), registered
	// on every kind that implements it. Each route's paths have a prefix of
	// their own, so one index serves them all.
	RoutePaths = "status.routePaths"
	// CalendarWatchUID finds the CalendarWatch of a push notification:
	// its channel ids embed the watch's UID (X-Goog-Channel-ID
	// "sb-<uid>-<sequence>", seed 002), so a channel still being opened
	// is found before status names it.
	CalendarWatchUID = "metadata.uid"
)

// Binary is which of the two binaries reads an index: each registers only
// its own, since an index costs a set per distinct value in every cache
// that holds the kind, and registering one makes the cache hold its kind
// at all (the webhook reads no PaperSync or SheetSync).
type Binary int

const (
	// Manager's indexes wake objects: by the Secrets they name, and a
	// parent's pending children.
	Manager Binary = 1 << iota
	// Webhook's indexes route a request to its object.
	Webhook
	// Both is every index: tests that run the controllers and the
	// webhook server on one cache.
	Both = Manager | Webhook
)

type field struct {
	obj     client.Object
	name    string
	extract client.IndexerFunc
	by      Binary
}

func nonEmpty(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

// oauthKinds are the kinds OAuthSecrets is registered for: every kind of
// the API (v1alpha1.Kinds) that implements v1alpha1.OAuthObject, made by
// the API's scheme, so that a new OAuth kind is indexed without a line
// here. A kind left out would fail silently: its objects would not be
// found by the Secrets they name, and a new grant would never wake them.
func oauthKinds() []client.Object {
	return kindsWhere(func(o runtime.Object) bool { _, ok := o.(v1alpha1.OAuthObject); return ok })
}

// childKinds are the kinds PendingChildren is registered for: every kind
// of the API that implements v1alpha1.ChildObject.
func childKinds() []client.Object {
	return kindsWhere(func(o runtime.Object) bool { _, ok := o.(v1alpha1.ChildObject); return ok })
}

// kindsWhere is an empty object of each kind of the API
// (v1alpha1.NewObjects) that is.
func kindsWhere(is func(runtime.Object) bool) []client.Object {
	var objs []client.Object
	for _, o := range v1alpha1.NewObjects() {
		if is(o) {
			objs = append(objs, o.(client.Object))
		}
	}
	return objs
}

func oauthSecrets(o client.Object) []string {
	var names []string
	for _, name := range o.(v1alpha1.OAuthObject).GetWatchedSecrets() {
		names = append(names, nonEmpty(name)...)
	}
	return names
}

// PendingChild is the PendingChildren value of a child: its parent's
// name while it is not finished (status.completedAt unset), none after.
func PendingChild(o client.Object) []string {
	c := o.(v1alpha1.ChildObject)
	if c.GetChildStatus().Finished() {
		return nil
	}
	return nonEmpty(c.ParentName())
}

var fields = []field{
	{&v1alpha1.CalendarWatch{}, CalendarWatchUID, func(o client.Object) []string {
		return nonEmpty(string(o.GetUID()))
	}, Webhook},
}

// routedKinds are the kinds RoutePaths is registered for: every kind of
// the API that implements v1alpha1.RoutedObject.
func routedKinds() []client.Object {
	return kindsWhere(func(o runtime.Object) bool { _, ok := o.(v1alpha1.RoutedObject); return ok })
}

// routePaths is the RoutePaths value of an object: its non-empty paths.
func routePaths(o client.Object) []string {
	var paths []string
	for _, p := range o.(v1alpha1.RoutedObject).GetRoutePaths() {
		paths = append(paths, nonEmpty(p)...)
	}
	return paths
}

// Register adds every index to an informer cache (a manager's or a
// cluster's GetCache()): RegisterFor(Both).
func Register(ctx context.Context, informers cache.Informers) error {
	return RegisterFor(ctx, informers, Both)
}

// RegisterFor adds the indexes that binary reads to an informer cache (a
// manager's or a cluster's GetCache()), on the informers themselves.
//
// Each index holds one key per value, in the form its readers ask:
// controller-runtime's IndexField stores two (the value in the object's
// namespace, and across all namespaces), and each is a set in every
// cache that holds the kind — about 30 MB of the manager's heap at 70,000
// objects. The manager's lookups are all in one namespace (a parent's
// children, the objects naming a Secret); the webhook's are all across
// namespaces (a request's path or channel finds its object wherever it
// is). The keys are controller-runtime's ("<namespace>/<value>",
// "__all_namespaces/<value>"), so client.MatchingFields reads them.
func RegisterFor(ctx context.Context, informers cache.Informers, binary Binary) error {
	for _, f := range all() {
		if f.by&binary == 0 {
			continue
		}
		inf, err := informers.GetInformer(ctx, f.obj, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("index %T by %s: %w", f.obj, f.name, err)
		}
		if err := inf.AddIndexers(toolscache.Indexers{fieldIndexName(f.name): f.keys()}); err != nil {
			return fmt.Errorf("index %T by %s: %w", f.obj, f.name, err)
		}
	}
	return nil
}

// all are the indexes: fields, OAuthSecrets on each OAuth kind,
// PendingChildren on each child kind and RoutePaths on each routed kind.
func all() []field {
	oauth, kids, routed := oauthKinds(), childKinds(), routedKinds()
	out := make([]field, 0, len(fields)+len(oauth)+len(kids)+len(routed))
	out = append(out, fields...)
	for _, obj := range routed {
		out = append(out, field{obj, RoutePaths, routePaths, Webhook})
	}
	for _, obj := range oauth {
		out = append(out, field{obj, OAuthSecrets, oauthSecrets, Manager})
	}
	for _, obj := range kids {
		out = append(out, field{obj, PendingChildren, PendingChild, Manager})
	}
	return out
}

// Kinds names the kinds (as v1alpha1.Kinds does) whose objects an index
// is registered on, by RegisterFor(Both): for tests that hold every kind
// to its entries.
func Kinds(name string) []string {
	var kinds []string
	for _, f := range all() {
		if f.name == name {
			kinds = append(kinds, v1alpha1.KindOf(f.obj))
		}
	}
	return kinds
}

// allNamespaces is controller-runtime's namespace part of an index key
// read across namespaces (client.MatchingFields without InNamespace).
const allNamespaces = "__all_namespaces"

// fieldIndexName is controller-runtime's name of a field's index.
func fieldIndexName(field string) string { return "field:" + field }

// AcrossNamespaces is what idx, an informer's index of the webhook's
// (RegisterFor(Webhook)), holds under value of field: the objects
// client.MatchingFields{field: value} lists without InNamespace. An index
// not registered is an error, as ByIndex says.
func AcrossNamespaces(idx toolscache.Indexer, field, value string) ([]any, error) {
	return idx.ByIndex(fieldIndexName(field), allNamespaces+"/"+value)
}

// OwnIndexer is the index inf keeps itself, to be read without a List:
// nil where inf keeps none to ask (controller-runtime's informer of a
// cache of several namespaces, which holds one informer a namespace).
func OwnIndexer(inf cache.Informer) toolscache.Indexer {
	if s, ok := inf.(toolscache.SharedIndexInformer); ok {
		return s.GetIndexer()
	}
	return nil
}

// keys is the informer index function of f: each value as the binary that
// reads f asks for it, in the object's namespace (the manager's) or
// across namespaces (the webhook's).
func (f field) keys() toolscache.IndexFunc {
	return func(raw any) ([]string, error) {
		obj, ok := raw.(client.Object)
		if !ok {
			return nil, fmt.Errorf("index %s: %T is not an object", f.name, raw)
		}
		ns := obj.GetNamespace()
		if f.by == Webhook {
			ns = allNamespaces
		}
		vals := f.extract(obj)
		keys := make([]string, len(vals))
		for i, v := range vals {
			keys[i] = ns + "/" + v
		}
		return keys, nil
	}
}

// Requests lists, from the cache, the objects of list's kind in namespace
// whose indexed field holds value, as reconcile requests: the map function
// of a watch that wakes the objects using a Secret, or a parent's pending
// children. A failed List wakes nothing (the objects' own timers heal it)
// and is logged as an error, with the index and the kind, on ctx's logger:
// the watch's map function has no error to return, and a List that fails
// on every event (an index never registered for the kind) must not pass
// unseen.
func Requests(ctx context.Context, c client.Reader, list client.ObjectList, namespace, field, value string) []reconcile.Request {
	if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{field: value}); err != nil {
		logf.FromContext(ctx).Error(err, "cannot look up the objects to wake: they wait for their own timers",
			"index", field, "list", fmt.Sprintf("%T", list), "namespace", namespace, "value", value)
		return nil
	}
	var reqs []reconcile.Request
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}})
		}
		return nil
	})
	return reqs
}
