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

package receivelink

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
)

// Defaults of the Sweeper.
const (
	// DefaultSweepBatch is seed 003's RECEIVE_CLEANUP_BATCH_LIMIT default:
	// the sweep reads at most 100 objects per page.
	DefaultSweepBatch = 100
	// DefaultSweepInterval is how often the sweep runs. It is a safety
	// net: each link's own timer expires it on time.
	DefaultSweepInterval = 10 * time.Minute
	// DefaultMirrorInterval is how often the copies in the link namespace
	// are compared with their sources (Sweeper.Refresh): the longest a
	// rotated credential or key waits to reach the webhook. It costs one
	// read per Secret in use, not per link.
	DefaultMirrorInterval = time.Minute
	// DefaultOrphanGrace is Sweeper.Grace's default: a restore has this
	// long to bring back the link of a short-token object it restored.
	DefaultOrphanGrace = time.Hour
)

// SweepResult is one sweep's count, seed 003's receive-cleanup answer.
type SweepResult struct {
	// Deleted counts blobs deleted (of links that are gone).
	Deleted int
	// MissingMeta counts short-token objects whose link is gone (the
	// seed's missingMeta: an index entry without its metadata).
	MissingMeta int
	// Overdue counts live links past their expiry handed to the controller.
	Overdue int
	// Errors counts objects the sweep could not clean; the next sweep
	// tries again.
	Errors int
	// UnusedMirrors counts key mirrors deleted because no live link was
	// sealed with their keys at this sweep nor at the one before.
	UnusedMirrors int
}

// Sweeper finds what a crash or a forced deletion left behind (seed 003's
// daily receive-cleanup cron, here a timer): short-token objects whose
// link is gone, with the blob they still point at, and links past their
// expiry that the controller has not expired yet.
type Sweeper struct {
	Client     client.Client
	APIReader  client.Reader
	Reconciler *Reconciler
	// Namespace holds the short-token objects.
	Namespace string
	Interval  time.Duration
	// MirrorInterval is how often Refresh runs (DefaultMirrorInterval when
	// 0).
	MirrorInterval time.Duration
	// Shard selects the ReceiveLinks this manager reconciles (its
	// --watch-label-selector; nil: all): only those are handed over as
	// overdue. The short-token objects and mirrors are swept by every
	// shard, each link looked up on the API server before its object is
	// called an orphan.
	Shard labels.Selector
	// Watch are the namespaces whose ReceiveLinks the manager reconciles
	// (--watch-namespaces; empty: every namespace). The overdue links are
	// listed in each: a namespaced install may not list ReceiveLinks
	// cluster-wide, and a sweep that tried never completed there.
	Watch []string
	// Batch is the page size (DefaultSweepBatch when 0).
	Batch int64
	// Grace is how old a short-token object must be before the sweep
	// calls it an orphan (DefaultOrphanGrace when 0): a restore (Velero
	// restores Secrets before custom resources) creates the objects
	// again before the links that hold them.
	Grace time.Duration
	Clock clock.PassiveClock
	// Registerer receives switchboard_receivelink_sweep_total (none when
	// nil).
	Registerer prometheus.Registerer

	total, mirrors *prometheus.CounterVec
}

// NeedLeaderElection: one replica sweeps.
func (s *Sweeper) NeedLeaderElection() bool { return true }

func (s *Sweeper) init() error {
	if s.Clock == nil {
		s.Clock = clock.RealClock{}
	}
	if s.Batch <= 0 {
		s.Batch = DefaultSweepBatch
	}
	if s.Interval <= 0 {
		s.Interval = DefaultSweepInterval
	}
	if s.MirrorInterval <= 0 {
		s.MirrorInterval = DefaultMirrorInterval
	}
	if s.Grace <= 0 {
		s.Grace = DefaultOrphanGrace
	}
	if s.total != nil {
		return nil
	}
	s.total = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchboard_receivelink_sweep_total",
		Help: "What the ReceiveLink sweep found, by result: deleted (blobs of links that are gone), missing_meta (short-token objects whose link is gone), overdue (links past expiry handed to the controller), unused_mirrors (key mirrors no live link uses), errors.",
	}, []string{"result"})
	s.mirrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchboard_receivelink_mirror_total",
		Help: "Copies of ReceiveLinks' Secrets in the link namespace that the refresh changed, by result: updated (a rotated credential or key), removed (the source is gone), errors.",
	}, []string{"result"})
	if s.Registerer != nil {
		for _, c := range []*prometheus.CounterVec{s.total, s.mirrors} {
			if err := s.Registerer.Register(c); err != nil {
				return fmt.Errorf("register sweep metrics: %w", err)
			}
		}
	}
	return nil
}

