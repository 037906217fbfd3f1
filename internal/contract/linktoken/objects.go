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

package linktoken

import "github.com/switchboard-dev/switchboard/internal/capability"

// The objects of a link outside its own namespace, shared by the controller
// that writes them and the webhook that reads them.

// Labels and annotations of a short-token object (a Secret in the
// operator's namespace named ObjectName(short): seed 003's
// `receive:token:{short}` and `receive:edge:meta:{id}` in one object).
const (
	// TokenLabel is "true" on every short-token object, so the sweep lists
	// them and the caches hold them.
	TokenLabel = "switchboard.dev/receive-token"
	// LinkUIDLabel is the UID of the link the object belongs to.
	LinkUIDLabel = "switchboard.dev/receive-link-uid"
)

// Data keys of a short-token object. Everything but the long token is what
// the sweep needs to delete a blob whose link is gone (the seed's
// `receive:edge:meta:{id}`: blob_name, expires_at).
const (
	DataLongToken   = "long_token"
	DataKeyID       = "key_id"
	DataExpiresAt   = "expires_at" // RFC 3339
	DataNamespace   = "link_namespace"
	DataName        = "link_name"
	DataBucket      = "bucket"
	DataKey         = "key"
	DataRegion      = "region"
	DataCredentials = "credentials_secret" // in DataNamespace
	DataPolicy      = "deletion_policy"
	// DataKeySecret names the key Secret (in DataNamespace) the long token
	// was sealed with; empty for the default keys. The webhook opens the
	// long token with that Secret's mirror, KeysMirrorName.
	DataKeySecret = "key_secret"
	// DataAccessKeyID and DataSecretAccessKey are a copy of the link's
	// storage credentials (named as in the credentials Secret), for the
	// webhook to presign with: it holds no right to read the link's own
	// namespace. They go with the long token at expiry.
	DataAccessKeyID     = "access_key_id"
	DataSecretAccessKey = "secret_access_key"
	// DataBlobDeleted is set ("true") once the blob is deleted: the object
	// is then a tombstone that makes the short link answer 410 until the
	// link itself is deleted.
	DataBlobDeleted = "blob_deleted"
)

// A key mirror is a copy, in the operator's namespace, of a key Secret
// that links name in spec.encryptionKeySecretRef: the webhook faces the
// internet and reads no Secret in the links' namespaces, so the manager
// copies each key Secret in use next to the short-token objects. It is
// never the object that holds a long token: whoever reads one of them
// alone cannot open a link.
const (
	// KeysMirrorLabel is "true" on every key mirror.
	KeysMirrorLabel = "switchboard.dev/receive-keys"
	// KeysSourceAnnotation is the NAMESPACE/NAME of the mirrored Secret.
	KeysSourceAnnotation = "switchboard.dev/receive-keys-source"
	// UnusedSinceAnnotation marks a mirror that no live link used at a
	// sweep; the next sweep deletes it if it is still unused and
	// unchanged.
	UnusedSinceAnnotation = "switchboard.dev/unused-since"
)

// KeysMirrorName is the name of the mirror of the key Secret name in
// namespace: a hash of both, so that no two sources share a mirror.
func KeysMirrorName(namespace, name string) string {
	return capability.ChildName("rkeys", namespace+"/"+name, 40)
}

// Keys of the share Secret, owned by the link in its namespace.
const (
	ShareShortToken = "short_token"
	ShareLongToken  = "long_token"
	ShareURL        = "share_url"
	ShareKeyID      = "key_id"
	ShareObject     = "token_object"
	// ShareCreatedAt (RFC 3339) is when the link that minted the share
	// Secret was created: spec.ttl counts from it. A restore (Velero) or
	// an export and re-create gives the ReceiveLink a new creation time;
	// the share Secret it brings back keeps the original, so the link
	// keeps its expiry.
	ShareCreatedAt = "created_at"
)

// ResolvePath is the public path of a short link.
func ResolvePath(short string) string { return "/r/" + short }
