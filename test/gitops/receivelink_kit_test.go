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

package gitops_test

import (
	"context"
	"maps"
)

// The ReceiveLink sample's kit: its storage credentials, and the files
// it and the repaired link share (as the application that stores prizes
// would have uploaded them). S3 is a real server (versitygw), not an
// emulator.
var _ = declareKit(kit{secrets: func(ctx context.Context, f *fixture) (map[string]map[string]string, error) {
	for _, key := range []string{"user_prize/owner-1/alice/prize.zip", "user_prize/owner-1/bob/prize.zip"} {
		if err := s3.Blob.Put(ctx, s3.Object(sampleBucket, key), []byte("a prize"), "application/zip"); err != nil {
			return nil, err
		}
	}
	creds := map[string]string{}
	for k, v := range maps.All(s3.Credentials.SecretData()) {
		creds[k] = string(v)
	}
	return map[string]map[string]string{"blob-credentials": creds}, nil
}})