// Start sweeps every Interval and refreshes the copies every
// MirrorInterval until ctx is done.
func (s *Sweeper) Start(ctx context.Context) error {
	if err := s.init(); err != nil {
		return err
	}
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	m := time.NewTicker(s.MirrorInterval)
	defer m.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			_, _ = s.Sweep(ctx)
		case <-m.C:
			s.refresh(ctx)
		}
	}
}

// refresh runs Refresh, counts it, and logs a line when it changed
// something or failed.
func (s *Sweeper) refresh(ctx context.Context) {
	res, err := s.Refresh(ctx)
	if err != nil {
		res.Errors++
	}
	for name, n := range map[string]int{"updated": res.Updated, "removed": res.Removed, "errors": res.Errors} {
		s.mirrors.WithLabelValues(name).Add(float64(n))
	}
	l := log.FromContext(ctx).WithName("receivelink-refresh")
	switch {
	case err != nil:
		l.Error(err, "refresh of the link namespace's copies incomplete", "updated", res.Updated, "removed", res.Removed, "errors", res.Errors)
	case res != MirrorResult{}:
		l.Info("refreshed the link namespace's copies", "updated", res.Updated, "removed", res.Removed, "errors", res.Errors)
	}
}

// Sweep runs once and logs one line with its counts.
func (s *Sweeper) Sweep(ctx context.Context) (SweepResult, error) {
	if err := s.init(); err != nil {
		return SweepResult{}, err
	}
	var res SweepResult
	used := map[string]bool{}
	err := s.sweepTokens(ctx, used, &res)
	if err == nil {
		err = s.sweepMirrors(ctx, used, &res)
	}
	if err == nil {
		err = s.sweepLinks(ctx, &res)
	}
	if err != nil {
		res.Errors++
	}
	for name, n := range map[string]int{"deleted": res.Deleted, "missing_meta": res.MissingMeta, "overdue": res.Overdue, "unused_mirrors": res.UnusedMirrors, "errors": res.Errors} {
		s.total.WithLabelValues(name).Add(float64(n))
	}
	l := log.FromContext(ctx).WithName("receivelink-sweep")
	if err != nil {
		l.Error(err, "sweep incomplete", "deleted", res.Deleted, "missingMeta", res.MissingMeta, "overdue", res.Overdue, "unusedMirrors", res.UnusedMirrors, "errors", res.Errors)
	} else {
		l.Info("sweep done", "deleted", res.Deleted, "missingMeta", res.MissingMeta, "overdue", res.Overdue, "unusedMirrors", res.UnusedMirrors, "errors", res.Errors)
	}
	return res, err
}

// sweepTokens pages through the short-token objects. One whose link is
// gone, or is another link of the same name that does not hold it (holds:
// by UID, or named by the link's share Secret, as after a restore), is an
// orphan once it is older than Grace: its blob goes, unless it was deleted
// already, the link said Retain, or the link of that name now shares the
// blob; then the object goes. used collects the key mirrors live objects
// need.
func (s *Sweeper) sweepTokens(ctx context.Context, used map[string]bool, res *SweepResult) error {
	return s.secretPages(ctx, linktoken.TokenLabel, "short-token objects", func(objs []corev1.Secret) {
		for i := range objs {
			s.sweepToken(ctx, &objs[i], used, res)
		}
	})
}

