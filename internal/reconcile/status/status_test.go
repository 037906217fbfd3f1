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

package status_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func newStock(t *testing.T) *v1alpha1.SlideStock {
	t.Helper()
	ns, err := env.Namespace("status")
	if err != nil {
		t.Fatal(err)
	}
	s := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Name: "deck", Namespace: ns}}
	s.Spec.URL = "https://speakerdeck.com/jnunemaker/atom"
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMarkersFollowKstatus(t *testing.T) {
	s := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	s.Status.ObservedGeneration = 2

	status.MarkReconciling(s, v1alpha1.ProgressingReason, "fetching oEmbed")
	if c := status.Get(s, v1alpha1.ReadyCondition); c == nil || c.Status != metav1.ConditionUnknown || c.ObservedGeneration != 3 {
		t.Fatalf("Ready while reconciling = %+v", c)
	}
	if !status.IsTrue(s, v1alpha1.ReconcilingCondition) || s.Status.ObservedGeneration != 2 {
		t.Fatal("reconciling must not claim the generation")
	}

	status.MarkRetrying(s, v1alpha1.UpstreamUnavailableReason, "speakerdeck answered 503")
	if c := status.Get(s, v1alpha1.ReadyCondition); c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.UpstreamUnavailableReason {
		t.Fatalf("Ready while retrying = %+v", c)
	}
	// A later Reconciling keeps the informative Ready=False.
	status.MarkReconciling(s, v1alpha1.ProgressingReason, "retrying")
	if c := status.Get(s, v1alpha1.ReadyCondition); c.Status != metav1.ConditionFalse {
		t.Fatalf("Ready lost its failure: %+v", c)
	}

	status.MarkStalled(s, v1alpha1.UpstreamRejectedReason, "speakerdeck answered 404")
	if !status.IsTrue(s, v1alpha1.StalledCondition) || status.Get(s, v1alpha1.ReconcilingCondition) != nil || s.Status.ObservedGeneration != 3 {
		t.Fatalf("stalled: %+v gen %d", s.Status.Conditions, s.Status.ObservedGeneration)
	}

	status.MarkReady(s, v1alpha1.SucceededReason, "embed URL known")
	if !status.IsTrue(s, v1alpha1.ReadyCondition) || len(s.Status.Conditions) != 1 {
		t.Fatalf("ready: %+v", s.Status.Conditions)
	}
}

func TestRequestedAtIsHandledOnce(t *testing.T) {
	s := &v1alpha1.SlideStock{}
	if _, ok := status.RequestedAt(s); ok {
		t.Fatal("no annotation, yet a request")
	}
	s.Annotations = map[string]string{v1alpha1.RequestedAtAnnotation: "1763800000"}
	v, ok := status.RequestedAt(s)
	if !ok || v != "1763800000" {
		t.Fatalf("RequestedAt = %q %v", v, ok)
	}
	status.AcknowledgeRequest(s, v)
	if _, ok := status.RequestedAt(s); ok {
		t.Fatal("an acknowledged request is asked again")
	}
}

func TestPatcherWritesOnceAndOnlyOnChange(t *testing.T) {
	ctx := context.Background()
	s := newStock(t)
	p := status.NewPatcher(env.Client, s)

	if err := p.Patch(ctx, s); err != nil || p.Writes != 0 {
		t.Fatalf("unchanged status: err %v, writes %d", err, p.Writes)
	}
	rv := s.ResourceVersion

	s.Status.Phase = v1alpha1.SlideReady
	s.Status.Title = "Atom"
	status.MarkReady(s, v1alpha1.SucceededReason, "ok")
	if err := p.Patch(ctx, s); err != nil || p.Writes != 1 {
		t.Fatalf("changed status: err %v, writes %d", err, p.Writes)
	}
	if s.ResourceVersion == rv {
		t.Fatal("patch did not update the object in memory")
	}

	// Setting the same condition again changes nothing and writes nothing.
	status.MarkReady(s, v1alpha1.SucceededReason, "ok")
	if err := p.Patch(ctx, s); err != nil || p.Writes != 1 {
		t.Fatalf("same status again: err %v, writes %d", err, p.Writes)
	}

	var got v1alpha1.SlideStock
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(s), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Title != "Atom" || !status.IsTrue(&got, v1alpha1.ReadyCondition) || got.Status.ObservedGeneration != got.Generation {
		t.Fatalf("stored status = %+v", got.Status)
	}
}

