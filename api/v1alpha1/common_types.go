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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RequestedAtAnnotation asks the controllers to reconcile an object now,
// whatever its timers say (as Flux's reconcile.fluxcd.io/requestedAt does).
// Set it to any new value, for example the current time:
//
//	kubectl annotate --overwrite slidestock/deck switchboard.dev/requested-at="$(date +%s)"
//
// The value last acted on is echoed in status.lastHandledRequestedAt.
const RequestedAtAnnotation = "switchboard.dev/requested-at"

// ReconnectAnnotation lets one OAuth callback replace a grant that still
// works. Without it, the connect link of a resource whose grant is valid
// answers 409 and writes nothing, so a leaked link cannot silently swap a
// working grant for a stranger's. Set it to a new value, then open the
// connect link:
//
//	kubectl annotate --overwrite notionintegration/research switchboard.dev/reconnect="$(date +%s)"
//
// Each value allows one replacement: the callback records it on the token
// Secret (ReconnectedForAnnotation), and the same value does not allow a
// second.
const ReconnectAnnotation = "switchboard.dev/reconnect"

// ReconnectedForAnnotation, on a token Secret, is the ReconnectAnnotation
// value whose callback wrote the grant.
const ReconnectedForAnnotation = "switchboard.dev/reconnected-for"

// ManagedByLabel marks the objects the operator writes itself (token
// Secrets it created, connect-link Secrets, OAuth states, share-link and
// channel-token Secrets). Only Secrets carrying it are held in the
// operator's informer caches, so a cluster's unrelated Secrets are never
// listed into memory.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "switchboard"
)

// ShardLabel assigns an object to a shard: the manager started with
// --watch-label-selector="sharding.switchboard.dev/key in (shard1)"
// reconciles the objects labelled shard1, and the main manager, with
// "sharding.switchboard.dev/key notin (shard1)", the rest, the unlabelled
// ones among them (docs/install.md, Scaling out). The children the
// operator creates (PaperSyncs, SheetSyncs) take their parent's value, so
// a parent and its children are reconciled by the same manager.
const ShardLabel = "sharding.switchboard.dev/key"

// ShardOf copies parent's ShardLabel, when it has one, into labels (a
// child's, before it is created) and returns them.
func ShardOf(parent metav1.Object, labels map[string]string) map[string]string {
	if v, ok := parent.GetLabels()[ShardLabel]; ok {
		if labels == nil {
			labels = map[string]string{}
		}
		labels[ShardLabel] = v
	}
	return labels
}

// Category is the kubectl category every Switchboard kind belongs to, so
// that `kubectl get switchboard -A` lists them all.
const Category = "switchboard"

// SecretReference names a Secret in the same namespace as the object that
// refers to it. Cross-namespace references are not allowed: a user who can
// create the object can only point the operator at Secrets of their own
// namespace.
type SecretReference struct {
	// Name of the Secret, in the object's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Name string `json:"name"`
}

