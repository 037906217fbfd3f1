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

package main

import (
	"context"

	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
)

// walk takes make demo's walk through every kind against the release:
// every browser step, Automation, push notification, ingest and share
// link reaches the webhook at its node port (publicURL), and the manager
// in its Pod does the rest.
func (e *e2e) walk(ctx context.Context) error {
	d := scenario.Demo{C: e.c, SandboxURL: e.sandboxURL, WebhookURL: publicURL, S3: e.s3}
	if err := d.Prepare(ctx); err != nil {
		return err
	}
	return d.Run(ctx, nil)
}
