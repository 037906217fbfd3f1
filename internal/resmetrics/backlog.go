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

package resmetrics

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// backlogMetrics are written after metrics, from the children counted per
// parent.
var backlogMetrics = []struct {
	name, help string
	value      func(*backlog) (float64, bool)
}{
	{"switchboard_backlog_pending", "Unfinished children (PaperSyncs of a NotionIntegration, SheetSyncs of a SheetConnection) of the parent.",
		func(b *backlog) (float64, bool) { return float64(b.pending), true }},
	{"switchboard_backlog_failed", "Children of the parent that failed for good (phase Failed), kept for their retention.",
		func(b *backlog) (float64, bool) { return float64(b.failed), true }},
	{"switchboard_backlog_oldest_pending_timestamp_seconds", "When the parent's oldest unfinished child was created, in Unix seconds.",
		func(b *backlog) (float64, bool) { return seconds(b.oldest), b.pending > 0 }},
}

// objectKey names a parent of children by kind, namespace and name (the
// strings are the cache's own).
type objectKey struct{ kind, namespace, name string }

// backlog is one parent's children as the backlog metrics count them.
type backlog struct {
	pending, failed int
	oldest          time.Time
}

type backlogs map[objectKey]*backlog

// child is a kind each of whose objects records one unit of a parent's
// work: its objects are counted in their parent's backlog, and have no
// readiness series of their own.
type child struct {
	kind
	// count adds o to b, under its parent.
	count func(b backlogs, o runtime.Object)
}

// children are the child kinds, each with its parent.
var children = []child{
	{kindOf(&v1alpha1.PaperSync{}), func(b backlogs, o runtime.Object) {
		ps := o.(*v1alpha1.PaperSync)
		b.add(objectKey{nameOf(&v1alpha1.NotionIntegration{}), ps.Namespace, ps.Spec.IntegrationRef.Name},
			ps.Status.Phase, ps.Status.CompletedAt, ps.CreationTimestamp)
	}},
	{kindOf(&v1alpha1.SheetSync{}), func(b backlogs, o runtime.Object) {
		s := o.(*v1alpha1.SheetSync)
		b.add(objectKey{nameOf(&v1alpha1.SheetConnection{}), s.Namespace, s.Spec.ConnectionRef.Name},
			s.Status.Phase, s.Status.CompletedAt, s.CreationTimestamp)
	}},
}

// countBacklogs counts the children per parent.
func countBacklogs(ctx context.Context, src source) (backlogs, error) {
	b := backlogs{}
	for _, c := range children {
		objs, err := src.objects(ctx, c.kind)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			c.count(b, o)
		}
	}
	return b, nil
}

func (b backlogs) add(k objectKey, phase v1alpha1.SyncPhase, completed *metav1.Time, created metav1.Time) {
	if k.name == "" {
		return
	}
	x := b[k]
	if x == nil {
		x = &backlog{}
		b[k] = x
	}
	switch {
	case phase == v1alpha1.SyncFailed:
		x.failed++
	case completed == nil:
		x.pending++
		if x.oldest.IsZero() || created.Time.Before(x.oldest) {
			x.oldest = created.Time
		}
	}
}
