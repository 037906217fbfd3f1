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

package calendarwatch

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// SyncSource is the source named in every deletion's Event and audit
// record (seed 002 Property 4: the activity log's source is "Google
// Calendar Sync").
const SyncSource = audit.SourceCalendarSync

// recentIDs is how many deleted event ids status keeps.
const recentIDs = 20

// maxPendingDeliveries bounds status.pendingDeliveries (its schema's
// MaxItems).
const maxPendingDeliveries = 500

// sinkForbiddenError: RBAC does not let the operator list or delete the
// appointment kind.
type sinkForbiddenError struct{ err error }

func (e *sinkForbiddenError) Error() string { return e.err.Error() }
func (e *sinkForbiddenError) Unwrap() error { return e.err }

// deleteAppointments deletes the appointment objects of cancelled events
// (and, after a 410, of events that no longer exist), records each
// deletion, and queues the HTTP sink's deliveries.
func (r *Reconciler) deleteAppointments(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run, res changes) error {
	sink := obj.Spec.Sink
	if len(res.cancelled) == 0 && !res.reconcileGone {
		return nil
	}
	deleted := map[string]string{} // event id → appointment name
	if sink.Objects != nil {
		var err error
		if deleted, err = r.deleteObjects(ctx, obj, run, res); err != nil {
			return err
		}
	}
	if sink.HTTP != nil {
		for _, id := range res.cancelled {
			r.queueDelivery(obj, v1alpha1.SinkDelivery{EventID: id, Appointment: deleted[id], DeletedAt: metav1.NewTime(run.Now)})
		}
	}
	return nil
}

func (r *Reconciler) deleteObjects(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run, res changes) (map[string]string, error) {
	sink := obj.Spec.Sink.Objects
	gvk := schema.FromAPIVersionAndKind(sink.APIVersion, sink.Kind)
	label := sink.EventIDLabel
	if label == "" {
		label = v1alpha1.DefaultEventIDLabel
	}
	values := eventLabelValues(res)
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	// One metadata-only list of this namespace's appointments per sync,
	// straight from the API server: the kind is the user's, so it has no
	// informer, and only metadata is needed.
	if err := r.APIReader.List(ctx, list, client.InNamespace(obj.Namespace), client.HasLabels{label}); err != nil {
		return nil, r.sinkError("list", gvk, obj.Namespace, err)
	}
	deleted := map[string]string{} // event id (or label value) → appointment
	matched := map[string]bool{}   // cancelled event ids some appointment carries
	for i := range list.Items {
		item := &list.Items[i]
		id, why, ok := values.verdict(item.Labels[label], matched)
		if !ok {
			continue
		}
		matched[id] = true
		gone, err := r.deleteAppointment(ctx, obj, gvk, item, id, why)
		if err != nil {
			return nil, err
		}
		if gone {
			deleted[id] = item.Name
		}
	}
	r.reportUnmatched(ctx, obj, run, res.cancelled, matched)
	return deleted, nil
}

// eventLabels are the label values a sync deletes the appointments of.
type eventLabels struct {
	cancelled map[string]bool
	eventOf   map[string]string // label value → event id
	// reconcileGone and live: after a 410, appointments whose event is not
	// live go too (changes.reconcileGone).
	reconcileGone bool
	live          map[string]bool
}

func eventLabelValues(res changes) eventLabels {
	// Label values: each cancelled (and, after a 410, each live) id as it
	// is when it fits in a label value, and hashed (EventIDLabelValue).
	v := eventLabels{
		cancelled: make(map[string]bool, 2*len(res.cancelled)),
		eventOf:   make(map[string]string, 2*len(res.cancelled)),

		reconcileGone: res.reconcileGone,
	}
	for _, id := range res.cancelled {
		labelForms(v.cancelled, id)
		v.eventOf[id], v.eventOf[HashedEventID(id)] = id, id
	}
	if res.reconcileGone {
		v.live = make(map[string]bool, 2*len(res.live))
		for id := range res.live {
			labelForms(v.live, id)
		}
	}
	return v
}

// verdict says whether the appointment labelled value goes, for which
// event id (or label value), and why. An instance of a cancelled recurring
// event marks that event matched.
func (v eventLabels) verdict(value string, matched map[string]bool) (id, why string, ok bool) {
	id = value
	switch {
	case v.cancelled[value]:
		id, why = v.eventOf[value], "cancelled"
	case instanceOf(value, v.cancelled):
		why = "its recurring event was cancelled"
		matched[v.eventOf[value[:strings.LastIndexByte(value, '_')]]] = true
	case v.reconcileGone && !v.live[value] && !instanceOf(value, v.live):
		why = "no longer in the calendar (found by the full sync after a 410)"
	default:
		return "", "", false
	}
	return id, why, true
}

// deleteAppointment deletes one appointment and records the deletion; it
// reports false when the appointment was gone already.
func (r *Reconciler) deleteAppointment(ctx context.Context, obj *v1alpha1.CalendarWatch, gvk schema.GroupVersionKind, item *metav1.PartialObjectMetadata, id, why string) (bool, error) {
	item.SetGroupVersionKind(gvk)
	err := r.Delete(ctx, item, client.Preconditions{UID: &item.UID})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Deleted meanwhile, by a person or another sync: success
		// (seed 002 "Concurrent Deletion").
		return false, nil
	case err != nil:
		return false, r.sinkError("delete", gvk, obj.Namespace, err)
	}
	r.recordDeletion(ctx, obj, &corev1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: item.Namespace, Name: item.Name, UID: item.UID}, id, why)
	return true, nil
}

