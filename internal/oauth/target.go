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

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// Target is one kind of resource the OAuth routes connect (the route's
// {target}). The webhook server reads it to start a flow; the manager
// reads it to finish one (Receiver): both resolve the resource the same
// way, so neither trusts the other's word about which Secrets it names.
type Target struct {
	// Name is the route's {target} ("notion", "calendar", "sheets").
	Name string
	// Kind names the resource for people: in pages and in the `kubectl get`
	// they are told to run ("notionintegration").
	Kind string
	// Provider is the OAuth provider; its Scopes and AuthParams go into the
	// authorize URL.
	Provider Provider
	// Resolve reads the resource (from the API server, never a cache: a
	// person may open the link the moment they applied it). A missing
	// resource must be an error for which apierrors.IsNotFound is true.
	Resolve func(ctx context.Context, r client.Reader, key types.NamespacedName) (*Resource, error)
}

// Resource is what the OAuth flow needs of one resource: the Secrets it
// names, and what its controller published.
type Resource struct {
	// Object is the resource.
	Object client.Object
	// Credentials name its OAuth client and token Secrets (read only by
	// the manager).
	Credentials v1alpha1.OAuthCredentials
	// Authenticated is the status of its Authenticated condition ("" when
	// it has none yet). A grant whose condition is False no longer works
	// and may be replaced without the reconnect annotation.
	Authenticated metav1.ConditionStatus
	// Connect is what its controller published for the connect route: the
	// connect token's hash, the OAuth client id, and the reconnect value
	// of the stored grant.
	Connect v1alpha1.OAuthConnectStatus
	// Provider, when its Name is set, replaces the target's for this
	// resource (Notion: the integration's assumed token lifetime).
	Provider Provider
}

// ProviderFor is the provider of res: its own when set, else the target's.
func (t Target) ProviderFor(res *Resource) Provider {
	if res.Provider.Name != "" {
		return res.Provider
	}
	return t.Provider
}

// Reconnect is the resource's switchboard.dev/reconnect annotation: the
// value a new grant is recorded for.
func (res *Resource) Reconnect() string {
	return res.Object.GetAnnotations()[v1alpha1.ReconnectAnnotation]
}

// Resolver is the Resolve of a kind that keeps its OAuth credentials in
// its spec and publishes OAuthConnectStatus and an Authenticated condition
// in its status. provider may be nil (the target's provider is used).
func Resolver[T interface {
	client.Object
	v1alpha1.OAuthObject
}](newObj func() T, provider func(T) Provider) func(context.Context, client.Reader, types.NamespacedName) (*Resource, error) {
	return func(ctx context.Context, r client.Reader, key types.NamespacedName) (*Resource, error) {
		obj := newObj()
		if err := r.Get(ctx, key, obj); err != nil {
			return nil, err
		}
		res := &Resource{Object: obj, Credentials: obj.GetOAuthCredentials(), Connect: *obj.GetOAuthConnect()}
		if c := meta.FindStatusCondition(obj.GetReconcileStatus().Conditions, v1alpha1.AuthenticatedCondition); c != nil {
			res.Authenticated = c.Status
		}
		if provider != nil {
			res.Provider = provider(obj)
		}
		return res, nil
	}
}
