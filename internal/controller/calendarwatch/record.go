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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/contract/calendarpush"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/gcalendar"
)

// ChannelsAnnotation, on the channel Secret (<name>-calendar), lists the
// push channels the watch may have open at Google, as JSON
// ([{"id","resourceID","expiration"}]): the open one and the one a
// renewal replaced until it is stopped, as status names them. A restore
// (Velero, a GitOps delete and re-apply) brings the watch back without
// status and with a new UID, which the webhook finds a channel's watch by:
// the old channels would then go on being pushed to (and answered 404)
// until they expire. The Secret comes back with the watch, so the next
// incarnation reads them here and stops them with channels.stop, which
// needs the id and the resource id (guides/push, "Stop notifications").
const ChannelsAnnotation = "switchboard.dev/calendar-channels"

// ownChannelSecret reads the channel Secret and makes sure the watch
// controls it. One a restore brought back without its owner is taken over
// (oauth.ClaimSecret; claimed is true) with a new channel token in the
// same write: the token decides which pushes are accepted, so it is not
// kept from a Secret anyone who may create Secrets could have planted. The
// sync cursor is kept: it is what lets the sync resume where the old
// watch stopped. A Secret the operator did not write, or another object
// controls, is ErrConnectSecretConflict.
func (r *Reconciler) ownChannelSecret(ctx context.Context, obj *v1alpha1.CalendarWatch) (sec *corev1.Secret, claimed bool, _ error) {
	sec, err := r.readChannelSecret(ctx, obj)
	if err != nil {
		return nil, false, err
	}
	claimed, err = r.claimChannelSecret(ctx, obj, sec)
	if err != nil {
		return nil, false, err
	}
	return sec, claimed, nil
}

// claimChannelSecret takes sec over for obj when a restore brought it
// back without its owner (oauth.ClaimSecret), minting a new channel token
// in the same write; one obj controls already is left as it is. Another's
// is ErrConnectSecretConflict.
func (r *Reconciler) claimChannelSecret(ctx context.Context, obj *v1alpha1.CalendarWatch, sec *corev1.Secret) (claimed bool, _ error) {
	if metav1.IsControlledBy(sec, obj) {
		return false, nil
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	sec.Data[ChannelTokenKey] = []byte(capability.Random(channelTokenBytes))
	switch claim, err := oauth.ClaimSecret(ctx, r.Client, obj, sec); {
	case err != nil:
		return false, err
	case claim == oauth.Foreign:
		return false, fmt.Errorf("channel Secret %s: %w", sec.Name, oauth.ErrConnectSecretConflict)
	}
	return true, nil
}

// recordedChannels is the channel Secret's ChannelsAnnotation (nil when
// absent or unreadable).
func recordedChannels(sec *corev1.Secret) []v1alpha1.ChannelStatus {
	var chs []v1alpha1.ChannelStatus
	if v := sec.Annotations[ChannelsAnnotation]; v != "" {
		if err := json.Unmarshal([]byte(v), &chs); err != nil {
			return nil
		}
	}
	return chs
}

// ownChannel reports whether ch was opened by this incarnation of the
// watch (its id carries obj's UID).
func ownChannel(obj *v1alpha1.CalendarWatch, ch v1alpha1.ChannelStatus) bool {
	uid, _, ok := calendarpush.ParseChannelID(ch.ID)
	return ok && uid == obj.UID
}

func expiredAt(ch v1alpha1.ChannelStatus, now time.Time) bool {
	return ch.Expiration != nil && !now.Before(ch.Expiration.Time)
}

// leftOpen are the channels sec records that an earlier incarnation of the
// watch opened and that have not expired: this one must stop them.
func leftOpen(obj *v1alpha1.CalendarWatch, sec *corev1.Secret, now time.Time) []v1alpha1.ChannelStatus {
	var out []v1alpha1.ChannelStatus
	for _, ch := range recordedChannels(sec) {
		if !ownChannel(obj, ch) && !expiredAt(ch, now) {
			out = append(out, ch)
		}
	}
	return out
}

// recordChannels writes into sec the channels status names, after left
// (those an earlier incarnation left open and that are not stopped yet),
// when sec shows another record. The patch sets the annotation whatever
// the copy held, so a copy the cache has not caught up with cannot make
// it keep a stale value.
func (r *Reconciler) recordChannels(ctx context.Context, obj *v1alpha1.CalendarWatch, sec *corev1.Secret, left []v1alpha1.ChannelStatus) error {
	chs := append([]v1alpha1.ChannelStatus(nil), left...)
	for _, ch := range []*v1alpha1.ChannelStatus{obj.Status.PreviousChannel, obj.Status.Channel} {
		if ch != nil {
			chs = append(chs, *ch)
		}
	}
	var want any // null removes the annotation
	if len(chs) > 0 {
		b, err := json.Marshal(chs)
		if err != nil {
			return err
		}
		want = string(b)
	}
	if have, ok := sec.Annotations[ChannelsAnnotation]; (want == nil && !ok) || (ok && want == have) {
		return nil
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{ChannelsAnnotation: want}}})
	if err != nil {
		return err
	}
	if err := r.Patch(ctx, sec, client.RawPatch(types.MergePatchType, body)); err != nil {
		return fmt.Errorf("record the push channels in Secret %s: %w", sec.Name, err)
	}
	return nil
}

