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

package slidestock_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// A SlideStock keeps nothing upstream: restored without its status (a
// Velero restore), or deleted and applied again (GitOps), it fetches its
// metadata again and is Ready with what it showed before, with no
// person's help (issue 35 §3).
func TestARestoredOrReappliedStockIsReadyAgainWithItsMetadata(t *testing.T) {
	box.ClearFaults()
	ctx := context.Background()
	key := newKey(t, "restored")
	create(t, key, atomURL)
	before := waitFor(t, key, "Ready", func(s *v1alpha1.SlideStock) bool { return s.Status.Phase == v1alpha1.SlideReady })
	manifest := &v1alpha1.SlideStock{}
	manifest.Name, manifest.Namespace, manifest.Spec = key.Name, key.Namespace, before.Spec

	b, err := testenv.TakeBackup(ctx, env.Client, before.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Replay(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	same := func(what string) {
		t.Helper()
		after := waitFor(t, key, what, func(s *v1alpha1.SlideStock) bool {
			return s.UID != before.UID && s.Status.Phase == v1alpha1.SlideReady && s.Status.ObservedGeneration == s.Generation
		})
		if after.Status.CanonicalURL != before.Status.CanonicalURL || after.Status.Title != before.Status.Title || after.Status.EmbedURL != before.Status.EmbedURL {
			t.Fatalf("%s: status %+v, want the metadata it had: %+v", what, after.Status, before.Status)
		}
	}
	same("Ready again after the restore")
	if err := testenv.Reapply(ctx, env.Client, manifest, time.Minute); err != nil {
		t.Fatal(err)
	}
	same("Ready again after the re-apply")
}
