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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

func newKey(t *testing.T, name string) types.NamespacedName {
	t.Helper()
	ns, err := env.Namespace("life")
	if err != nil {
		t.Fatal(err)
	}
	return types.NamespacedName{Namespace: ns, Name: name}
}

// update edits a stock, retrying when the controller's status write got in
// between the read and the write.
func update(t *testing.T, key types.NamespacedName, edit func(*v1alpha1.SlideStock)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &v1alpha1.SlideStock{}
		if err := env.Client.Get(context.Background(), key, s); err != nil {
			return err
		}
		edit(s)
		return env.Client.Update(context.Background(), s)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func request(t *testing.T, key types.NamespacedName, value string) {
	t.Helper()
	update(t, key, func(s *v1alpha1.SlideStock) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[v1alpha1.RequestedAtAnnotation] = value
	})
}

func TestPendingToReadyIsOneStatusWrite(t *testing.T) {
	box.ClearFaults()
	key := newKey(t, "one-write")
	create(t, key, atomURL)
	waitFor(t, key, "Ready", func(s *v1alpha1.SlideStock) bool { return s.Status.Phase == v1alpha1.SlideReady })
	if n := hook.writesOf(key); n != 1 {
		t.Fatalf("%d status writes from Pending to Ready, want 1", n)
	}
	// A stray reconcile after Ready (its own status write coming back as
	// an event, say) must write nothing. Rather than wait a while and hope
	// it came, edit the memo: the controller handles a stock's events in
	// order, so once it has observed the new generation, with exactly one
	// write, every event before the edit has been handled too.
	update(t, key, func(s *v1alpha1.SlideStock) { s.Spec.Memo = "barrier" })
	waitFor(t, key, "the memo edit observed", func(s *v1alpha1.SlideStock) bool { return s.Generation == 2 })
	if n := hook.writesOf(key); n != 2 {
		t.Fatalf("%d status writes for Pending to Ready and one memo edit, want 2", n)
	}
}

func TestAFailedStatusWriteIsRetried(t *testing.T) {
	box.ClearFaults()
	box.ResetCalls()
	key := newKey(t, "db-failure")
	hook.failNext(key, 2)
	create(t, key, docsURL)
	s := waitFor(t, key, "Ready", func(s *v1alpha1.SlideStock) bool { return s.Status.Phase == v1alpha1.SlideReady })
	// Each lost write lost its fetch too: the fetch is repeated, as a
	// Cloudflare Queue message would be redelivered.
	if n := box.Calls(sandbox.DocswellOEmbed); n != 3 {
		t.Fatalf("docswell called %d times, want 3 (two lost writes, one kept)", n)
	}
	if s.Status.EmbedURL != docsEmbed {
		t.Fatalf("embed %q", s.Status.EmbedURL)
	}
}

func TestRequestedAtRefetchesAReadyStock(t *testing.T) {
	box.ClearFaults()
	key := newKey(t, "refetch")
	create(t, key, atomURL)
	waitFor(t, key, "Ready", func(s *v1alpha1.SlideStock) bool { return s.Status.Phase == v1alpha1.SlideReady })
	box.ResetCalls()
	sd.AddDeck(sandbox.SpeakerDeckDeck{User: "jnunemaker", Slug: "atom", Title: "Atom (2nd edition)", AuthorName: "John Nunemaker",
		PlayerID: "31f86a9069ae0132dede22511952b5a3"})
	defer sd.AddDeck(sandbox.SpeakerDeckDeck{User: "jnunemaker", Slug: "atom", Title: "Atom", AuthorName: "John Nunemaker",
		PlayerID: "31f86a9069ae0132dede22511952b5a3"})
	request(t, key, "2026-11-21T10:00:00Z")
	s := waitFor(t, key, "re-fetched", func(s *v1alpha1.SlideStock) bool {
		return s.Status.LastHandledRequestedAt == "2026-11-21T10:00:00Z" && s.Status.Phase == v1alpha1.SlideReady
	})
	if s.Status.Title != "Atom (2nd edition)" || box.Calls(sandbox.SpeakerDeckOEmbed) != 1 || s.Status.Attempts != 1 {
		t.Fatalf("title %q, calls %d, attempts %d", s.Status.Title, box.Calls(sandbox.SpeakerDeckOEmbed), s.Status.Attempts)
	}
}

