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

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
)

// walkDemo is the run's walk: make demo's, on the previous release
// first (scenario.Demo.Previous), every request through the webhook's
// node port (publicURL).
func (e *e2e) walkDemo() *scenario.Demo {
	if e.demo == nil {
		e.demo = &scenario.Demo{C: e.c, SandboxURL: e.sandboxURL, WebhookURL: publicURL, S3: e.s3, Previous: true}
	}
	return e.demo
}

// walk takes make demo's walk through every kind the previous release
// has: every browser step, Automation, push notification, ingest and
// share link reaches the webhook at its node port, and the manager in its
// Pod does the rest.
func (e *e2e) walk(ctx context.Context) error {
	d := e.walkDemo()
	if err := d.Prepare(ctx); err != nil {
		return err
	}
	return d.Run(ctx, nil)
}

// signUp takes the walk's step the previous release could not: a
// researcher signs up through the NotionSignup sample, applied now that
// the upgraded release serves the kind; then every object is Ready. The
// sample's database is renamed: the walk's hand-made integration already
// has an "ArXiv Papers" in the same workspace, which the sign-up's
// integration would find and share (each integration adopts its
// database by name), and the load's events would then fill each page
// once per integration.
func (e *e2e) signUp(ctx context.Context) error {
	d := e.walkDemo()
	if err := d.ApplySample(ctx, "NotionSignup", func(u *unstructured.Unstructured) error {
		return unstructured.SetNestedField(u.Object, "ArXiv Papers (signed up)", "spec", "template", "database", "name")
	}); err != nil {
		return err
	}
	if err := d.SignUp(ctx); err != nil {
		return err
	}
	return e.allReady(ctx)
}
