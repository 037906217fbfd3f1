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
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oembed"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/slides"
	"github.com/switchboard-dev/switchboard/internal/status"
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

func (r *Reconciler) reconcileNormal(ctx context.Context, obj *v1alpha1.SlideStock) (ctrl.Result, error) {
	r.startOverIfAsked(obj)

	switch obj.Status.Phase {
	case v1alpha1.SlideReady:
		// A memo edit bumps the generation; the metadata stands.
		status.MarkReady(obj, v1alpha1.SucceededReason, readyMessage(obj))
		return ctrl.Result{}, nil
	case v1alpha1.SlideFailed:
		if c := status.Get(obj, v1alpha1.StalledCondition); c != nil {
			status.MarkStalled(obj, c.Reason, c.Message)
		}
		return ctrl.Result{}, nil
	}

	ref, err := slides.Parse(obj.Spec.URL)
	if err != nil {
		// Admission rules passed it, but the parser is stricter: a person
		// must change the URL.
		r.fail(obj, v1alpha1.InvalidSpecReason, InvalidURLEvent, err.Error())
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	return r.fetch(ctx, obj, ref)
}

// startOverIfAsked resets the stock to Pending when spec.url changed or a
// person asked for a re-fetch with the requested-at annotation (seed 001
// §8.2: failed → pending).
func (r *Reconciler) startOverIfAsked(obj *v1alpha1.SlideStock) {
	reset := obj.Status.ObservedURL != obj.Spec.URL
	if v, ok := status.RequestedAt(obj); ok {
		status.AcknowledgeRequest(obj, v)
		reset = true
	}
	if !reset {
		return
	}
	st := &obj.Status
	st.ObservedURL = obj.Spec.URL
	st.Phase = v1alpha1.SlidePending
	st.Provider, st.CanonicalURL, st.Title, st.AuthorName, st.EmbedURL, st.ThumbnailURL = "", "", "", "", "", ""
	st.Attempts, st.LastError = 0, ""
	status.MarkReconciling(obj, v1alpha1.ProgressingReason, "fetching metadata")
}

func (r *Reconciler) fetch(ctx context.Context, obj *v1alpha1.SlideStock, ref slides.Ref) (ctrl.Result, error) {
	st := &obj.Status
	st.Phase = v1alpha1.SlidePending
	st.Provider, st.CanonicalURL = ref.Provider, ref.CanonicalURL
	st.Attempts++
	meta, err := r.Fetcher.Fetch(ctx, ref)
	now := metav1.NewTime(r.Clock.Now())
	st.LastFetchedAt = &now
	if err == nil {
		r.ready(obj, meta)
		return ctrl.Result{}, nil
	}

	msg := fmt.Sprintf("attempt %d of %d: %v", st.Attempts, MaxAttempts, err)
	st.LastError = err.Error()
	if outbound.IsPermanent(err) {
		// 404, 403, unparsable: no retry (seed 001 §7.2, §7.3).
		r.fail(obj, v1alpha1.UpstreamRejectedReason, FetchFailedEvent, err.Error())
		return ctrl.Result{}, nil
	}
	if st.Attempts >= MaxAttempts {
		r.fail(obj, v1alpha1.RetriesExhaustedReason, RetriesExhaustedEvent,
			fmt.Sprintf("gave up on %s after %d attempts; last error: %v", ref.CanonicalURL, st.Attempts, err))
		return ctrl.Result{}, nil
	}
	delay := r.Backoff.Delay(int(st.Attempts), err)
	status.MarkRetrying(obj, v1alpha1.UpstreamUnavailableReason, msg+fmt.Sprintf("; retrying in %s", delay.Round(100*time.Millisecond)))
	log.FromContext(ctx).V(1).Info("transient fetch failure", "attempt", st.Attempts, "retryIn", delay, "error", err.Error())
	return ctrl.Result{RequeueAfter: delay}, nil
}

func (r *Reconciler) ready(obj *v1alpha1.SlideStock, m oembed.Metadata) {
	st := &obj.Status
	st.Phase = v1alpha1.SlideReady
	st.Title, st.AuthorName, st.EmbedURL, st.ThumbnailURL = m.Title, m.AuthorName, m.EmbedURL, m.ThumbnailURL
	st.LastError = ""
	status.MarkReady(obj, v1alpha1.SucceededReason, readyMessage(obj))
}

func readyMessage(obj *v1alpha1.SlideStock) string {
	return "embed URL from " + providerName(obj.Status.Provider)
}

// fail marks the stock Failed for good and records a Warning Event with
// the URL and the error.
func (r *Reconciler) fail(obj *v1alpha1.SlideStock, reason, eventReason, message string) {
	st := &obj.Status
	st.Phase = v1alpha1.SlideFailed
	st.LastError = message
	status.MarkStalled(obj, reason, message)
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
