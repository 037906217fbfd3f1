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
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/calendarpush"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/gcalendar"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

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

// notificationSynced reports whether this manager has synced for note
// already, on a copy of obj older than the status that recorded it: the
// sync's cursor write queues a reconcile at once, often before the cache
// holds that status, and a second sync would list the calendar again for
// nothing (two events.list calls per notification in the bench). The copy
// is given the record the sync wrote, so that the status write of this
// reconcile keeps it. The memory is dropped once the cache shows it.
func (r *Reconciler) notificationSynced(obj *v1alpha1.CalendarWatch, note calendarpush.Notification) bool {
	done, ahead := r.synced.Ahead(obj.UID, func(done v1alpha1.NotificationStatus) bool {
		last := obj.Status.LastNotification
		return last != nil && last.ChannelID == done.ChannelID && last.MessageNumber >= done.MessageNumber
	})
	if !ahead || done.ChannelID != note.ChannelID || done.MessageNumber < note.MessageNumber {
		return false
	}
	obj.Status.LastNotification = done.DeepCopy()
	return true
}

// sync runs the incremental sync when a notification arrived, when the
// backup interval has passed, when the watch was resumed (status.syncDue),
// or when a person asked; a burst of notifications is one sync.
func (r *Reconciler) sync(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run) runner.Outcome {
	st := &obj.Status
	note, notified := pendingNotification(obj)
	if notified && r.notificationSynced(obj, note) {
		notified = false
	}
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
		r.synced.Remember(obj.UID, *st.LastNotification)
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

// saveCursor stores the sync token and page cursor (one Secret patch of
// the two keys: the channel phase may have just written the Secret's
// channel record, which a copy read before it must not undo or conflict
// with).
func (r *Reconciler) saveCursor(ctx context.Context, sec *corev1.Secret, syncToken, pageToken string) error {
	if string(sec.Data[SyncTokenKey]) == syncToken && string(sec.Data[PageTokenKey]) == pageToken {
		return nil
	}
	body, err := json.Marshal(map[string]any{"data": map[string][]byte{SyncTokenKey: []byte(syncToken), PageTokenKey: []byte(pageToken)}})
	if err != nil {
		return err
	}
	if err := r.Patch(ctx, sec, client.RawPatch(types.MergePatchType, body)); err != nil {
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