// keepRecord brings the channel Secret's record in line with status (after
// a record write that failed, or a replaced channel stopped on a retry).
func (r *Reconciler) keepRecord(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run) runner.Outcome {
	sec, err := r.readChannelSecret(ctx, obj)
	if err == nil {
		err = r.recordChannels(ctx, obj, sec, leftOpen(obj, sec, run.Now))
	}
	if err != nil {
		return runner.Transient(v1alpha1.SecretReadFailedReason, err)
	}
	return runner.Continue()
}

// restoreChannels rebuilds from the channel Secret what a restore took
// from status: the channels an earlier incarnation of the watch left open
// are stopped (the webhook routes a channel by the UID in its id, so they
// can carry no push to this one; a stop that fails is tried again on the
// next reconcile, and the sync goes on meanwhile), and when status names
// no channel at all, this incarnation's own recorded ones are named again
// rather than opened anew.
func (r *Reconciler) restoreChannels(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run, sec *corev1.Secret) runner.Outcome {
	recorded := recordedChannels(sec)
	if len(recorded) == 0 {
		return runner.Continue()
	}
	left, out := r.stopLeftOpen(ctx, obj, run, sec)
	if !out.IsContinue() {
		return out
	}
	if st := &obj.Status; st.Channel == nil && st.PreviousChannel == nil {
		for i := range recorded {
			ch := recorded[i]
			switch {
			case !ownChannel(obj, ch) || expiredAt(ch, run.Now):
			case calendarpush.ChannelSequence(&ch) > calendarpush.ChannelSequence(st.Channel):
				st.PreviousChannel, st.Channel = st.Channel, &ch
			default:
				st.PreviousChannel = &ch
			}
		}
	}
	if err := r.recordChannels(ctx, obj, sec, left); err != nil {
		return runner.Transient(v1alpha1.SecretReadFailedReason, err)
	}
	return runner.Continue()
}

// stopLeftOpen stops the channels sec records that an earlier incarnation
// left open, and returns those it could not stop (tried again on the next
// reconcile).
func (r *Reconciler) stopLeftOpen(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run, sec *corev1.Secret) ([]v1alpha1.ChannelStatus, runner.Outcome) {
	var failed []v1alpha1.ChannelStatus
	for _, ch := range leftOpen(obj, sec, run.Now) {
		err := r.Calendar.Stop(ctx, grant.Of(run).Token, ch.ID, ch.ResourceID)
		switch {
		case errors.Is(err, gcalendar.ErrUnauthorized):
			return nil, r.grant.Reauth(obj, "StopChannel", err)
		case err != nil:
			failed = append(failed, ch)
			run.RequeueAt(run.Now.Add(Retries.Exact().After(1, err)))
			continue
		}
		r.event(obj, nil, corev1.EventTypeNormal, "ChannelStopped", "StopChannel",
			"stopped push channel "+ch.ID+", left open by this watch before it was restored or re-created")
	}
	return failed, runner.Continue()
}

