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

package grant

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
)

// SecretWatch is the watch of the Secrets an OAuth kind's objects name
// (v1alpha1.OAuthObject.GetWatchedSecrets, found by index.OAuthSecrets):
// a token Secret the OAuth callback wrote reconciles the objects that use
// it at once. Only Secrets the operator labelled are cached, so a
// person's own Secrets wake nothing; an update that only took or freed
// the refresh lock wakes nothing either (oauth.GrantChanged). list is an
// empty list of the kind, c the cache it is looked up in:
//
//	Watches(grant.SecretWatch(r, &v1alpha1.SheetConnectionList{}))
func SecretWatch(c client.Reader, list client.ObjectList) (client.Object, handler.EventHandler, builder.WatchesOption) {
	using := func(ctx context.Context, o client.Object) []reconcile.Request {
		return index.Requests(ctx, c, list.DeepCopyObject().(client.ObjectList), o.GetNamespace(), index.OAuthSecrets, o.GetName())
	}
	return &corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(using), builder.WithPredicates(oauth.GrantChanged())
}

// SetupHandover registers the receiver of the grants the webhook server
// hands over in stateNamespace (its --state-namespace) for tgs (nil: every
// OAuth target, targets.All()), and the grants of signUps (wire.SignUps):
// the webhook holds no right to the resources' Secrets, so the manager
// exchanges each code and writes the grant.
func SetupHandover(mgr ctrl.Manager, engine *oauth.Engine, stateNamespace string, shard labels.Selector, tgs []oauth.Target, signUps ...oauth.SignUp) error {
	if tgs == nil {
		tgs = targets.All()
	}
	return SetupReceiver(mgr, &oauth.Receiver{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Engine: engine,
		Targets: tgs, Namespace: stateNamespace, Shard: shard, SignUps: signUps})
}

// SetupReceiver registers r, the manager's receiver of the grants the
// webhook hands over (controller oauth-handover): handover Secrets in
// r.Namespace carry the managed-by label, so the manager's cache holds
// and watches them.
func SetupReceiver(mgr ctrl.Manager, r *oauth.Receiver) error {
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == r.Namespace && o.GetLabels()[oauth.HandoverLabel] != ""
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.Secret{}, builder.WithPredicates(ours)).
		Named("oauth-handover").
		Complete(r)
}