// secretPages hands each page (Batch Secrets) of the Secrets in the link
// namespace labelled label=true, read from the API server, to each; what
// names them in an error.
func (s *Sweeper) secretPages(ctx context.Context, label, what string, each func([]corev1.Secret)) error {
	opts := []client.ListOption{client.InNamespace(s.Namespace), client.MatchingLabels{label: "true"}, client.Limit(s.Batch)}
	for cont := ""; ; {
		var page corev1.SecretList
		if err := s.APIReader.List(ctx, &page, append(opts, client.Continue(cont))...); err != nil {
			return fmt.Errorf("list %s: %w", what, err)
		}
		each(page.Items)
		if cont = page.Continue; cont == "" {
			return nil
		}
	}
}

// sweepMirrors deletes the key mirrors no live short-token object needs,
// in two sweeps: the first marks a mirror unused, the next deletes it if
// it is still unused and unchanged since (the delete is conditional on its
// resourceVersion). A mint that needs the mirror in between rewrites it
// (mirrorKeys clears the mark) before it creates its short-token object,
// so a mirror is never deleted under a link just sealed with it.
func (s *Sweeper) sweepMirrors(ctx context.Context, used map[string]bool, res *SweepResult) error {
	return s.secretPages(ctx, linktoken.KeysMirrorLabel, "key mirrors", func(mirrors []corev1.Secret) {
		for i := range mirrors {
			m := &mirrors[i]
			marked := m.Annotations[linktoken.UnusedSinceAnnotation] != ""
			var err error
			switch {
			case used[m.Name] && marked:
				patch := client.MergeFrom(m.DeepCopy())
				delete(m.Annotations, linktoken.UnusedSinceAnnotation)
				err = s.Client.Patch(ctx, m, patch)
			case used[m.Name]:
			case marked:
				err = client.IgnoreNotFound(s.Client.Delete(ctx, m, client.Preconditions{UID: &m.UID, ResourceVersion: &m.ResourceVersion}))
				if err == nil {
					res.UnusedMirrors++
				} else if apierrors.IsConflict(err) {
					err = nil // written since: a link uses it again
				}
			default:
				patch := client.MergeFromWithOptions(m.DeepCopy(), client.MergeFromWithOptimisticLock{})
				if m.Annotations == nil {
					m.Annotations = map[string]string{}
				}
				m.Annotations[linktoken.UnusedSinceAnnotation] = s.Clock.Now().UTC().Format(time.RFC3339)
				err = client.IgnoreNotFound(s.Client.Patch(ctx, m, patch))
				if apierrors.IsConflict(err) {
					err = nil
				}
			}
			if err != nil {
				res.Errors++
			}
		}
	})
}

// sweepLinks hands links past their expiry, not yet Expired, to the
// controller (after a long outage of the manager, or a delete that kept
// failing).
func (s *Sweeper) sweepLinks(ctx context.Context, res *SweepResult) error {
	if len(s.Watch) == 0 {
		return s.sweepLinksIn(ctx, "", res)
	}
	for _, ns := range s.Watch {
		if err := s.sweepLinksIn(ctx, ns, res); err != nil {
			return err
		}
	}
	return nil
}

// sweepLinksIn is sweepLinks in one namespace ("": every namespace).
func (s *Sweeper) sweepLinksIn(ctx context.Context, ns string, res *SweepResult) error {
	now := s.Clock.Now()
	for cont := ""; ; {
		var page v1alpha1.ReceiveLinkList
		opts := []client.ListOption{client.Limit(s.Batch), client.Continue(cont), client.InNamespace(ns)}
		if s.Shard != nil {
			opts = append(opts, client.MatchingLabelsSelector{Selector: s.Shard})
		}
		if err := s.APIReader.List(ctx, &page, opts...); err != nil {
			return fmt.Errorf("list ReceiveLinks: %w", err)
		}
		for i := range page.Items {
			l := &page.Items[i]
			if l.Status.BlobDeletedAt == nil && l.DeletionTimestamp.IsZero() && !now.Before(linkExpiry(l)) {
				res.Overdue++
				select {
				case s.Reconciler.Overdue <- event.GenericEvent{Object: l}:
				default:
					res.Errors++ // the queue is full; the next sweep hands it again
				}
			}
		}
		if cont = page.Continue; cont == "" {
			return nil
		}
	}
}
