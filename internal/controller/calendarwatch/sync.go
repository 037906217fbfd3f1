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
	"errors"
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
	"github.com/switchboard-dev/switchboard/internal/calendarpush"
	"github.com/switchboard-dev/switchboard/internal/controller/grant"
	"github.com/switchboard-dev/switchboard/internal/gcalendar"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/runner"
	"github.com/switchboard-dev/switchboard/internal/status"
)

// SyncSource is the source named in every deletion's Event (seed 002
// Property 4: the activity log's source is "Google Calendar Sync").
const SyncSource = "Google Calendar Sync"

// recentIDs is how many deleted event ids status keeps.
const recentIDs = 20

// maxPendingDeliveries bounds status.pendingDeliveries (its schema's
// MaxItems).
const maxPendingDeliveries = 500

// pendingNotification is the recorded notification the controller has not
// handled yet.
func pendingNotification(obj *v1alpha1.CalendarWatch) (calendarpush.Notification, bool) {
	n, ok := calendarpush.ParseNotification(obj.GetAnnotations()[v1alpha1.CalendarNotificationAnnotation])
	if !ok {
		return calendarpush.Notification{}, false
	}
	if last := obj.Status.LastNotification; last != nil && last.ChannelID == n.ChannelID && last.MessageNumber >= n.MessageNumber {
		return calendarpush.Notification{}, false
	}
	return n, true
}

// sync runs the incremental sync when a notification arrived, when the
// backup interval has passed, when the watch was resumed (status.syncDue),
// or when a person asked; a burst of notifications is one sync.
func (r *Reconciler) sync(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run) runner.Outcome {
	st := &obj.Status
	note, notified := pendingNotification(obj)
	interval := obj.Spec.BackupSyncInterval.Duration
	if st.LastSyncTime != nil && !notified && !run.Requested && !st.SyncDue && run.Now.Before(st.LastSyncTime.Add(interval)) {
		run.RequeueAt(st.LastSyncTime.Add(interval))
		return runner.Continue()
	}
	sec, err := r.readChannelSecret(ctx, obj)
	if err != nil {
		return runner.Transient(v1alpha1.SecretReadFailedReason, err)
	}
	res, err := r.listChanges(ctx, obj, run, sec)
	if err != nil {
		return r.syncFailed(obj, err)
	}
	if err := r.deleteAppointments(ctx, obj, run, res); err != nil {
		return r.syncFailed(obj, err)
	}
	if err := r.saveCursor(ctx, sec, res.syncToken, ""); err != nil {
		return runner.Transient(v1alpha1.SecretReadFailedReason, err)
	}
	now := metav1.NewTime(run.Now)
	st.LastSyncTime = &now
	if res.full {
		st.LastFullSyncTime = &now
	}
	st.Syncs++
	st.SyncDue = false
	if notified {
		st.LastNotification = &v1alpha1.NotificationStatus{ChannelID: note.ChannelID, MessageNumber: note.MessageNumber, ResourceState: note.State, ReceivedAt: &now}
		st.Notifications++
	}
	msg := fmt.Sprintf("%d changed events, %d cancelled", res.changed, len(res.cancelled))
	if res.full {
		msg = "full sync: " + msg
	}
	status.Set(obj, v1alpha1.SyncedCondition, metav1.ConditionTrue, v1alpha1.SucceededReason, msg)
	run.RequeueAt(run.Now.Add(interval))
	return runner.Continue()
}

// changes is what one sync found.
type changes struct {
	// cancelled event ids, in the order Google listed them.
	cancelled []string
	// live event ids (full syncs only).
	live    map[string]bool
	changed int
	full    bool
	// reconcileGone: the full sync followed a 410, so appointments whose
	// event no longer exists at all are deleted too (a deletion made while
	// the token was invalid is not lost).
	reconcileGone bool
	syncToken     string
}

// listChanges follows every page from the stored sync token (or lists
// everything when there is none), and stores the sync token of the last
// page only. A 410 drops the token and starts a full sync.
func (r *Reconciler) listChanges(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run, sec *corev1.Secret) (changes, error) {
	syncToken, pageToken := string(sec.Data[SyncTokenKey]), string(sec.Data[PageTokenKey])
	res := changes{full: syncToken == ""}
	if res.full {
		res.live = map[string]bool{}
	}
	restarted := false
	for pages := 0; ; pages++ {
		page, err := r.Calendar.List(ctx, grant.Of(run).Token, gcalendar.ListRequest{CalendarID: obj.Spec.CalendarID, SyncToken: syncToken, PageToken: pageToken})
		if errors.Is(err, gcalendar.ErrSyncTokenGone) && res.full && pageToken != "" && !restarted {
			// A full listing's page token expired under it: start the
			// listing once more.
			restarted, pageToken, pages = true, "", -1
			res = changes{full: true, reconcileGone: res.reconcileGone, live: map[string]bool{}}
			continue
		}
		if errors.Is(err, gcalendar.ErrSyncTokenGone) && !res.full {
			// Google: "Sometimes sync tokens are invalidated by the server
			// ... respond with 410 ... clear the client's store and perform a
			// new full sync" (guides/sync). Mid-pagination too.
			log.FromContext(ctx).Info("sync token no longer valid; full sync", "pages", pages)
			r.event(obj, nil, corev1.EventTypeNormal, "FullSync", "Sync", "Google answered 410 to the sync token: full sync")
			if err := r.saveCursor(ctx, sec, "", ""); err != nil {
				return changes{}, err
			}
			syncToken, pageToken, pages = "", "", -1
			res = changes{full: true, reconcileGone: true, live: map[string]bool{}}
			continue
		}
		if err != nil {
			if syncToken != "" && pageToken != "" && pages > 0 && outbound.IsTransient(err) {
				// Resume an incremental sync from this page next time
				// rather than from the first (deletions are idempotent
				// either way). A full sync restarts: it needs every page
				// to know which events still exist.
				_ = r.saveCursor(ctx, sec, syncToken, pageToken)
			}
			return changes{}, err
		}
		for _, e := range page.Events {
			res.changed++
			if e.Cancelled() {
				res.cancelled = append(res.cancelled, e.ID)
			} else if res.live != nil {
				res.live[e.ID] = true
			}
		}
		if page.NextPageToken == "" {
			// Only the last page carries nextSyncToken (guides/sync).
			res.syncToken = page.NextSyncToken
			return res, nil
		}
		pageToken = page.NextPageToken
	}
}

