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

package slidestock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/oembed"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
	"github.com/switchboard-dev/switchboard/internal/upstream/slides"
)

// Event reasons.
const (
	// FetchFailedEvent: a permanent error failed the stock at once.
	FetchFailedEvent = "FetchFailed"
	// RetriesExhaustedEvent: every attempt failed transiently; the Event is
	// the dead-letter record (seed 001 §7.4): it holds the URL and the last
	// error.
	RetriesExhaustedEvent = "RetriesExhausted"
	// InvalidURLEvent: the URL is not a presentation.
	InvalidURLEvent = "InvalidURL"
)

// startOver resets the status when the URL changed or a person asked for a
// fresh fetch (the requested-at annotation).
func (r *Reconciler) startOver(_ context.Context, obj *v1alpha1.SlideStock, run *runner.Run) runner.Outcome {
	if obj.Status.ObservedURL == obj.Spec.URL && !run.Requested {
		return runner.Continue()
	}
	st := &obj.Status
	st.ObservedURL = obj.Spec.URL
	st.Phase = v1alpha1.SlidePending
	st.Provider, st.CanonicalURL, st.Title, st.AuthorName, st.EmbedURL, st.ThumbnailURL = "", "", "", "", "", ""
	st.Attempts, st.LastError = 0, ""
	status.MarkReconciling(obj, v1alpha1.ProgressingReason, "fetching metadata")
	return runner.Continue()
}

// settled ends the reconcile of a stock that is Ready or Failed for good.
// A stock whose retries ran out is looked at again on the long Recheck
// schedule: an upstream outage longer than the seed's few seconds heals by
// itself, as cert-manager retries a failed issuance.
func (r *Reconciler) settled(_ context.Context, obj *v1alpha1.SlideStock, run *runner.Run) runner.Outcome {
	switch obj.Status.Phase {
	case v1alpha1.SlideReady:
		// A memo edit bumps the generation; the metadata stands, and the
		// runner marks it observed.
		return runner.Continue()
	case v1alpha1.SlideFailed:
		c := status.Get(obj, v1alpha1.StalledCondition)
		if c != nil {
			status.MarkStalled(obj, c.Reason, c.Message) // a memo edit: observed
		}
		if c == nil || c.Reason != v1alpha1.RetriesExhaustedReason || obj.Status.LastFetchedAt == nil {
			return runner.Done() // permanent: a person changes the URL or asks again
		}
		due := obj.Status.LastFetchedAt.Add(r.recheckDelay(obj))
		if run.Now.Before(due) {
			return runner.Wait(due.Sub(run.Now))
		}
	}
	return runner.Continue()
}

// recheckDelay is the un-jittered wait before recheck number n (the
// runner jitters the requeue), so that each reconcile computes the same
// deadline.
func (r *Reconciler) recheckDelay(obj *v1alpha1.SlideStock) time.Duration {
	s := r.Recheck
	s = s.Exact()
	return s.Delay(int(obj.Status.Attempts) - MaxAttempts + 1)
}

// fetch makes one attempt (seed 001 §7): permanent errors fail at once,
// transient ones are retried on the schedule, then Failed with the
// dead-letter Event, then rechecked.
func (r *Reconciler) fetch(ctx context.Context, obj *v1alpha1.SlideStock, _ *runner.Run) runner.Outcome {
	if obj.Status.Phase == v1alpha1.SlideReady {
		return runner.Continue()
	}
	ref, err := slides.Parse(obj.Spec.URL)
	if err != nil {
		// Admission's CEL rule lets through what the parser refuses only
		// for URLs that look like a provider's but are no presentation.
		r.fail(obj, InvalidURLEvent, err.Error())
		return runner.Stall(v1alpha1.InvalidSpecReason, err)
	}
	st := &obj.Status
	rechecking := st.Phase == v1alpha1.SlideFailed
	if !rechecking {
		st.Phase = v1alpha1.SlidePending
	}
	st.Provider, st.CanonicalURL = v1alpha1.SlideProvider(ref.Provider), ref.CanonicalURL
	st.Attempts++
	meta, err := r.Fetcher.Fetch(ctx, ref)
	now := metav1.NewTime(r.Clock.Now())
	st.LastFetchedAt = &now
	if err == nil {
		stocked(obj, meta)
		return runner.Continue()
	}
	st.LastError = err.Error()
	switch {
	case outbound.IsPermanent(err):
		r.fail(obj, FetchFailedEvent, err.Error())
		return runner.Stall(v1alpha1.UpstreamRejectedReason, err)
	case rechecking:
		// Still failing: stays Failed (the dead-letter Event was sent when
		// the retries ran out) and is looked at again later.
		msg := fmt.Sprintf("recheck %d failed; last error: %v", int(st.Attempts)-MaxAttempts, err)
		status.MarkStalled(obj, v1alpha1.RetriesExhaustedReason, msg)
		return runner.Wait(r.recheckDelay(obj))
	case st.Attempts >= MaxAttempts:
		msg := fmt.Sprintf("gave up on %s after %d attempts; last error: %v", ref.CanonicalURL, st.Attempts, err)
		r.fail(obj, RetriesExhaustedEvent, msg)
		return runner.Stall(v1alpha1.RetriesExhaustedReason, errors.New(msg)).RecheckAfter(r.recheckDelay(obj))
	}
	delay := r.Retries.After(int(st.Attempts), err)
	msg := fmt.Sprintf("attempt %d of %d: %v; retrying in %s", st.Attempts, MaxAttempts, err, delay.Round(100*time.Millisecond))
	return runner.Retry(v1alpha1.UpstreamUnavailableReason, errors.New(msg), delay)
}

// stocked records the metadata; the runner then marks the stock Ready.
func stocked(obj *v1alpha1.SlideStock, m oembed.Metadata) {
	st := &obj.Status
	st.Phase = v1alpha1.SlideReady
	st.Title, st.AuthorName, st.EmbedURL, st.ThumbnailURL = m.Title, m.AuthorName, m.EmbedURL, m.ThumbnailURL
	st.LastError = ""
}

func readyMessage(obj *v1alpha1.SlideStock) string {
	return "embed URL from " + providerName(obj.Status.Provider)
}

// fail marks the stock Failed for good and records a Warning Event with
// the URL and the error.
func (r *Reconciler) fail(obj *v1alpha1.SlideStock, eventReason, message string) {
	st := &obj.Status
	st.Phase = v1alpha1.SlideFailed
	st.LastError = message
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, eventReason, "Fetch",
			"%s: %s", obj.Spec.URL, truncate(message, 900))
	}
}

func providerName(p v1alpha1.SlideProvider) string {
	switch p {
	case v1alpha1.ProviderSpeakerDeck:
		return "SpeakerDeck"
	case v1alpha1.ProviderDocswell:
		return "Docswell"
	case v1alpha1.ProviderGoogleSlides:
		return "Google Slides"
	}
	return string(p)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
