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

package setup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// The webhook's client stores a route's record (a PaperSync) as the
// client would, answers a second create of it AlreadyExists and an
// invalid one Invalid, as the routes' answers need, and leaves the object
// as it was sent; every other kind is created and read back as usual.
func TestTheWebhooksClientStoresRecordsWithoutReadingThemBack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := env.Namespace("records")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := setup.WebhookCluster(ctx, env.Config, []string{ns}, []string{ns})
	if err != nil {
		t.Fatal(err)
	}
	c := cl.GetClient()

	ps := &v1alpha1.PaperSync{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "page-1", Labels: map[string]string{"app": "records"}},
		Spec: v1alpha1.PaperSyncSpec{IntegrationRef: v1alpha1.LocalObjectReference{Name: "research"}, PageID: "00000000000040008000000000000001",
			Link: "https://arxiv.org/abs/2301.12345", ArxivID: "2301.12345"}}
	sent := ps.DeepCopy()
	if err := c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	if ps.ResourceVersion != "" || ps.UID != "" {
		t.Fatalf("the record was read back: resourceVersion %q, uid %q", ps.ResourceVersion, ps.UID)
	}
	var stored v1alpha1.PaperSync
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ps), &stored); err != nil {
		t.Fatalf("the record is not stored: %v", err)
	}
	if stored.Spec != sent.Spec || stored.Labels["app"] != "records" {
		t.Fatalf("stored %+v %v, want what was sent: %+v", stored.Spec, stored.Labels, sent.Spec)
	}
	if err := c.Create(ctx, sent.DeepCopy()); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("the same record again: %v, want AlreadyExists", err)
	}
	bad := sent.DeepCopy()
	bad.Name, bad.Spec.ArxivID = "page-2", "not an arXiv id"
	if err := c.Create(ctx, bad); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "arxivID") {
		t.Fatalf("an invalid record: %v, want Invalid naming the field", err)
	}

	// Another kind is the client's own create, read back.
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "state"}, StringData: map[string]string{"k": "v"}}
	if err := c.Create(ctx, sec); err != nil || sec.ResourceVersion == "" {
		t.Fatalf("a Secret's create: %v, resourceVersion %q: want it read back", err, sec.ResourceVersion)
	}
}