func TestRequestedAtRetriesAFailedStock(t *testing.T) {
	box.ClearFaults()
	key := newKey(t, "retry-failed")
	slug := "upload-" + key.Namespace // unique, so the test can run again in one process
	create(t, key, "https://speakerdeck.com/late/"+slug)
	waitFor(t, key, "Failed", func(s *v1alpha1.SlideStock) bool { return s.Status.Phase == v1alpha1.SlideFailed })
	// The owner publishes the deck, and a person asks again (seed 001 §8.2).
	sd.AddDeck(sandbox.SpeakerDeckDeck{User: "late", Slug: slug, Title: "Now public", AuthorName: "Late", PlayerID: "cafe"})
	request(t, key, "1")
	s := waitFor(t, key, "Ready", func(s *v1alpha1.SlideStock) bool { return s.Status.Phase == v1alpha1.SlideReady })
	if s.Status.Title != "Now public" || s.Status.LastError != "" || status.Get(s, v1alpha1.StalledCondition) != nil {
		t.Fatalf("status %+v", s.Status)
	}
}

func TestChangingTheURLStartsOver(t *testing.T) {
	box.ClearFaults()
	key := newKey(t, "moved")
	create(t, key, "https://speakerdeck.com/nobody/nothing")
	waitFor(t, key, "Failed", func(s *v1alpha1.SlideStock) bool { return s.Status.Phase == v1alpha1.SlideFailed })
	update(t, key, func(s *v1alpha1.SlideStock) { s.Spec.URL = gURL })
	s := waitFor(t, key, "Ready on the new URL", func(s *v1alpha1.SlideStock) bool {
		return s.Status.Phase == v1alpha1.SlideReady && s.Status.ObservedURL == gURL
	})
	if s.Status.Provider != v1alpha1.ProviderGoogleSlides || s.Status.Attempts != 1 || s.Status.CanonicalURL != "https://docs.google.com/presentation/d/"+gid {
		t.Fatalf("status %+v", s.Status)
	}
}

func TestAMemoEditKeepsTheMetadataAndCatchesUpTheGeneration(t *testing.T) {
	box.ClearFaults()
	key := newKey(t, "memo")
	create(t, key, docsURL)
	waitFor(t, key, "Ready", func(s *v1alpha1.SlideStock) bool { return s.Status.Phase == v1alpha1.SlideReady })
	box.ResetCalls()
	update(t, key, func(s *v1alpha1.SlideStock) { s.Spec.Memo = "for Friday" })
	s := waitFor(t, key, "generation observed", func(s *v1alpha1.SlideStock) bool { return s.Generation == 2 })
	if box.Calls(sandbox.DocswellOEmbed) != 0 || s.Status.Phase != v1alpha1.SlideReady {
		t.Fatalf("a memo edit re-fetched (%d calls) or changed the phase (%s)", box.Calls(sandbox.DocswellOEmbed), s.Status.Phase)
	}
}

func TestSuspendedStocksAreLeftAlone(t *testing.T) {
	box.ClearFaults()
	box.ResetCalls()
	key := newKey(t, "suspended")
	s := &v1alpha1.SlideStock{}
	s.Name, s.Namespace = key.Name, key.Namespace
	s.Spec.URL, s.Spec.Suspend = atomURL, true
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	// The controller has seen the stock once it reports it suspended (Ready
	// False, reason Suspended, this generation observed); only then does
	// "nothing was fetched" mean something.
	s = waitFor(t, key, "reported Suspended", func(s *v1alpha1.SlideStock) bool {
		c := status.Get(s, v1alpha1.ReadyCondition)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == v1alpha1.SuspendedReason
	})
	if s.Status.Phase == v1alpha1.SlideReady || s.Status.EmbedURL != "" || box.Calls(sandbox.SpeakerDeckOEmbed) != 0 {
		t.Fatalf("a suspended stock was fetched (%d calls): %+v", box.Calls(sandbox.SpeakerDeckOEmbed), s.Status)
	}
	update(t, key, func(s *v1alpha1.SlideStock) { s.Spec.Suspend = false })
	waitFor(t, key, "Ready after resuming", func(s *v1alpha1.SlideStock) bool { return s.Status.Phase == v1alpha1.SlideReady })
}
