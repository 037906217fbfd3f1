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

package blob

import "errors"

// The keys of a credentials Secret (spec.blob.credentialsSecretRef). The
// ReceiveLink controller reads the Secret; this package is handed the
// Credentials.
const (
	KeyAccessKeyID     = "access_key_id"
	KeySecretAccessKey = "secret_access_key"
)

// ErrCredentialsIncomplete means the credentials lack a key or hold an
// empty one: a person must fix the Secret they come from.
var ErrCredentialsIncomplete = errors.New("S3 credentials Secret is incomplete")

// SecretData is the credentials as a Secret's data, for the demo and tests
// that create the Secret a ReceiveLink names.
func (c Credentials) SecretData() map[string][]byte {
	return map[string][]byte{KeyAccessKeyID: []byte(c.AccessKeyID), KeySecretAccessKey: []byte(c.SecretAccessKey)}
}