// The Patcher compares statuses as the API server stores them: a time
// set again within its second is no change, a new second, a new field and
// a new condition each are, and the stored object holds each written one.
func TestPatcherComparesAsStored(t *testing.T) {
	ctx := context.Background()
	s := newStock(t)
	p := status.NewPatcher(env.Client, s)

	at := time.Date(2026, 11, 29, 10, 0, 7, 100_000_000, time.UTC)
	s.Status.LastFetchedAt = &metav1.Time{Time: at}
	if err := p.Patch(ctx, s); err != nil || p.Writes != 1 {
		t.Fatalf("a time set: err %v, writes %d", err, p.Writes)
	}
	steps := []struct {
		name   string
		change func()
		writes int
	}{
		{"the same second again", func() { s.Status.LastFetchedAt = &metav1.Time{Time: at.Add(800 * time.Millisecond)} }, 1},
		{"the same instant in another zone", func() { s.Status.LastFetchedAt = &metav1.Time{Time: at.In(time.FixedZone("JST", 9*3600))} }, 1},
		{"the next second", func() { s.Status.LastFetchedAt = &metav1.Time{Time: at.Add(time.Second)} }, 2},
		{"a new field", func() { s.Status.Title = "Atom" }, 3},
		{"an empty list for a missing one", func() { s.Status.Conditions = []metav1.Condition{} }, 3},
		{"a new condition", func() { status.MarkReady(s, v1alpha1.SucceededReason, "ok") }, 4},
	}
	for _, st := range steps {
		st.change()
		if err := p.Patch(ctx, s); err != nil || p.Writes != st.writes {
			t.Fatalf("%s: err %v, writes %d, want %d", st.name, err, p.Writes, st.writes)
		}
	}
	var got v1alpha1.SlideStock
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(s), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.LastFetchedAt == nil || got.Status.LastFetchedAt.Unix() != at.Unix()+1 || got.Status.Title != "Atom" || !status.IsTrue(&got, v1alpha1.ReadyCondition) {
		t.Fatalf("stored status = %+v", got.Status)
	}
}

func TestPatcherKeepsFieldsAnotherWriterSet(t *testing.T) {
	// The webhook server records resolves in a ReceiveLink's status while
	// the controller owns its conditions: neither may erase the other.
	ctx := context.Background()
	ns, err := env.Namespace("status")
	if err != nil {
		t.Fatal(err)
	}
	l := &v1alpha1.ReceiveLink{ObjectMeta: metav1.ObjectMeta{Name: "l", Namespace: ns}}
	l.Spec.Blob = v1alpha1.BlobLocation{Bucket: "b-1", Key: "k", CredentialsSecretRef: v1alpha1.SecretReference{Name: "s"}}
	l.Spec.TTL = &metav1.Duration{Duration: 3600e9}
	if err := env.Client.Create(ctx, l); err != nil {
		t.Fatal(err)
	}
	p := status.NewPatcher(env.Client, l)

	other := l.DeepCopy()
	before := other.DeepCopy()
	other.Status.ResolveCount = 5
	if err := env.Client.Status().Patch(ctx, other, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}

	l.Status.Phase = v1alpha1.LinkActive
	status.MarkReady(l, v1alpha1.SucceededReason, "live")
	if err := p.Patch(ctx, l); err != nil {
		t.Fatal(err)
	}
	var got v1alpha1.ReceiveLink
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(l), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.ResolveCount != 5 || got.Status.Phase != v1alpha1.LinkActive {
		t.Fatalf("status = %+v", got.Status)
	}
}

// An annotation-carried event passes the filter when its annotation
// changed, and nothing else does: a status write, another annotation.
func TestAnnotationChangedPassesOnlyItsAnnotation(t *testing.T) {
	obj := func(notification, other string) *v1alpha1.CalendarWatch {
		return &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			v1alpha1.CalendarNotificationAnnotation: notification, "other": other}}}
	}
	p := predicate.Or(status.SpecOrRequest(), status.AnnotationChanged(v1alpha1.CalendarNotificationAnnotation))
	for _, c := range []struct {
		name     string
		old, new *v1alpha1.CalendarWatch
		want     bool
	}{
		{"a new notification", obj("ch/1/exists", ""), obj("ch/2/exists", ""), true},
		{"the same notification", obj("ch/1/exists", ""), obj("ch/1/exists", ""), false},
		{"another annotation", obj("ch/1/exists", "a"), obj("ch/1/exists", "b"), false},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: c.old, ObjectNew: c.new}); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	req := obj("", "")
	req.Annotations[v1alpha1.RequestedAtAnnotation] = "now"
	if !p.Update(event.UpdateEvent{ObjectOld: obj("", ""), ObjectNew: req}) {
		t.Error("a requested-at did not pass")
	}
}