// suspend stops every channel of a suspended watch and marks a sync due:
// what changes in the calendar meanwhile is pushed to no one, so resuming
// syncs at once rather than on the backup timer.
func (r *Reconciler) suspend(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run) runner.Outcome {
	obj.Status.SyncDue = true
	return r.release(ctx, obj, run)
}

// release stops every channel of a watch that is suspended or deleted:
// those status names and those an earlier incarnation left open (a watch
// restored and deleted before it reconciled), and clears the record. It
// needs the grant; without one (deleted, revoked) the runner's bounded
// give-up lets a deletion complete, and the channel expires by itself.
func (r *Reconciler) release(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run) runner.Outcome {
	// The channels are being stopped: the next one opened (on resume)
	// is the first again.
	r.opened.Forget(obj.UID)
	r.synced.Forget(obj.UID)
	st := &obj.Status
	sec, err := r.releasedSecret(ctx, obj)
	if err != nil {
		return runner.Transient(v1alpha1.SecretReadFailedReason, err)
	}
	var left []v1alpha1.ChannelStatus
	if sec != nil {
		left = leftOpen(obj, sec, run.Now)
	}
	if st.Channel != nil || st.PreviousChannel != nil || len(left) > 0 {
		if out := r.grant.Grant(ctx, obj, run); !out.IsContinue() {
			return out
		}
		if out := r.stopStatusChannels(ctx, obj, run); !out.IsContinue() {
			return out
		}
		var out runner.Outcome
		if left, out = r.stopLeftOpen(ctx, obj, run, sec); !out.IsContinue() {
			return out
		}
		status.Set(obj, v1alpha1.ChannelReadyCondition, metav1.ConditionFalse, v1alpha1.StoppedReason, "no push channel: the watch is suspended or being deleted")
	}
	if sec != nil {
		if err := r.recordChannels(ctx, obj, sec, left); err != nil {
			return runner.Transient(v1alpha1.SecretReadFailedReason, err)
		}
	}
	if len(left) > 0 {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, fmt.Errorf("stop channel %s: not stopped yet", left[0].ID))
	}
	return runner.Continue()
}

// releasedSecret is the channel Secret whose record release clears: nil
// when there is none, or when it is not the watch's (one a restore brought
// back is claimed, as ownChannelSecret claims it, so that its record is
// read).
func (r *Reconciler) releasedSecret(ctx context.Context, obj *v1alpha1.CalendarWatch) (*corev1.Secret, error) {
	var sec corev1.Secret
	err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: ChannelSecretName(obj.Name)}, &sec)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := r.claimChannelSecret(ctx, obj, &sec); errors.Is(err, oauth.ErrConnectSecretConflict) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &sec, nil
}

// stopStatusChannels stops the channels status names, each gone from
// status once stopped.
func (r *Reconciler) stopStatusChannels(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run) runner.Outcome {
	st := &obj.Status
	for _, ch := range []**v1alpha1.ChannelStatus{&st.PreviousChannel, &st.Channel} {
		c := *ch
		if c == nil {
			continue
		}
		if err := r.Calendar.Stop(ctx, grant.Of(run).Token, c.ID, c.ResourceID); err != nil {
			if errors.Is(err, gcalendar.ErrUnauthorized) {
				return r.grant.Reauth(obj, "StopChannel", err)
			}
			return runner.Transient(v1alpha1.UpstreamUnavailableReason, fmt.Errorf("stop channel %s: %w", c.ID, err))
		}
		r.event(obj, nil, corev1.EventTypeNormal, "ChannelStopped", "StopChannel", "stopped push channel "+c.ID)
		*ch = nil
	}
	return runner.Continue()
}