// LocalObjectReference names another Switchboard object in the same
// namespace.
type LocalObjectReference struct {
	// Name of the object, in the same namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// OAuthCredentials points at the two Secrets an OAuth 2.0 integration needs.
// The keys are fixed so that the one OAuth engine reads every provider the
// same way.
//
// The grant is obtained through the webhook server's OAuth routes. The
// connect link is a capability: the operator keeps it in a Secret named
// `<name>-oauth-connect` owned by the resource (key `url`, the whole link;
// key `token`, its one-use token), and status.connectSecretName names it.
// Whoever can read Secrets in the namespace can print it:
//
//	kubectl get secret <name>-oauth-connect -o jsonpath='{.data.url}' | base64 -d
//
// A successful callback rotates the token, so each link works once. A grant
// that still works is replaced only when the resource carries the
// switchboard.dev/reconnect annotation with a new value.
type OAuthCredentials struct {
	// ClientSecretRef names the Secret holding the OAuth client registration,
	// created by a person: key `client_id` and key `client_secret`.
	// +required
	ClientSecretRef SecretReference `json:"clientSecretRef"`

	// TokenSecretRef names the Secret holding the grant, written by the
	// operator after the OAuth callback and on every refresh: keys
	// `access_token`, `refresh_token`, `token_type` and `expiry` (RFC 3339).
	// It may be created in advance with a refresh token obtained elsewhere.
	// Access and refresh token are always replaced together in one update.
	// To write it through a browser, open the connect link kept in the
	// Secret that status.connectSecretName names (key `url`).
	// +required
	TokenSecretRef SecretReference `json:"tokenSecretRef"`
}

// TokenStatus is what an OAuth kind's status records of its grant's access
// token (never the token itself).
type TokenStatus struct {
	// TokenExpiresAt is the access token's expiry, as the provider stated
	// it.
	// +optional
	TokenExpiresAt *metav1.Time `json:"tokenExpiresAt,omitempty"`
	// LastTokenRefreshAt is when the access token was last refreshed.
	// +optional
	LastTokenRefreshAt *metav1.Time `json:"lastTokenRefreshAt,omitempty"`
	// TokenRefreshFailures counts the refreshes that failed, and may
	// succeed when tried again, since the last one that succeeded. A grant
	// the provider refused is not counted: the Authenticated condition
	// says ReauthRequired.
	// +optional
	TokenRefreshFailures int32 `json:"tokenRefreshFailures,omitempty"`
}

// OAuthConnectStatus is what the controller of an OAuth resource publishes
// for the webhook server's connect route, so that the webhook (which faces
// the internet) proves a connect link and builds the consent page's URL
// without any right to read Secrets in this namespace.
type OAuthConnectStatus struct {
	// ConnectSecretName is the Secret, owned by this object, whose key `url`
	// is the one-use OAuth connect link (key `token` is its token): open it in
	// a browser to grant access. Print it with
	// `kubectl get secret <name>-oauth-connect -o jsonpath='{.data.url}' | base64 -d`.
	// The link changes after each successful connect; to replace a grant that
	// still works, first set the switchboard.dev/reconnect annotation to a new
	// value.
	// +optional
	ConnectSecretName string `json:"connectSecretName,omitempty"`

	// ConnectTokenHash is the hex SHA-256 of the connect link's token, which
	// the webhook server compares a connect request's token with. The token
	// is 32 random bytes: the hash cannot be turned back into it.
	// +optional
	ConnectTokenHash string `json:"connectTokenHash,omitempty"`

	// ConnectExpiresAt is when the connect link stops starting a flow: an
	// hour after it was minted. It carries its token in the query string,
	// so it may land in access logs; it works once, and only until then.
	// Ten minutes later (a flow begun before the expiry can still finish)
	// the operator mints a new one: read the Secret again.
	// +optional
	ConnectExpiresAt *metav1.Time `json:"connectExpiresAt,omitempty"`

	// ClientID is the OAuth client's public identifier (key `client_id` of
	// the client Secret), which the consent page's URL carries anyway. It
	// is read again whenever the connect link is minted anew, or with the
	// switchboard.dev/requested-at annotation.
	// +optional
	ClientID string `json:"clientID,omitempty"`

	// ReconnectedFor is the switchboard.dev/reconnect value the stored grant
	// was written for: a connect request with the same annotation value is
	// refused while the grant works.
	// +optional
	ReconnectedFor string `json:"reconnectedFor,omitempty"`
}

// ReconcileStatus is the part of every Switchboard status that kstatus
// readers (kubectl wait, Flux, Argo CD) understand.
type ReconcileStatus struct {
	// ObservedGeneration is the metadata.generation the controller last
	// reconciled to completion. Until it equals metadata.generation the
	// conditions describe an older spec. It is -1 on a new object until the
	// controller has written its first status, so that kstatus (Flux,
	// kubectl wait) reads the object as in progress rather than done.
	// +kubebuilder:default=-1
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Reconciling and Stalled (kstatus), plus the
	// kind-specific conditions documented on each kind.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// LastHandledRequestedAt is the value of the switchboard.dev/requested-at
	// annotation the controller last acted on.
	// +optional
	LastHandledRequestedAt string `json:"lastHandledRequestedAt,omitempty"`
}

// GetReconcileStatus gives the shared status helper access to the common
// part of every kind's status.
func (in *ReconcileStatus) GetReconcileStatus() *ReconcileStatus { return in }

// StatusObject is implemented by every Switchboard kind; the shared status
// helper and the tests use it to read and write conditions the same way for
// all of them.
// +kubebuilder:object:generate=false
type StatusObject interface {
	GetGeneration() int64
	GetReconcileStatus() *ReconcileStatus
}