// saveCursor stores the sync token and page cursor (one Secret update).
func (r *Reconciler) saveCursor(ctx context.Context, sec *corev1.Secret, syncToken, pageToken string) error {
	if string(sec.Data[SyncTokenKey]) == syncToken && string(sec.Data[PageTokenKey]) == pageToken {
		return nil
	}
	sec.Data[SyncTokenKey], sec.Data[PageTokenKey] = []byte(syncToken), []byte(pageToken)
	if err := r.Update(ctx, sec); err != nil {
		return fmt.Errorf("save sync token in Secret %s: %w", sec.Name, err)
	}
	return nil
}

// syncFailed turns a failed sync into an outcome: 401 → re-authentication;
// network, 5xx, 429 and 403 rate limits → the runner's 1, 2, 4, 8, 16 s
// (Retry-After honoured), then the backup timer; other refusals stall.
func (r *Reconciler) syncFailed(obj *v1alpha1.CalendarWatch, err error) runner.Outcome {
	var forbidden *sinkForbiddenError
	switch {
	case errors.As(err, &forbidden):
		status.Set(obj, v1alpha1.SyncedCondition, metav1.ConditionFalse, v1alpha1.SinkForbiddenReason, err.Error())
		return runner.Stall(v1alpha1.SinkForbiddenReason, err).RecheckAfter(obj.Spec.BackupSyncInterval.Duration)
	case errors.Is(err, gcalendar.ErrUnauthorized):
		status.Set(obj, v1alpha1.SyncedCondition, metav1.ConditionFalse, v1alpha1.ReauthRequiredReason, err.Error())
		return r.grant.Reauth(obj, "Sync", err)
	case outbound.IsPermanent(err):
		status.Set(obj, v1alpha1.SyncedCondition, metav1.ConditionFalse, v1alpha1.UpstreamRejectedReason, err.Error())
		return runner.Stall(v1alpha1.UpstreamRejectedReason, err).RecheckAfter(obj.Spec.BackupSyncInterval.Duration)
	}
	status.Set(obj, v1alpha1.SyncedCondition, metav1.ConditionFalse, v1alpha1.UpstreamUnavailableReason, err.Error())
	return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
}

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
	// Label values: each cancelled (and, after a 410, each live) id as it
	// is when it fits in a label value, and hashed (EventIDLabelValue).
	cancelled := make(map[string]bool, 2*len(res.cancelled))
	eventOf := make(map[string]string, 2*len(res.cancelled)) // label value → event id
	for _, id := range res.cancelled {
		labelForms(cancelled, id)
		eventOf[id], eventOf[HashedEventID(id)] = id, id
	}
	var live map[string]bool
	if res.reconcileGone {
		live = make(map[string]bool, 2*len(res.live))
		for id := range res.live {
			labelForms(live, id)
		}
	}
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
		value := item.Labels[label]
		id, why := value, ""
		switch {
		case cancelled[value]:
			id, why = eventOf[value], "cancelled"
		case instanceOf(value, cancelled):
			why = "its recurring event was cancelled"
			matched[eventOf[value[:strings.LastIndexByte(value, '_')]]] = true
		case res.reconcileGone && !live[value] && !instanceOf(value, live):
			why = "no longer in the calendar (found by the full sync after a 410)"
		default:
			continue
		}
		matched[id] = true
		item.SetGroupVersionKind(gvk)
		err := r.Delete(ctx, item, client.Preconditions{UID: &item.UID})
		switch {
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
			// Deleted meanwhile, by a person or another sync: success
			// (seed 002 "Concurrent Deletion").
			continue
		case err != nil:
			return nil, r.sinkError("delete", gvk, obj.Namespace, err)
		}
		deleted[id] = item.Name
		r.recordDeletion(obj, &corev1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: item.Namespace, Name: item.Name, UID: item.UID}, id, why)
	}
	for _, id := range res.cancelled {
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
	return deleted, nil
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

func (r *Reconciler) recordDeletion(obj *v1alpha1.CalendarWatch, appt *corev1.ObjectReference, eventID, why string) {
	st := &obj.Status
	st.AppointmentsDeleted++
	st.RecentlyDeletedEventIDs = append([]string{eventID}, st.RecentlyDeletedEventIDs...)
	if len(st.RecentlyDeletedEventIDs) > recentIDs {
		st.RecentlyDeletedEventIDs = st.RecentlyDeletedEventIDs[:recentIDs]
	}
	r.event(obj, appt, corev1.EventTypeNormal, "AppointmentDeleted", "GoogleCalendarSync",
		fmt.Sprintf("source=%s: deleted %s %s for event %s (%s)", SyncSource, appt.Kind, appt.Name, noteID(eventID), why))
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