// reportUnmatched tells of the cancelled events no appointment carries.
func (r *Reconciler) reportUnmatched(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run, cancelled []string, matched map[string]bool) {
	for _, id := range cancelled {
		switch {
		case matched[id]:
		case EventIDLabelValue(id) != id:
			// An id no label can hold as it is: the appointment must carry
			// its hash, and none does. Said where a person looks, since a
			// booking system that stored the id itself (truncated, or
			// refused by the API server) would otherwise never learn why.
			r.recordUnmatched(obj, run, id)
		default:
			// Seed 002 "Appointment Not Found": log the id, go on.
			log.FromContext(ctx).V(1).Info("no appointment for cancelled event", "eventID", id)
		}
	}
}

// recordUnmatched lists a cancelled event whose id needs the hashed label
// value and that no appointment carries, in status and a Warning Event.
func (r *Reconciler) recordUnmatched(obj *v1alpha1.CalendarWatch, run *runner.Run, id string) {
	st := &obj.Status
	value := EventIDLabelValue(id)
	st.UnmatchedEvents = append([]v1alpha1.UnmatchedEvent{{EventID: id, LabelValue: value, At: metav1.NewTime(run.Now)}}, st.UnmatchedEvents...)
	if len(st.UnmatchedEvents) > recentIDs {
		st.UnmatchedEvents = st.UnmatchedEvents[:recentIDs]
	}
	label := obj.Spec.Sink.Objects.EventIDLabel
	if label == "" {
		label = v1alpha1.DefaultEventIDLabel
	}
	r.event(obj, nil, corev1.EventTypeWarning, "AppointmentNotMatched", "GoogleCalendarSync",
		fmt.Sprintf("event %s was cancelled, but no %s carries %s=%s (its id is too long for a label value, so the appointment must carry this hash of it; see status.unmatchedEvents)",
			noteID(id), obj.Spec.Sink.Objects.Kind, label, value))
}

// instanceOf reports whether id is an instance of a recurring event in
// set: Google's instance ids are "<recurring event id>_<original start>"
// (events.instances reference). Only this prefix form is relied on.
func instanceOf(id string, set map[string]bool) bool {
	i := strings.LastIndexByte(id, '_')
	return i > 0 && set[id[:i]]
}

// recordDeletion records a deletion the API server made: in status, an
// Event (gone after the API server's --event-ttl) and the audit record,
// which outlives it (seed 002's activity log).
func (r *Reconciler) recordDeletion(ctx context.Context, obj *v1alpha1.CalendarWatch, appt *corev1.ObjectReference, eventID, why string) {
	st := &obj.Status
	st.AppointmentsDeleted++
	st.RecentlyDeletedEventIDs = append([]string{eventID}, st.RecentlyDeletedEventIDs...)
	if len(st.RecentlyDeletedEventIDs) > recentIDs {
		st.RecentlyDeletedEventIDs = st.RecentlyDeletedEventIDs[:recentIDs]
	}
	r.event(obj, appt, corev1.EventTypeNormal, "AppointmentDeleted", "GoogleCalendarSync",
		fmt.Sprintf("source=%s: deleted %s %s for event %s (%s)", SyncSource, appt.Kind, appt.Name, noteID(eventID), why))
	audit.Record(ctx, audit.Fact{Fact: audit.AppointmentDeleted, Kind: "CalendarWatch", Namespace: obj.Namespace, Name: obj.Name,
		Source: SyncSource, EventID: eventID, Reason: why,
		DeletedAPIVersion: appt.APIVersion, DeletedKind: appt.Kind, DeletedName: appt.Name, DeletedUID: string(appt.UID)})
}

func (r *Reconciler) sinkError(verb string, gvk schema.GroupVersionKind, ns string, err error) error {
	switch {
	case apierrors.IsForbidden(err):
		resource := gvk.Kind
		if m, merr := r.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); merr == nil {
			resource = m.Resource.GroupResource().String()
		}
		return &sinkForbiddenError{fmt.Errorf("the operator may not %s %s in namespace %s: grant its ServiceAccount list and delete on %s (see docs/calendarwatch.md, \"Appointments of another kind\")",
			verb, gvk.Kind, ns, resource)}
	case meta.IsNoMatchError(err):
		return outbound.PermanentError("kubernetes", fmt.Sprintf("sink.objects: the API server serves no kind %s in %s", gvk.Kind, gvk.GroupVersion()), err)
	}
	return &outbound.Error{Upstream: "kubernetes", Class: outbound.Transient, Reason: verb + " appointments: " + err.Error(), Err: err}
}

func (r *Reconciler) queueDelivery(obj *v1alpha1.CalendarWatch, d v1alpha1.SinkDelivery) {
	st := &obj.Status
	for _, p := range st.PendingDeliveries {
		if p.EventID == d.EventID {
			return
		}
	}
	st.PendingDeliveries = append(st.PendingDeliveries, d)
	if over := len(st.PendingDeliveries) - maxPendingDeliveries; over > 0 {
		r.event(obj, nil, corev1.EventTypeWarning, "DeliveriesDropped", "Deliver",
			fmt.Sprintf("the HTTP sink has refused deliveries for long: dropped the %d oldest (event %s first)", over, st.PendingDeliveries[0].EventID))
		st.PendingDeliveries = st.PendingDeliveries[over:]
	}
}
