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

package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/cli"
)

// TestEventsListsTheObjectsEventsOldestFirst: core Events and
// events.k8s.io Events of the object, in the order they happened; not
// those of another object.
func TestEventsListsTheObjectsEventsOldestFirst(t *testing.T) {
	ns := namespace(t)
	deck := create(t, ns, "deck", &v1alpha1.SlideStock{})
	ctx := context.Background()
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	core := func(name, reason, message string, at time.Time, about client.Object, kind string) {
		t.Helper()
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: name},
			InvolvedObject: corev1.ObjectReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: kind, Namespace: ns, Name: about.GetName(), UID: about.GetUID()},
			Reason:         reason, Message: message, Type: corev1.EventTypeWarning,
			FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at), Count: 2,
			Source: corev1.EventSource{Component: "switchboard"},
		}
		if err := env.Client.Create(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	// Created out of order: the listing sorts them.
	core("c-third", "UpstreamRejected", "SpeakerDeck answered 404", base.Add(3*time.Minute), deck, "SlideStock")
	core("a-first", "UpstreamUnavailable", "SpeakerDeck answered 503", base.Add(time.Minute), deck, "SlideStock")
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b-second"},
		EventTime:  metav1.NewMicroTime(base.Add(2 * time.Minute)), ReportingController: "switchboard.dev/manager", ReportingInstance: "manager-0",
		Action: "Fetch", Reason: "Fetched", Note: "fetched the deck", Type: corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "SlideStock", Namespace: ns, Name: deck.Name, UID: deck.UID},
	}
	if err := env.Client.Create(ctx, ev); err != nil {
		t.Fatal(err)
	}
	other := create(t, ns, "other", &v1alpha1.SlideStock{})
	core("d-other", "OtherReason", "about another deck", base, other, "SlideStock")
	ni := create(t, ns, "deck", &v1alpha1.NotionIntegration{})
	core("e-same-name", "NotionReason", "about a NotionIntegration named deck", base, ni, "NotionIntegration")

	now := func() time.Time { return base.Add(63 * time.Minute) }
	r := plugin(t, cli.Options{Now: now}, ns, "events", "slidestock/deck").ok(t)
	ls := lines(r.stdout)
	if len(ls) != 4 {
		t.Fatalf("%d lines, want a header and 3 events:\n%s", len(ls), r.stdout)
	}
	for i, want := range []string{"SpeakerDeck answered 503", "fetched the deck", "SpeakerDeck answered 404"} {
		if !strings.HasSuffix(ls[i+1], want) {
			t.Errorf("event %d is %q, want the one ending %q", i+1, ls[i+1], want)
		}
	}
	row(t, ls[1], "62m", "Warning", "UpstreamUnavailable", "slidestock/deck", "2")
	row(t, ls[2], "61m", "Normal", "Fetched", "slidestock/deck", "1")

	r = run(t, ns, "events", "notion/nothing").ok(t)
	if r.stdout != "" || !strings.Contains(r.stderr, "No events found for notionintegration/nothing") {
		t.Errorf("no events: stdout %q, stderr %q", r.stdout, r.stderr)
	}
}
