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
	// DataBlobDeleted is set ("true") once the blob is deleted: the object
	// is then a tombstone that makes the short link answer 410 until the
	// link itself is deleted.
	DataBlobDeleted = "blob_deleted"
)

// Keys of the share Secret, owned by the link in its namespace.
const (
	ShareShortToken = "short_token"
	ShareLongToken  = "long_token"
	ShareURL        = "share_url"
	ShareKeyID      = "key_id"
	ShareObject     = "token_object"
)

// ResolvePath is the public path of a short link.
func ResolvePath(short string) string { return "/r/" + short }
