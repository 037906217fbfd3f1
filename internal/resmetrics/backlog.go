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

// children are the kinds each of whose objects records one unit of a
// parent's work (v1alpha1.ChildObject): its objects are counted in their
// parent's backlog, and have no readiness series of their own. A new child
// kind is counted without a line here.
var children = kindsWhere(func(k kind) bool {
	_, ok := k.obj().(v1alpha1.ChildObject)
	return ok
})

// countBacklogs counts the children per parent.
func countBacklogs(ctx context.Context, src source) (backlogs, error) {
	b := backlogs{}
	for _, k := range children {
		objs, err := src.objects(ctx, k)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			c, meta := o.(v1alpha1.ChildObject), o.(metav1.Object)
			st := c.GetChildStatus()
			b.add(objectKey{c.ParentKind(), meta.GetNamespace(), c.ParentName()}, st.Phase, st.CompletedAt, meta.GetCreationTimestamp())
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
